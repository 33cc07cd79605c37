#!/usr/bin/env python3
"""The table of bench/shuffle_fault_netlab.sh, from its JSON lines.

For each run (label): goodput per host / B over the whole run (the shuffle's summary record);
for a run whose rate was changed (a "fault" record with its wall clock), the second of the
strategy at which the change came (from the strategy's start_epoch_s), goodput / B before it
(from second 5 on), goodput / (B after the change) from 10 s after it to the end, and how long
the pace took to follow: the seconds from the change until the 3-second moving average of the
hosts' mean goodput enters, and stays within, 10% of its level over the last 10 seconds.

usage: shuffle_fault_summary.py FILE.json [--labels L ...] [--at S]"""
import argparse
import json
import sys

from collections import defaultdict


def load(path):
    recs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    pass
    return recs


def follow_time(series, t_change, band=0.10):
    """Seconds after t_change until the 3-s moving average stays within band of the final
    level (mean of the last 10 s); None when it never settles."""
    if len(series) < t_change + 13:
        return None, None
    level = sum(series[-10:]) / 10.0
    avg = [sum(series[max(0, t - 2):t + 1]) / len(series[max(0, t - 2):t + 1])
           for t in range(len(series))]
    start = None
    for t in range(t_change, len(series)):
        if abs(avg[t] - level) <= band * level:
            if start is None:
                start = t
        else:
            start = None
    return (None if start is None else start - t_change), level


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
            seconds[(lab, r["strategy"])][r["t"]] = sum(hs) / len(hs)
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
        if f and sec:
            series = [sec[t] for t in sorted(sec)]
            tc = int(round(f["epoch_s"] - s["start_epoch_s"]))
            # the new rate, in the lab's units: read from the fault record
            sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/lab")
            from netlab.params import parse_rate
            newB = parse_rate(f["rate"]) / 8.0
            before = series[5:tc]
            after = series[tc + 10:]
            ft, level = follow_time(series, tc)
            row[3] = "%d" % tc
            row[4] = "%.3f" % (sum(before) / len(before) / B) if before else "-"
            row[5] = "%.3f" % (sum(after) / len(after) / newB) if after else "-"
            row[6] = "never" if ft is None else "%d" % ft
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
