#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The multi-site collectives' times against the number of connections n,
beside the source's formula (bench/sites_simgrid.sh writes the JSON).

For bcast and allreduce, each multi-site algorithm's time at each n
(labels ending in -n<N>), the source's bound L + M/min(n.B, W) + 2M/B
(L the WAN's one-way latency, B a NIC's rate, W the WAN's), the measured
time over it, and the model's prediction. The knee is the smallest n whose
time is within 5% of the best time of the sweep. Rows of other labels (the
model's own n, the baselines, the simulated MPI forced to an algorithm)
are listed after the sweep, with their ratio to the multi-site algorithm.

    sites_knee.py FILE --labels A,B,... --nic-bw 1Gbps --wan-bw 10Gbps --wan-lat 10ms
"""
import argparse
import os
import re
import sys

UNITS = {"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9}
TIME_UNITS = {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
KNEE_TOLERANCE = 1.05

sys.dont_write_bytecode = True      # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from wsp_report import jsonl  # noqa: E402


def rate(text):
    """A rate as the platform script takes it (1Gbps) in bytes/s."""
    m = re.fullmatch(r"([0-9.]+)([A-Za-z]+)", text)
    if not m or m.group(2).lower() not in UNITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate such as 1Gbps")
    return float(m.group(1)) * UNITS[m.group(2).lower()] / 8


def seconds(text):
    m = re.fullmatch(r"([0-9.]+)([a-z]+)", text)
    if not m or m.group(2) not in TIME_UNITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a latency such as 10ms")
    return float(m.group(1)) * TIME_UNITS[m.group(2)]


def formula(M, n, B, W, L):
    """The source's time of a multi-site bcast or allreduce over n connections."""
    return L + M / min(n * B, W) + 2 * M / B


def short(label, labels):
    """A label without the prefix all labels share and the trailing stamp."""
    prefix = os.path.commonprefix(labels)
    prefix = prefix[:prefix.rfind("-") + 1]
    return re.sub(r"-\d{14}$", "", label[len(prefix):]) or label


def load(path, labels):
    """The wsp-bench coll rows of the given labels."""
    return [r for r in jsonl.load([path], "coll", prog="sites_knee") if r.get("label") in labels]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--labels", required=True, help="comma-separated labels to read")
    ap.add_argument("--nic-bw", type=rate, required=True, help="a NIC's rate B, e.g. 1Gbps")
    ap.add_argument("--wan-bw", type=rate, required=True, help="the WAN's rate W, e.g. 10Gbps")
    ap.add_argument("--wan-lat", type=seconds, required=True,
                    help="the WAN's one-way latency L, e.g. 10ms")
    a = ap.parse_args(argv)
    labels = [x for x in a.labels.split(",") if x]
    rows = load(a.json, set(labels))
    if not rows:
        sys.exit(f"sites_knee.py: no rows of the labels {','.join(labels)} in {a.json}")
    B, W, L = a.nic_bw, a.wan_bw, a.wan_lat
    print(f"# B = {B * 8 / 1e9:g} Gbit/s, W = {W * 8 / 1e9:g} Gbit/s, L = {L * 1e3:g} ms; "
          f"W/B = {W / B:g}")
    for coll in ("bcast", "allreduce"):
        for size in sorted({r["bytes"] for r in rows if r["coll"] == coll}):
            sel = [r for r in rows if r["coll"] == coll and r["bytes"] == size]
            M = float(size)
            sweep = {}
            for r in sel:
                m = re.search(r"-n(\d+)-\d+$", r["label"])
                if m and r["alg"] in ("sites", "sites_chain"):
                    sweep.setdefault(r["alg"], {})[int(m.group(1))] = r
            print(f"\n## {coll} {size} B")
            for alg, by_n in sorted(sweep.items()):
                best = min(r["time_s"] for r in by_n.values())
                knee = min(n for n, r in by_n.items() if r["time_s"] <= KNEE_TOLERANCE * best)
                print(f"{alg}: knee at n = {knee} (first within 5% of the best, "
                      f"{best * 1e3:.1f} ms)")
                print(f"{'n':>3} {'time_ms':>9} {'formula_ms':>10} {'t/formula':>9} "
                      f"{'pred_ms':>8} {'t/pred':>6}")
                for n in sorted(by_n):
                    r = by_n[n]
                    f = formula(M, n, B, W, L)
                    pred = r.get("predicted_s")
                    ps = f"{pred * 1e3:8.1f} {r['time_s'] / pred:6.2f}" if pred else \
                        f"{'-':>8} {'-':>6}"
                    print(f"{n:3d} {r['time_s'] * 1e3:9.1f} {f * 1e3:10.1f} "
                          f"{r['time_s'] / f:9.2f} {ps}")
            others = [r for r in sel if not re.search(r"-n\d+-\d+$", r["label"])]
            if others:
                ref = next((r for r in others if r["alg"] == "sites"), None)
                print(f"{'run':<36} {'alg':<12} {'ran':<12} {'n':>3} {'time_ms':>9} "
                      f"{'t/sites':>7}")
                for r in others:
                    ratio = f"{r['time_s'] / ref['time_s']:7.2f}" if ref else f"{'-':>7}"
                    print(f"{short(r['label'], labels):<36} {r['alg']:<12} "
                          f"{str(r.get('ran') or '-'):<12} "
                          f"{r.get('wan_connections') or '-':>3} {r['time_s'] * 1e3:9.1f} "
                          f"{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
