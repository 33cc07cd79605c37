# SPDX-License-Identifier: BSD-3-Clause
"""The Python layer's own cost (docs/results/python.md): run under the launcher with the
wirespeed package installed (bench/python_layer.sh does both).

allreduce: the same MPI_SUM allreduce of doubles, three ways, in paired blocks (each block runs
every way once, in turn, so that drifts of a shared machine hit all alike; the median over
blocks is reported):
  wirespeed   comm.allreduce(a, out) of the package (argument checks, ctypes call, auto)
  ctypes      wsp_allreduce called through ctypes with everything prepared: the C library
              plus only the cost of one ctypes call
  mpi4py      MPI.COMM_WORLD.Allreduce(a, out): the MPI's own call, through mpi4py
A call's time is the slowest rank's mean over the block's back-to-back calls.

shuffle (--shuffle-seconds S > 0): for S seconds every rank posts small requests round robin
to the other ranks, then closes; the handlers are Python (the response is the request
repeated). Reported: requests answered per second per rank, and requests per Python call.

    mpirun -np 8 python bench/python_layer.py --json out.json --label openmpi
"""
import argparse
import ctypes
import json
import statistics
import sys
import time

import numpy as np
from mpi4py import MPI

import wirespeed
from wirespeed import _lib

WORLD = MPI.COMM_WORLD


def size_arg(text):
    n = ctypes.c_size_t()
    if _lib.lib.wsp_parse_size(text.encode(), ctypes.byref(n)) != 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size")
    return n.value


def timed(fn, iters):
    WORLD.Barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    dt = (time.perf_counter() - t0) / iters
    return WORLD.allreduce(dt, op=MPI.MAX)


def allreduce_rows(comm, sizes, blocks, budget):
    rows = []
    for nbytes in sizes:
        count = max(1, nbytes // 8)
        a = np.full(count, 1.0 + WORLD.rank)
        out = np.empty_like(a)
        ref = np.empty_like(a)
        WORLD.Allreduce(a, ref)
        c, t = comm._ptr("bench"), _lib.handle(MPI.DOUBLE)
        op = _lib.handle(MPI.SUM)
        sa, so = a.ctypes.data, out.ctypes.data
        raw = _lib.lib.wsp_allreduce
        ways = {
            "wirespeed": lambda: comm.allreduce(a, out),
            "ctypes": lambda: raw(c, sa, so, count, t, op),
            "mpi4py": lambda: WORLD.Allreduce(a, out),
        }
        # Check each way once, and size the blocks: iterations that take about `budget` s.
        for name, fn in ways.items():
            out[:] = 0
            fn()
            if not np.array_equal(out, ref):
                sys.exit(f"python_layer: {name} gave a wrong result at {nbytes} bytes")
        one = max(timed(ways["mpi4py"], 3), 1e-7)
        iters = int(WORLD.bcast(max(3, min(100000, budget / one))))
        times = {k: [] for k in ways}
        for _ in range(blocks):
            for name, fn in ways.items():
                times[name].append(timed(fn, iters))
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append({"bench": "python_layer", "what": "allreduce", "bytes": count * 8,
                     "p": WORLD.size, "iters": iters, "blocks": blocks,
                     "seconds": med, "alg": comm.select("allreduce", count * 8)})
    return rows


def shuffle_row(comm, seconds, req_bytes, fold):
    me, p = comm.rank, comm.size

    def on_requests(source, requests):
        return [bytes(r) * fold for r in requests]

    got = [0, 0]

    def on_responses(dest, requests, responses):
        got[0] += len(responses)
        got[1] += sum(len(r) for r in responses)

    body = bytes(req_bytes)
    WORLD.Barrier()
    t0 = time.perf_counter()
    sh = comm.shuffle(on_requests, on_responses)
    k = 0
    while time.perf_counter() - t0 < seconds:
        for _ in range(64):
            k += 1
            dest = (me + 1 + k % (p - 1)) % p if p > 1 else me
            sh.post(dest, body)
    st = sh.close()
    dt = time.perf_counter() - t0
    sh.free()
    rates = WORLD.allgather(got[0] / dt)
    calls = WORLD.allreduce(sh.calls["on_requests"] + sh.calls["on_responses"])
    handled = WORLD.allreduce(st["requests_served"] + st["responses_handled"])
    return {"bench": "python_layer", "what": "shuffle", "p": p, "req_bytes": req_bytes,
            "resp_bytes": req_bytes * fold, "seconds": dt,
            "requests_per_s_per_rank": statistics.mean(rates),
            "requests_per_s_min_rank": min(rates),
            "items_per_python_call": handled / max(calls, 1),
            "bytes_ok": WORLD.allreduce(int(got[1] != got[0] * req_bytes * fold)) == 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="8,16M",
                    help="allreduce sizes in bytes, comma list (default %(default)s)")
    ap.add_argument("--blocks", type=int, default=15, help="paired blocks (default 15)")
    ap.add_argument("--budget", type=float, default=0.2,
                    help="seconds of calls per way and block (default 0.2)")
    ap.add_argument("--shuffle-seconds", type=float, default=0.0,
                    help="seconds of shuffle posting (default 0: no shuffle run)")
    ap.add_argument("--req-bytes", type=int, default=16, help="shuffle request size")
    ap.add_argument("--fold", type=int, default=4, help="response = fold x request")
    ap.add_argument("--json", help="append JSON lines here (rank 0)")
    ap.add_argument("--label", default="", help="stored in the JSON")
    a = ap.parse_args()
    try:
        sizes = [size_arg(s) for s in a.sizes.split(",") if s]
    except argparse.ArgumentTypeError as e:
        ap.error(f"--sizes: {e}")
    if a.blocks < 1 or a.budget <= 0 or a.req_bytes < 1 or a.fold < 1:
        ap.error("--blocks, --budget, --req-bytes and --fold must be positive")
    comm = wirespeed.Comm(WORLD)
    rows = allreduce_rows(comm, sizes, a.blocks, a.budget) if sizes else []
    if a.shuffle_seconds > 0:
        rows.append(shuffle_row(comm, a.shuffle_seconds, a.req_bytes, a.fold))
    comm.free()
    if WORLD.rank != 0:
        return
    lib = wirespeed.BUILD_INFO.split(";")[1].strip()
    print(f"# python_layer: p = {WORLD.size}, {lib}, {MPI.Get_library_version().splitlines()[0]}")
    for r in rows:
        r["label"] = a.label
        if r["what"] == "allreduce":
            s = r["seconds"]
            print(f"allreduce {r['bytes']:>10} B ({r['alg']}): wirespeed {s['wirespeed'] * 1e6:10.1f} us"
                  f"  ctypes {s['ctypes'] * 1e6:10.1f} us  mpi4py {s['mpi4py'] * 1e6:10.1f} us"
                  f"  wirespeed/ctypes {s['wirespeed'] / s['ctypes']:.2f}"
                  f"  wirespeed/mpi4py {s['wirespeed'] / s['mpi4py']:.2f}")
        else:
            print(f"shuffle {r['req_bytes']} B -> {r['resp_bytes']} B: "
                  f"{r['requests_per_s_per_rank']:.0f} requests/s per rank (slowest "
                  f"{r['requests_per_s_min_rank']:.0f}), {r['items_per_python_call']:.1f} "
                  f"requests or responses per Python call, bytes ok {r['bytes_ok']}")
    if a.json:
        with open(a.json, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    print("# python_layer: finished", flush=True)


if __name__ == "__main__":
    main()
