#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The table of bench/shuffle_fault_netlab.sh, from its JSON lines.

For each run (label): goodput per host / B over the whole run (the shuffle's summary record);
for a run whose rate was changed (a "fault" record with the wall clock of the change), the
second of the strategy at which the change came (from the strategy's start_epoch_ms), goodput /
B before it (from second 5 on), goodput / (B after the change) from 10 s after it to the end,
and how long the pace took to follow: the seconds from the change until the ranks' mean pacing
rate first comes down to within 15% of the goodput the new link delivers.

usage: shuffle_fault_summary.py FILE.json [--labels L ...] [--at S]"""
import argparse
import os
import sys

from collections import defaultdict

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from wsp_report import jsonl  # noqa: E402


def load(path):
    # A rank killed by the fault may leave its last line cut short.
    return jsonl.load([path], prog="shuffle_fault_summary", skip_bad=True)


def follow_time(pace, goodput, t_change, margin=1.15):
    """Seconds from t_change until the mean pacing rate first comes down to within `margin`
    of the goodput the network delivers after the change (its mean from 10 s after the change
    to the end): how long the requesters keep asking for more than the new link carries.
    None when it never does."""
    after = goodput[t_change + 10:]
    if not after:
        return None
    level = sum(after) / len(after)
    for t in range(t_change, len(pace)):
        if pace[t] is not None and pace[t] <= margin * level:
            return t - t_change
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json")
    ap.add_argument("--labels", nargs="*", help="runs to show (default: every label)")
    ap.add_argument("--at", type=float, help="(unused: the change is read from the data)")
    a = ap.parse_args()
    recs = load(a.json)
    seconds = defaultdict(dict)
    summary, fault = {}, {}
    for r in recs:
        lab = r.get("label")
        if r.get("bench") == "shuffle-fault" and r.get("kind") == "fault":
            fault[lab] = r
        elif r.get("bench") == "shuffle" and r.get("kind") == "summary":
            summary[(lab, r["strategy"])] = r
        elif r.get("bench") == "shuffle" and r.get("kind") == "second":
            hs = r["goodput_host_Bps"]
            seconds[(lab, r["strategy"])][r["t"]] = (sum(hs) / len(hs), r.get("rate_mean_Bps"))
    labels = a.labels or sorted({k[0] for k in summary})
    print("| run | strategy | goodput / B (whole run) | change at (s) | before: / B | "
          "after: / new B | pace followed within (s) |")
    print("|---|---|---|---|---|---|---|")
    for (lab, sgy), s in sorted(summary.items(), key=lambda kv: labels.index(kv[0][0])
                                if kv[0][0] in labels else 1e9):
        if lab not in labels:
            continue
        B = s["link_Bps"]
        row = [lab, sgy, "%.3f" % s["frac_B_mean"], "", "", "", ""]
        f = fault.get(lab)
        sec = seconds[(lab, sgy)]
        if f and sec and "start_epoch_ms" not in s:
            # Older files kept only start_epoch_s, which is not the strategy's
            # start on the fault's clock: the change cannot be placed.
            row[3] = "n/a (no start_epoch_ms)"
        elif f and sec:
            series = [sec[t][0] for t in sorted(sec)]
            pace = [sec[t][1] for t in sorted(sec)]
            tc = int(f.get("epoch_done_s", f["epoch_s"]) - s["start_epoch_ms"] / 1e3)
            # the new rate, in the lab's units: read from the fault record
            sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/lab")
            from netlab.params import parse_rate
            newB = parse_rate(f["rate"]) / 8.0
            before = series[5:tc]
            after = series[tc + 10:]
            ft = follow_time(pace, series, tc)
            row[3] = "%d" % tc
            row[4] = "%.3f" % (sum(before) / len(before) / B) if before else "-"
            row[5] = "%.3f" % (sum(after) / len(after) / newB) if after else "-"
            row[6] = "never" if ft is None else "%d" % ft
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
