#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables of bench/python_layer.sh's JSON lines (docs/results/python.md).

    python3 bench/python_layer_summary.py results/python-layer.json [STAMP]

allreduce: time per call through the package (wirespeed), ctypes alone, mpi4py, and from C
(wsp-bench coll: auto and the MPI's call), per MPI and rank count. shuffle: requests answered
per second per rank with Python handlers against C handlers (wsp-bench shuffle). Only the rows
whose label ends with STAMP when it is given (one run of the script).
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from wsp_report import jsonl  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    stamp = sys.argv[2] if len(sys.argv) > 2 else ""
    rows = jsonl.load([sys.argv[1]], prog="python_layer_summary")
    rows = [r for r in rows if r.get("label", "").endswith(stamp)]
    c_coll = {}
    c_shuffle = {}
    for r in rows:
        mpi = r["label"].split("-")[0]
        if r.get("bench") == "coll" and r.get("kind", "row") != "summary":
            c_coll[(mpi, r["p"], r["bytes"], r["alg"])] = r["time_s"]
        elif r.get("bench") == "shuffle" and r.get("kind") == "summary":
            c_shuffle[(mpi, r["p"])] = r["requests"] / r["finished_s"] / r["p"]
    print("| MPI | ranks | bytes | wirespeed (us) | ctypes (us) | mpi4py (us) | C auto (us) | "
          "C MPI (us) | wirespeed / mpi4py | wirespeed / C auto | Python layer (us) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r.get("bench") != "python_layer" or r["what"] != "allreduce":
            continue
        mpi = r["label"].split("-")[0]
        s = {k: v * 1e6 for k, v in r["seconds"].items()}
        ca = c_coll.get((mpi, r["p"], r["bytes"], "auto"))
        cm = c_coll.get((mpi, r["p"], r["bytes"], "mpi"))
        fmt = (lambda x: f"{x * 1e6:.1f}" if x is not None else "-")
        print(f"| {mpi} | {r['p']} | {r['bytes']} | {s['wirespeed']:.1f} | {s['ctypes']:.1f} | "
              f"{s['mpi4py']:.1f} | {fmt(ca)} | {fmt(cm)} | "
              f"{s['wirespeed'] / s['mpi4py']:.2f} | "
              f"{(s['wirespeed'] / (ca * 1e6)) if ca else float('nan'):.2f} | "
              f"{s['wirespeed'] - s['ctypes']:.1f} |")
    print()
    print("| MPI | ranks | request -> response | Python handlers (requests/s/rank) | "
          "C handlers (requests/s/rank) | C / Python | requests per Python call |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for r in rows:
        if r.get("bench") != "python_layer" or r["what"] != "shuffle":
            continue
        mpi = r["label"].split("-")[0]
        c = c_shuffle.get((mpi, r["p"]))
        py = r["requests_per_s_per_rank"]
        print(f"| {mpi} | {r['p']} | {r['req_bytes']} B -> {r['resp_bytes']} B | {py:.0f} | "
              f"{c:.0f} | {c / py:.1f} | {r['items_per_python_call']:.0f} |" if c else
              f"| {mpi} | {r['p']} | {r['req_bytes']} B | {py:.0f} | - | - | "
              f"{r['items_per_python_call']:.0f} |")


if __name__ == "__main__":
    main()
