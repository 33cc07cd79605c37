#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""netlab's delay line holds what it promises (netlab up --delay/--jitter/--loss, twosite's
--wan-delay), measured with netlab calibrate's ping and one-flow tests and with iperf3:
  - ping's round trip between two hosts = 2 x delay + the lab's own (measured just before on the
    same lab without the line), within 3%, at 1, 10 and 100 ms, and within 10% at 0.5 ms; across twosite's WAN, 2 x the WAN's delay the same way;
  - without --jitter it adds under 0.2 ms to the spread of round trips (p90 - p10, at 1 ms,
    where ping prints them to 10 us);
    with --jitter 2ms the spread grows past 1 ms (the option takes effect);
  - it carries at least 5 x 100 Mbit/s (iperf3 -P 8 at zero delay, unshaped);
  - one TCP flow whose window is clamped to W gets W / RTT within 10%;
  - one cubic flow at 1% loss and a 20 ms round trip gets between 0.57 and 1.34 of Mathis et
    al.'s MSS / RTT x 1.22 / sqrt(p). The band is the model's constant over its published range
    (0.87 with delayed ACKs to 1.31 with random loss), widened by a quarter for a run of a few
    seconds; it was set from the model, not from this lab's results (docs/netlab.md).
  - nothing is left behind: no namespace, link or delay-line process.
A figure outside its bound is measured once more before it fails: a busy machine can delay a
wake-up, and a mistake shows in both measurements. Runtime ~70 s."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labutil import cleanup, conclude, lab_name, machine_objects, netlab, require_lab

MS = 1e-3


def calib(name, only, *extra):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        p = netlab("calibrate", "--name", name, "--only", only, "--json", f.name, *extra,
                   timeout=180)
        print(p.stdout, flush=True)
        return {r["test"]: r for r in json.load(open(f.name))["results"]}


def rtt(name):
    return calib(name, "rtt")["rtt"]


def delayline_pids():
    p = subprocess.run(["pgrep", "-f", "/run/netlab/bin/delayline-"], stdout=subprocess.PIPE,
                       text=True)
    return set(p.stdout.split())


def iperf_p8(name):
    """iperf3 -P 8 h0 -> h1 for 3 s: bit/s received, and the delay line's CPU seconds."""
    st = json.load(open("/run/netlab/%s.json" % name))
    h0, h1 = st["hosts"][0], st["hosts"][1]
    pid = st["delayline"]["pid"]

    def cpu():
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    srv = subprocess.Popen(["ip", "netns", "exec", h1["ns"], "iperf3", "-s", "-1", "-p", "5202"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        c0 = cpu()
        p = subprocess.run(["ip", "netns", "exec", h0["ns"], "iperf3", "-c", h1["ip"], "-p",
                            "5202", "-P", "8", "-t", "3", "-O", "1", "-J"],
                           stdout=subprocess.PIPE, text=True, timeout=60)
        c1 = cpu()
        bps = json.loads(p.stdout)["end"]["sum_received"]["bits_per_second"]
        return bps, c1 - c0
    finally:
        srv.kill()
        srv.wait()


def main():
    require_lab(("iperf3", "ethtool", "cc", "ping"))
    name = lab_name("dl")
    before = machine_objects()
    pids_before = delayline_pids()
    t0 = time.time()
    errors = []
    try:
        # The line's ceiling, at zero delay.
        netlab("up", "cluster", "--name", name, "--hosts", "2", "--link-rate", "10gbit",
               "--delay", "0")
        bps, cpu = iperf_p8(name)
        if bps < 5 * 100e6:
            print("ceiling %.0f Mbit/s, measuring again" % (bps / 1e6), flush=True)
            bps, cpu = iperf_p8(name)
        print("ceiling: iperf3 -P 8 %.0f Mbit/s through the line, which used %.2f CPU-s in "
              "the run of 4 s" % (bps / 1e6, cpu))
        if bps < 5 * 100e6:
            errors.append("the delay line carried %.0f Mbit/s < 500" % (bps / 1e6))
        netlab("down", "--name", name)

        # 3% as asked at 1, 10 and 100 ms; 10% at 0.5 ms, where the lab's own round trip
        # (tens of microseconds) is not small beside the bound.
        for d_ms, tol in ((0.5, 0.10), (1, 0.03), (10, 0.03), (100, 0.03)):
            for attempt in (0, 1):
                # The lab's own round trip (no delay line) just before, since it moves by
                # tens of microseconds with how busy the machine is.
                netlab("up", "cluster", "--name", name, "--hosts", "2")
                base = rtt(name)
                netlab("down", "--name", name)
                netlab("up", "cluster", "--name", name, "--hosts", "2", "--delay", "%gms" % d_ms)
                r = rtt(name)
                added = r["median_ms"] - base["median_ms"]
                ok = abs(added - 2 * d_ms) <= tol * 2 * d_ms
                spread = (r["p90_ms"] - r["p10_ms"]) - (base["p90_ms"] - base["p10_ms"])
                ok_spread = d_ms != 1 or spread < 0.2
                if (ok and ok_spread) or attempt:
                    break
                print("delay %g ms: measuring again" % d_ms, flush=True)
                netlab("down", "--name", name)
            print("delay %g ms: round trip %.3f ms - %.3f ms = %.3f ms (expected %g, %+.1f%%), "
                  "spread added %.3f ms" % (d_ms, r["median_ms"], base["median_ms"], added,
                                            2 * d_ms, 100 * (added / (2 * d_ms) - 1), spread))
            if not ok:
                errors.append("delay %g ms: round trip adds %.3f ms, not %g within %d%%"
                              % (d_ms, added, 2 * d_ms, round(100 * tol)))
            if not ok_spread:
                errors.append("delay 1 ms without jitter: spread grew by %.3f ms >= 0.2"
                              % spread)
            if d_ms == 10:
                for attempt in (0, 1):
                    w = calib(name, "window", "--seconds", "3")["window"]["fraction"][0]
                    if 0.9 <= w <= 1.1 or attempt:
                        break
                if not 0.9 <= w <= 1.1:
                    errors.append("window-limited flow: %.3f of window/RTT" % w)
            netlab("down", "--name", name)

        netlab("up", "cluster", "--name", name, "--hosts", "2", "--delay", "10ms",
               "--jitter", "2ms")
        r = rtt(name)
        if r["p90_ms"] - r["p10_ms"] < 1.0:
            errors.append("--jitter 2ms: round trips spread only %.3f ms (p90 - p10)"
                          % (r["p90_ms"] - r["p10_ms"]))
        netlab("down", "--name", name)

        netlab("up", "cluster", "--name", name, "--hosts", "2", "--delay", "10ms",
               "--loss", "1%")
        for attempt in (0, 1):
            f = calib(name, "lossflow", "--seconds", "5")["lossflow"]["fraction"][0]
            if 0.57 <= f <= 1.34 or attempt:
                break
        print("one cubic flow at 1%% loss: %.3f of Mathis" % f)
        if not 0.57 <= f <= 1.34:
            errors.append("1%% loss: one flow got %.3f of Mathis's rate, outside [0.57, 1.34]"
                          % f)
        netlab("down", "--name", name)

        netlab("up", "twosite", "--name", name, "--hosts", "2")
        base = rtt(name)
        netlab("down", "--name", name)
        netlab("up", "twosite", "--name", name, "--hosts", "2", "--wan-delay", "5ms")
        r = rtt(name)
        added = r["median_ms"] - base["median_ms"]
        print("twosite WAN delay 5 ms: round trip adds %.3f ms (expected 10)" % added)
        if abs(added - 10) > 0.3:
            errors.append("twosite --wan-delay 5ms: round trip adds %.3f ms, not 10 within 3%%"
                          % added)
        netlab("down", "--name", name)
        left = delayline_pids() - pids_before
        if left:
            errors.append("delay-line processes left after down: %s" % " ".join(sorted(left)))
    finally:
        cleanup(name)
    return conclude(errors, before, name, "PASS (%.0fs)" % (time.time() - t0))


if __name__ == "__main__":
    sys.exit(main())
