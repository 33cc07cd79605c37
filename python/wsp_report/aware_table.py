# SPDX-License-Identifier: BSD-3-Clause
"""Tables of the trees built from a network map (bench/aware_simgrid.sh,
bench/aware_netlab.sh).

Reads `wsp-bench coll` JSON lines and prints, per platform and collective,
the time per call of wirespeed's binomial tree, any other algorithm the run
had (chain, say), the aware tree, auto and the MPI's collective, and the ratios of aware to the others; then per platform
the mean ratio aware/binomial below 64 KiB (the message for bcast and
reduce, one rank's block for gather and scatter) and the worst one anywhere.
- Without --labels: rows labelled simgrid-<platform><p>-<selector>
  (selector ompi: binomial, aware, auto and the MPI's collective, the
  "native" row, under SMPI's Open MPI selector; selector mpich: the MPI's
  collective under its MPICH selector). Simulated runs are deterministic.
- With --labels: each label is a platform, and its "mpi" rows the MPI's
  collective; --link-mbit adds aware's and the MPI's busbw over that rate.
Ratios only ever compare rows of one run.

    python3 python/wsp_report aware results/aware-simgrid.json --p 64
    python3 python/wsp_report aware results/aware-netlab.json --labels L --link-mbit 100
"""
import argparse
import collections
import sys

from .table import fmt_size, load

SMALL = 64 * 1024


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("--p", type=int, help="only rows of p ranks")
    ap.add_argument("--labels", help="comma-separated labels, each a platform")
    ap.add_argument("--link-mbit", type=float, help="with --labels: busbw over this rate")
    args = ap.parse_args(argv)
    labels = args.labels.split(",") if args.labels else None
    t = collections.defaultdict(dict)  # (platform, coll, per-edge size) -> column -> s
    bus = {}  # (platform, coll, size, column) -> busbw GB/s
    for r in load(args.json):
        label = r.get("label", "")
        if args.p and r["p"] != args.p:
            continue
        edge = r["block"] if r["coll"] in ("gather", "scatter") else r["bytes"]
        if labels is not None:
            if label not in labels:
                continue
            plat, col = label, r["alg"]
        else:
            if not label.startswith("simgrid-"):
                continue
            plat, sel = label[len("simgrid-"):].rsplit("-", 1)
            col = f"mpi-{sel}" if r["alg"] == "native" else r["alg"]
            if sel != "ompi" and r["alg"] != "native":
                continue
        t[(plat, r["coll"], edge)][col] = r["time_s"]
        bus[(plat, r["coll"], edge, col)] = r["busbw_GBps"]
    if not t:
        sys.exit("wirespeed-report aware: no matching rows")
    cols = ["binomial", "aware", "auto"] + (["mpi"] if labels else ["mpi-ompi", "mpi-mpich"])
    # Other algorithms the run was given (chain, for paths), after binomial.
    seen = {c for row in t.values() for c in row}
    cols[1:1] = sorted(seen - set(cols))
    link = args.link_mbit * 1e6 / 8 / 1e9 if args.link_mbit and labels else None
    summary = collections.defaultdict(list)
    for plat in sorted({k[0] for k in t}):
        for coll in ("bcast", "reduce", "gather", "scatter"):
            keys = sorted(k for k in t if k[0] == plat and k[1] == coll)
            if not keys:
                continue
            unit = "block" if coll in ("gather", "scatter") else "bytes"
            what = "us per call" if labels else "simulated us per call"
            print(f"\n**{plat}, {coll}** ({what}; ratios: aware / other)\n")
            extra = " aware busbw/B | mpi busbw/B |" if link else ""
            print(f"| {unit} | " + " | ".join(cols) + " | " +
                  " | ".join(f"aware/{c}" for c in cols if c != "aware") + " |" + extra)
            print("|---:|" + "---:|" * (2 * len(cols) - 1) + ("---:|---:|" if link else ""))
            for k in keys:
                row = t[k]
                cells = [f"{row[c] * 1e6:.1f}" if c in row else "-" for c in cols]
                ratios = []
                for c in (c for c in cols if c != "aware"):
                    if "aware" in row and c in row and row[c] > 0:
                        ratios.append(f"{row['aware'] / row[c]:.3f}")
                    else:
                        ratios.append("-")
                if link:
                    for c in ("aware", "mpi"):
                        b = bus.get((k[0], k[1], k[2], c))
                        ratios.append(f"{b / link:.3f}" if b is not None else "-")
                print(f"| {fmt_size(k[2])} | " + " | ".join(cells + ratios) + " |")
                if "aware" in row and row.get("binomial"):
                    summary[plat].append((k[2] < SMALL, row["aware"] / row["binomial"],
                                          row.get("auto", 0) / row["binomial"], coll, k[2]))
    print("\n| platform | mean aware/binomial below 64 KiB | worst aware/binomial | "
          "mean auto/binomial below 64 KiB | worst auto/binomial |")
    print("|---|---:|---:|---:|---:|")
    for plat, v in sorted(summary.items()):
        small = [x for x in v if x[0]]
        mean = sum(x[1] for x in small) / len(small) if small else float("nan")
        amean = sum(x[2] for x in small) / len(small) if small else float("nan")
        worst = max(v, key=lambda x: x[1])
        aworst = max(v, key=lambda x: x[2])
        print(f"| {plat} | {mean:.3f} | {worst[1]:.3f} ({worst[3]} {fmt_size(worst[4])}) | "
              f"{amean:.3f} | {aworst[2]:.3f} ({aworst[3]} {fmt_size(aworst[4])}) |")

