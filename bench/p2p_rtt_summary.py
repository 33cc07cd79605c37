#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The table of bench/p2p_rtt_netlab.sh: per condition (round trip, loss, buffers, MPI) and
message size, each method's rate as a fraction of the WAN (median over repetitions):
MPI_Send, wsp_striped_send with k lanes, auto (and the lanes it used), iperf3 -P k; and what
auto's probe measured (one lane, all lanes). iperf3 runs of --iperf-bytes (one message of the
size, cold connections) sit in their size's row; those of a fixed time in a row of their own.
Where both auto and iperf3 -P 8 moved the size, the last column is auto over iperf3 -P 8.

    python3 bench/p2p_rtt_summary.py results/p2p-rtt-netlab.json [--markdown]
"""
import argparse
import json
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="wsp-bench p2p JSON lines")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    a = ap.parse_args()
    rows = {}
    setup = {}
    ks = set()
    for line in open(a.json):
        line = line.strip()
        if not line:
            continue
        try:
            j = json.loads(line)
        except ValueError:
            sys.exit("p2p_rtt_summary: %s: a line is not JSON" % a.json)
        label = j.get("label", "")
        if j.get("kind") == "setup" and j.get("lanes") == "auto":
            setup[label] = j
            continue
        if j.get("kind") not in ("transfer", "iperf") or "frac_link" not in j:
            continue
        if j["method"] == "mpi":
            col = "MPI_Send"
        elif j["method"] == "iperf":
            col = "iperf3 -P %d" % j["lanes"]
        else:
            col = "k=%s" % j["lanes"]
            if j["lanes"] != "auto":
                ks.add(j["lanes"])
        if j["method"] != "iperf":
            size = j.get("bytes", 0)
        else:
            size = j.get("size", "iperf")
        rows.setdefault((label, size), {})[col] = (j["frac_link"], j.get("lanes_used"))
    cols = (["MPI_Send"] + ["k=%d" % k for k in sorted(ks)] + ["k=auto"] +
            ["iperf3 -P %d" % k for k in sorted(ks)])

    def key(item):
        label, size = item
        m = re.search(r"rtt(\d+)ms-loss([0-9.]+)-(\w+)-(\w+)(?:-tuned-(\w+))?$", label)
        cond = ((m.group(4), m.group(3), int(m.group(1)), float(m.group(2)), m.group(5) or "")
                if m else (label,))
        return cond, 1 if size == "iperf" else 0, size if size != "iperf" else 0

    head = ["condition", "size"] + cols + ["auto: 1 lane / all (Mbit/s)", "auto / iperf3 -P 8"]
    lines = []
    for item in sorted(rows, key=key):
        label, size = item
        r = rows[item]
        cells = []
        for c in cols:
            v = r.get(c)
            if v is None:
                cells.append("")
            elif c == "k=auto":
                cells.append("%.3f (%s)" % (v[0], v[1]))
            else:
                cells.append("%.3f" % v[0])
        s = setup.get(label)
        probe = ("%.1f / %.1f" % (s["rate_one_Bps"] * 8e-6, s["rate_lanes_Bps"] * 8e-6)
                 if s and size != "iperf" else "")
        cond = label.replace("netlab-twosite-", "")
        what = "%d MiB" % (size >> 20) if size != "iperf" else "fixed time"
        auto, p8 = r.get("k=auto"), r.get("iperf3 -P 8")
        vs = "%.2f" % (auto[0] / p8[0]) if auto and p8 and p8[0] > 0 else ""
        lines.append([cond, what] + cells + [probe, vs])
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        w = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
        for l in [head] + lines:
            print("  ".join(str(x).ljust(n) for x, n in zip(l, w)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
