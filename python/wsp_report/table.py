# SPDX-License-Identifier: BSD-3-Clause
"""Markdown tables from `wsp-bench coll` JSON lines.

For each (label, collective) a table with one row per size and one column
per algorithm, holding busbw as a fraction of a link rate (--link-mbit) or
in GB/s, and the ratio to the plain MPI collective ("mpi" row of the same
run) in a second table. Rows from different labels (e.g. an Open MPI and an
MPICH run) are never mixed in one ratio: ratios come from one run.

    python3 python/wsp_report table results/coll-netlab.json --link-mbit 100
    python3 python/wsp_report table f.json --metric time --colls allreduce,bcast
    python3 python/wsp_report table f.json --auto-summary   (how often auto was fastest)
"""
import argparse
import collections
import sys

from . import jsonl


def load(paths):
    """The wsp-bench coll records of the files."""
    return jsonl.load(paths, "coll", prog="wirespeed-report table")


def fmt_size(b):
    for unit, k in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << k and b % (1 << k) == 0:
            return f"{b >> k}{unit}"
    return str(b)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="JSON lines written by wsp-bench coll --json")
    ap.add_argument("--link-mbit", type=float, default=0,
                    help="link rate B in Mbit/s: print busbw / B instead of GB/s")
    ap.add_argument("--metric", choices=["busbw", "time", "ratio"], default="busbw")
    ap.add_argument("--colls", default="", help="comma list of collectives to show")
    ap.add_argument("--labels", default="", help="comma list of labels to show")
    ap.add_argument("--auto-summary", action="store_true",
                    help="per label and collective: how often auto ran the fastest "
                         "algorithm, and its worst time / fastest time")
    a = ap.parse_args(argv)
    rows = load(a.json)
    if not rows:
        sys.exit("no wsp-bench coll rows in the input")
    colls = set(filter(None, a.colls.split(",")))
    labels = set(filter(None, a.labels.split(",")))
    groups = collections.OrderedDict()
    for r in rows:
        if (colls and r["coll"] not in colls) or (labels and r.get("label", "") not in labels):
            continue
        groups.setdefault((r.get("label", ""), r["coll"], r["p"]), []).append(r)
    for (label, coll, p), rs in groups.items():
        algs = []
        for r in rs:
            if r["alg"] not in algs:
                algs.append(r["alg"])
        sizes = sorted({r["bytes"] for r in rs})
        cell = {(r["bytes"], r["alg"]): r for r in rs}
        if a.auto_summary:
            hits = total = 0
            vs_mpi = []
            worst = (1.0, None)
            for s in sizes:
                # A forced row whose preconditions failed ran its fallback:
                # it counts as that algorithm ("ran").
                # auto chooses among wirespeed's algorithms ("native", the
                # MPI library's own, has no modelled cost): compare with the
                # fastest of those, and separately with the MPI library.
                cand = [cell[(s, x)] for x in algs
                        if (s, x) in cell and x not in ("auto", "mpi", "native")
                        and cell[(s, x)].get("ran", x) == x]
                if not cand or (s, "auto") not in cell:
                    continue
                best = min(cand, key=lambda r: r["time_s"])
                au = cell[(s, "auto")]
                total += 1
                hits += au.get("chosen") == best["alg"]
                loss = au["time_s"] / best["time_s"]
                if (s, "mpi") in cell:
                    vs_mpi.append(cell[(s, "mpi")]["time_s"] / au["time_s"])
                if loss > worst[0]:
                    worst = (loss, f"{fmt_size(s)}: auto ran {au.get('chosen')}, "
                                   f"fastest {best['alg']}")
            print(f"{label} {coll} p={p}: auto chose the fastest in {hits}/{total} sizes; "
                  f"worst auto/fastest = {worst[0]:.2f}" + (f" ({worst[1]})" if worst[1] else "")
                  + (f"; t_mpi/t_auto from {min(vs_mpi):.2f} to {max(vs_mpi):.2f}" if vs_mpi else ""))
            continue
        unit = {"busbw": "busbw / B" if a.link_mbit else "busbw GB/s",
                "time": "time per call (s)", "ratio": "t_mpi / t_alg"}[a.metric]
        print(f"\n### {coll}, p = {p}, {label} ({unit})\n")
        print("| size | " + " | ".join(algs) + " |")
        print("|---" * (len(algs) + 1) + "|")
        for s in sizes:
            out = []
            for x in algs:
                r = cell.get((s, x))
                if r is None:
                    out.append("")
                    continue
                if a.metric == "time":
                    v = f"{r['time_s']:.3g}"
                elif a.metric == "ratio":
                    v = f"{r.get('ratio_to_mpi', float('nan')):.2f}"
                elif a.link_mbit:
                    v = f"{r['busbw_GBps'] * 8e3 / a.link_mbit:.2f}"
                else:
                    v = f"{r['busbw_GBps']:.3g}"
                if x == "auto" and r.get("chosen"):
                    v += f" ({r['chosen']})"
                out.append(v)
            print(f"| {fmt_size(s)} | " + " | ".join(out) + " |")

