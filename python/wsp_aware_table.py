#!/usr/bin/env python3
"""Tables of the trees built from a network map (bench/aware_simgrid.sh).

Reads `wsp-bench coll` JSON lines labelled simgrid-<platform><p>-<selector>
(selector ompi: wirespeed's binomial, aware, auto and the MPI's collective
under SMPI's Open MPI selector; selector mpich: the MPI's collective under
its MPICH selector) and prints, per platform and collective, the simulated
time of each and the ratios of aware to the others, then per platform the
mean ratio aware/binomial below 64 KiB (the message for bcast and reduce,
one rank's block for gather and scatter) and the worst one anywhere.
Simulated runs are deterministic: every figure comes from one run.

    python3 python/wsp_aware_table.py results/aware-simgrid.json --p 64
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wsp_table import fmt_size, load  # noqa: E402

SMALL = 64 * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("--p", type=int, help="only rows of p ranks")
    args = ap.parse_args()
    t = collections.defaultdict(dict)  # (platform, coll, per-edge size) -> column -> s
    for r in load(args.json):
        label = r.get("label", "")
        if not label.startswith("simgrid-") or (args.p and r["p"] != args.p):
            continue
        plat, sel = label[len("simgrid-"):].rsplit("-", 1)
        edge = r["block"] if r["coll"] in ("gather", "scatter") else r["bytes"]
        col = f"mpi-{sel}" if r["alg"] == "native" else r["alg"]
        if sel != "ompi" and r["alg"] != "native":
            continue
        t[(plat, r["coll"], edge)][col] = r["time_s"]
    if not t:
        sys.exit("wsp_aware_table: no simgrid-* rows" + (f" at p = {args.p}" if args.p else ""))
    cols = ["binomial", "aware", "auto", "mpi-ompi", "mpi-mpich"]
    summary = collections.defaultdict(list)
    for plat in sorted({k[0] for k in t}):
        for coll in ("bcast", "reduce", "gather", "scatter"):
            keys = sorted(k for k in t if k[0] == plat and k[1] == coll)
            if not keys:
                continue
            unit = "block" if coll in ("gather", "scatter") else "bytes"
            print(f"\n**{plat}, {coll}** (simulated us per call; ratios: aware / other)\n")
            print(f"| {unit} | " + " | ".join(cols) + " | aware/binomial | aware/auto | "
                  "aware/mpi-ompi | aware/mpi-mpich |")
            print("|---:|" + "---:|" * (len(cols) + 4))
            for k in keys:
                row = t[k]
                cells = [f"{row[c] * 1e6:.1f}" if c in row else "-" for c in cols]
                ratios = []
                for c in ("binomial", "auto", "mpi-ompi", "mpi-mpich"):
                    if "aware" in row and c in row and row[c] > 0:
                        ratios.append(f"{row['aware'] / row[c]:.3f}")
                    else:
                        ratios.append("-")
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


if __name__ == "__main__":
    main()
