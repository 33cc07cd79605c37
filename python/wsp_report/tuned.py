# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed beside the MPI in every job of a tuning run (bench/cloud_netlab.sh): each job runs
wirespeed's auto and the MPI's own call under one setting of the MPI (its defaults, or a hand
tuning), so every ratio divides two times of one job. Prints one table row per job and
collective, then per MPI and collective the ratio to the MPI's default call and to its best
hand-tuned call (the job whose MPI call ran fastest)."""
import argparse
from typing import List, Optional

from . import jsonl


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("json", nargs="+", help="JSON lines of wsp-bench coll")
    ap.add_argument("--link-mbit", type=float, required=True,
                    help="the NIC rate B in Mbit/s; busbw is shown as a fraction of it")
    ap.add_argument("--labels", required=True,
                    help="comma list of the jobs' labels, in the order they ran; a label is "
                    "MPI-SETTING-STAMP, and MPI-default-STAMP is the job at the MPI's defaults")
    ap.add_argument("--stamp", required=True, help="the run's stamp, the labels' last part")
    args = ap.parse_args(argv)
    if args.link_mbit <= 0:
        ap.error("--link-mbit must be above 0")
    want = [l for l in args.labels.split(",") if l]
    stamp = args.stamp
    B = args.link_mbit * 1e6 / 8
    rows = {}
    for r in jsonl.load(args.json, bench="coll"):
        if r.get("label") in want:
            rows[(r["label"], r["coll"], r["size"], r["alg"])] = r

    def frac(r):
        return r["busbw_GBps"] * 1e9 / B

    def short(label):
        return label[:-len(stamp) - 1]

    print("\n| job | collective | size | wirespeed busbw / B (ran) | MPI busbw / B | wirespeed / MPI |")
    print("|---|---|---|---|---|---|")
    for (l, c, s, a), r in sorted(rows.items(),
                                  key=lambda kv: (kv[0][1], kv[0][2], want.index(kv[0][0]))):
        m = rows.get((l, c, s, "mpi"))
        if a != "auto" or m is None:
            continue
        print(f"| {short(l)} | {c} | {s} | {frac(r):.3f} ({r['ran']}) | {frac(m):.3f} | "
              f"{m['time_s'] / r['time_s']:.2f} |")
    print("\nsummary: wirespeed against each MPI's default call and its best hand-tuned call (the "
          "job\nwhose MPI call ran fastest); each ratio divides two times of one job")
    for mpi in sorted({l.split("-", 1)[0] for l in want}):
        for c, s in sorted({(k[1], k[2]) for k in rows if k[0].startswith(mpi + "-")}):
            jobs = [k[0] for k in rows if k[0].startswith(mpi + "-") and k[1:] == (c, s, "mpi")
                    and (k[0], c, s, "auto") in rows]
            if not jobs:
                continue
            line = f"  {mpi} {c} {s}:"
            d = f"{mpi}-default-{stamp}"
            if d in jobs:
                a, m = rows[(d, c, s, "auto")], rows[(d, c, s, "mpi")]
                line += (f" defaults: wirespeed {frac(a):.3f} B ({a['ran']}), MPI {frac(m):.3f} B"
                         f" -> {m['time_s'] / a['time_s']:.2f}x;")
            best = max(jobs, key=lambda l: rows[(l, c, s, "mpi")]["busbw_GBps"])
            a, m = rows[(best, c, s, "auto")], rows[(best, c, s, "mpi")]
            line += (f" best tuning {short(best)[len(mpi) + 1:]}: MPI {frac(m):.3f} B, wirespeed "
                     f"{frac(a):.3f} B -> {m['time_s'] / a['time_s']:.2f}x")
            print(line)
    return 0
