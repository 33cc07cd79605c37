# SPDX-License-Identifier: BSD-3-Clause
"""Heat maps of a wirespeed network map (the JSON file wsp-probe writes).

Two panels over the nodes: one-way latency (microseconds) and bandwidth
(Mbit/s = 1e6 bit/s, from the inverse bandwidth), every pair of nodes off
the diagonal and each node's own pair on it (blank where a node holds one
rank). Lines mark the borders of the groups the probe found.

    /usr/bin/python3 python/wsp_report netmap netmap.json --out netmap.png

Needs matplotlib (Debian: apt install python3-matplotlib).
"""
import argparse
import json
import math
import sys


def matrices(doc):
    n = doc["nodes"]
    lat = [[math.nan] * n for _ in range(n)]
    bw = [[math.nan] * n for _ in range(n)]

    def put(a, b, f):
        lat[a][b] = lat[b][a] = f["latency_s"] * 1e6
        bw[a][b] = bw[b][a] = 8e-6 / f["inv_bandwidth_s_per_byte"]

    for f in doc["intra"]:
        put(f["node"], f["node"], f)
    for f in doc["pairs"]:
        put(f["a"], f["b"], f)
    return lat, bw


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("map", help="the network map (JSON) wsp-probe wrote")
    ap.add_argument("--out", required=True, help="the PNG to write")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    try:
        with open(args.map) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"wirespeed-report netmap: {args.map}: {e}")
    if doc.get("format") != "wirespeed-netmap":
        sys.exit(f"wirespeed-report netmap: {args.map} is not a wirespeed network map")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lat, bw = matrices(doc)
    n = doc["nodes"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    for ax, m, what, cmap in ((axes[0], lat, "one-way latency (us)", "viridis"),
                              (axes[1], bw, "bandwidth (Mbit/s)", "magma")):
        im = ax.imshow(m, cmap=cmap, interpolation="nearest")
        fig.colorbar(im, ax=ax, shrink=0.8)
        ax.set_title(what)
        ax.set_xlabel("node")
        ax.set_ylabel("node")
        groups = doc["groups"]
        for a in range(1, n):
            if groups[a] != groups[a - 1]:
                ax.axhline(a - 0.5, color="white", lw=1)
                ax.axvline(a - 0.5, color="white", lw=1)
    eager = doc["eager_limit"]
    fig.suptitle(args.title or
                 f"network map: {doc['p']} ranks on {n} nodes, {max(groups) + 1} group(s); "
                 f"eager up to {eager['intra_node']} B inside nodes, "
                 f"{eager['inter_node']} B between nodes")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wirespeed-report netmap: wrote {args.out}")

