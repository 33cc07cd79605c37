# SPDX-License-Identifier: BSD-3-Clause
"""Raw TCP measurements on a lab, the check that the lab and not the CPU is the limit:
iperf3 between hosts, netlab's own all-to-all flow helper (`_flow`, run inside each host
namespace), and `netlab calibrate`, which reports each as a fraction of its reference rate."""

import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time

from .base import (EXIT_ENV, EXIT_OK, EXIT_USAGE, LabError, json_out, kill_tree, run_cmd,
                   self_command)
from .params import fmt_rate

CALIBRATE_TESTS = ("pair", "pairk", "wan1", "wank", "wanall", "ring", "a2a", "rtt", "window",
                   "lossflow")
# What a one-flow test of a delayed lab clamps the receiver's window to (TCP_WINDOW_CLAMP), and
# the MSS of a lab's TCP segments (MTU 1500 less IP, TCP and timestamp headers).
WINDOW_DEFAULT = 65536
LAB_MSS = 1448

def flow_main(args):
    """Hidden helper run inside a host namespace: a TCP sink on --port and one sender thread
    per destination; counts bytes in the window [start+warmup, start+warmup+seconds]."""
    rx = [0]
    tx_counts = {}
    lock = threading.Lock()
    stop = threading.Event()
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.window_clamp:
        # A window of exactly that many bytes: TCP_WINDOW_CLAMP on the accepted socket, with
        # the receive buffer set (4 x the window) so that autotuning, which would raise the
        # clamp again, stays off. SO_RCVBUF alone (iperf3 -w) leaves the kernel to take a
        # varying share of the buffer as the window (docs/netlab.md).
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * args.window_clamp)
        srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, args.window_clamp)
    srv.bind(("0.0.0.0", args.port))
    srv.listen(256)
    srv.settimeout(0.2)

    def sink(conn):
        buf = bytearray(1 << 17)
        conn.settimeout(0.5)
        while not stop.is_set():
            try:
                k = conn.recv_into(buf)
            except socket.timeout:
                continue
            except OSError:
                break
            if k == 0:
                break
            with lock:
                rx[0] += k
        conn.close()

    def acceptor():
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            if args.window_clamp:
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, args.window_clamp)
            threading.Thread(target=sink, args=(c,), daemon=True).start()

    def sender(dst):
        data = b"\0" * (1 << 16)
        s = None
        while time.time() < args.start + 3:
            try:
                s = socket.create_connection((dst, args.port), timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        if s is None:
            tx_counts[dst] = -1
            return
        s.settimeout(0.5)
        while not stop.is_set():
            try:
                k = s.send(data)
            except socket.timeout:
                continue
            except OSError:
                break
            with lock:
                tx_counts[dst] = tx_counts.get(dst, 0) + k
        s.close()

    threading.Thread(target=acceptor, daemon=True).start()
    delay = args.start - time.time()
    if delay > 0:
        time.sleep(delay)
    dests = [d for d in args.dests.split(",") if d]
    for d in dests:
        threading.Thread(target=sender, args=(d,), daemon=True).start()
    time.sleep(max(0.0, args.start + args.warmup - time.time()))
    with lock:
        rx0, tx0 = rx[0], sum(v for v in tx_counts.values() if v > 0)
    t0 = time.time()
    time.sleep(args.seconds)
    with lock:
        rx1, tx1 = rx[0], sum(v for v in tx_counts.values() if v > 0)
    t1 = time.time()
    failed = [d for d, v in tx_counts.items() if v < 0] + [d for d in dests if d not in tx_counts]
    print(json.dumps({"rx_bps": (rx1 - rx0) * 8 / (t1 - t0), "tx_bps": (tx1 - tx0) * 8 / (t1 - t0),
                      "failed": failed}), flush=True)
    time.sleep(0.5)    # let peers finish their window before our sockets close
    stop.set()
    os._exit(0)


def measure_rtt(src, dst, count=100, interval=0.005):
    """ping's round trips from host src to host dst (state host entries): sorted list in ms,
    and how many were sent. ping, not a helper of ours: the kernel answers the echo without
    waking a process, which keeps the lab's own round trip small and steady."""
    if shutil.which("ping") is None:
        raise LabError("ping not found (iputils-ping): scripts/deps.sh lab", EXIT_ENV)
    # One ping first, so that the address is resolved: pings sent while ARP waits for its
    # answer (a round trip of the delayed lab) would wait with it.
    run_cmd(["ip", "netns", "exec", src["ns"], "ping", "-n", "-c", "1", "-W", "3", dst["ip"]],
            check=False, timeout=30)
    p = run_cmd(["ip", "netns", "exec", src["ns"], "ping", "-n", "-c", str(count), "-i",
                 "%g" % interval, "-W", "2", dst["ip"]], check=False,
                timeout=count * (interval + 2) + 30)
    rtts = sorted(float(m) for m in re.findall(r"time=([0-9.]+) ms", p.stdout))
    return rtts, count


def run_flows(st, plan, seconds, warmup=1.0, port=5301, window_clamp=0):
    """plan: {host_ns: [dst_ip, ...]}, every host listed runs a sink (its window clamped to
    window_clamp bytes if not 0). Returns {ns: result}."""
    start = time.time() + 1.0 + 0.05 * len(plan)
    procs = {}
    try:
        for ns, dests in plan.items():
            argv, env = self_command(
                "_flow", "--port", port, "--dests", ",".join(dests), "--start", repr(start),
                "--warmup", warmup, "--seconds", seconds,
                *(["--window-clamp", window_clamp] if window_clamp else []))
            procs[ns] = subprocess.Popen(
                ["ip", "netns", "exec", ns] + argv, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)
        res = {}
        for ns, p in procs.items():
            out, err = p.communicate(timeout=seconds + warmup + 30)
            try:
                res[ns] = json.loads(out.strip().splitlines()[-1])
            except (ValueError, IndexError):
                raise LabError("flow helper in %s failed: %s" % (ns, err.strip()))
        return res
    finally:
        for p in procs.values():
            if p.poll() is None:
                kill_tree(p)


class Iperf:
    def __init__(self, st):
        self.st = st
        self.servers = []
        if shutil.which("iperf3") is None:
            raise LabError("iperf3 not found", EXIT_ENV)

    def server(self, ns, port):
        p = subprocess.Popen(["ip", "netns", "exec", ns, "iperf3", "-s", "-1", "-p", str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        self.servers.append(p)

    def wait_listen(self, pairs, timeout=5.0):
        """pairs: [(ns, port)] -- wait until each iperf3 server listens."""
        deadline = time.time() + timeout
        for ns, port in pairs:
            while time.time() < deadline:
                out = run_cmd(["ip", "netns", "exec", ns, "ss", "-Hltn", "sport = :%d" % port],
                              check=False).stdout
                if out and out.strip():
                    break
                time.sleep(0.05)

    def clients(self, jobs, seconds, omit=1):
        """jobs: [(src_ns, dst_ip, port, streams)] started at once -> list of bit/s."""
        procs = []
        for src, dst, port, streams in jobs:
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", src, "iperf3", "-c", dst, "-p", str(port), "-t",
                 str(seconds), "-O", str(omit), "-P", str(streams), "-J", "--connect-timeout",
                 "3000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True))
        res = []
        try:
            for p in procs:
                out, err = p.communicate(timeout=seconds + omit + 30)
                try:
                    j = json.loads(out)
                    res.append(j["end"]["sum_received"]["bits_per_second"])
                except (ValueError, KeyError):
                    raise LabError("iperf3 failed: %s %s" % (out[-300:], err[-300:]))
        finally:
            for p in procs:
                if p.poll() is None:
                    kill_tree(p)
        return res

    def close(self):
        for p in self.servers:
            if p.poll() is None:
                kill_tree(p)
        self.servers = []

    def measure(self, jobs, seconds):
        """Start one server per (dst, port), then all clients at once."""
        try:
            ip_to_ns = {h["ip"]: h["ns"] for h in self.st["hosts"]}
            listen = []
            for src, dst, port, streams in jobs:
                self.server(ip_to_ns[dst], port)
                listen.append((ip_to_ns[dst], port))
            self.wait_listen(listen)
            return self.clients(jobs, seconds)
        finally:
            self.close()


def check_calibrate_args(args):
    """Usage errors of `calibrate`; returns the set of tests asked for (None: all)."""
    if args.seconds < 1:
        raise LabError("--seconds must be at least 1 (got %d)" % args.seconds, EXIT_USAGE)
    if args.streams is not None and args.streams < 1:
        raise LabError("--streams must be at least 1 (got %d)" % args.streams, EXIT_USAGE)
    if not args.only:
        return None
    only = set(args.only.split(","))
    bad = sorted(only - set(CALIBRATE_TESTS))
    if bad:
        raise LabError("--only: unknown test %s (tests: %s)"
                       % (", ".join(map(repr, bad)), ",".join(CALIBRATE_TESTS)), EXIT_USAGE)
    return only


def rtt_summary(rtts, sent):
    """median, p10, p90, min, max (ms) and the share lost of a sorted list of round trips."""
    if not rtts:
        raise LabError("no ping came back (%d sent)" % sent)
    k = len(rtts)
    return {"median_ms": rtts[k // 2] if k % 2 else (rtts[k // 2 - 1] + rtts[k // 2]) / 2,
            "p10_ms": rtts[k // 10], "p90_ms": rtts[(9 * k) // 10], "min_ms": rtts[0],
            "max_ms": rtts[-1], "samples": k, "lost": 1 - k / sent}


def mathis_bps(rtt_s, p, mss=LAB_MSS):
    """One Reno-like flow's rate at loss p and round trip rtt_s (Mathis et al. 1997, periodic
    loss, an ACK per segment): MSS / RTT * sqrt(3/2) / sqrt(p), in bit/s."""
    return mss * 8 / rtt_s * (1.5 ** 0.5) / (p ** 0.5)


def path_tests(st, args, want, add, results):
    """rtt, window and lossflow: a delayed lab's round trip, one window-limited flow, one flow
    under loss, between h0 and h1 (twosite: across the WAN). Expected round trip: twice the
    hosts' delay plus (twosite) twice the WAN's."""
    p = st["params"]
    hosts = st["hosts"]
    if len(hosts) < 2:
        return
    src, dst = hosts[0], hosts[1]
    if st["profile"] == "twosite":
        src = [h for h in hosts if h.get("site") == 0][0]
        dst = [h for h in hosts if h.get("site") == 1][0]
    expect_ms = 2 * (p.get("delay", 0) + p.get("wan_delay", 0)) / 1e6
    loss = 1 - (1 - p.get("loss", 0.0)) * (1 - p.get("wan_loss", 0.0))
    rtt = None
    if want("rtt") or (want("window") and expect_ms > 0) or (want("lossflow") and loss > 0):
        rtts, sent = measure_rtt(src, dst)
        rtt = rtt_summary(rtts, sent)
    if want("rtt"):
        r = dict(rtt, test="rtt", expected_ms=expect_ms,
                 desc="ping %s->%s, expected %.3f ms + the lab's own" % (src["name"],
                                                                        dst["name"], expect_ms))
        results.append(r)
        print("%-10s %-44s %6d %7.3f ms median (p10 %.3f, p90 %.3f, min %.3f), lost %.1f%%"
              % ("rtt", r["desc"], r["samples"], r["median_ms"], r["p10_ms"], r["p90_ms"],
                 r["min_ms"], 100 * r["lost"]), flush=True)
    S = args.seconds
    if want("window") and expect_ms > 0:
        w = args.window or WINDOW_DEFAULT
        res = run_flows(st, {src["ns"]: [dst["ip"]], dst["ns"]: []}, S, window_clamp=w)
        ref = w * 8 / (rtt["median_ms"] / 1e3)
        add("window", "1 flow, window %d B, fraction of window/RTT" % w,
            [res[dst["ns"]]["rx_bps"]], ref, window=w, rtt_ms=rtt["median_ms"])
    if want("lossflow") and loss > 0:
        res = run_flows(st, {src["ns"]: [dst["ip"]], dst["ns"]: []}, max(S, 5))
        ref = mathis_bps(rtt["median_ms"] / 1e3, loss)
        add("lossflow", "1 flow, loss %g%%, fraction of Mathis" % (100 * loss),
            [res[dst["ns"]]["rx_bps"]], ref, loss=loss, rtt_ms=rtt["median_ms"])


def calibrate(st, args):
    """`netlab calibrate` on lab st: prints a table, optionally writes JSON."""
    only = check_calibrate_args(args)
    if st.get("status") != "up":
        raise LabError("lab %s is not up" % st["name"])
    B = st["params"]["rate"]
    hosts = st["hosts"]
    n = len(hosts)
    S = args.seconds
    ipf = Iperf(st)
    results = []

    def want(t):
        return only is None or t in only

    def add(test, desc, rates, ref, refs=None, **extra):
        refs = refs or [ref] * len(rates)
        r = {"test": test, "desc": desc, "ref_bps": ref, "mbps": [x / 1e6 for x in rates],
             "fraction": [x / rf for x, rf in zip(rates, refs)]}
        fr = r["fraction"]
        r["min"], r["mean"], r["max"] = min(fr), sum(fr) / len(fr), max(fr)
        r.update(extra)
        results.append(r)
        print("%-10s %-44s %6d %7.1f %6.3f %6.3f %6.3f" %
              (test, desc, len(rates), ref / 1e6, r["min"], r["mean"], r["max"]), flush=True)

    print("lab %s: profile %s, %d hosts, B=%s, %ds per test, load %s" %
          (st["name"], st["profile"], n, fmt_rate(B), S, open("/proc/loadavg").read().split()[0]))
    print("%-10s %-44s %6s %7s %6s %6s %6s" % ("test", "what", "flows", "ref Mb", "min", "mean",
                                              "max"))
    t_start = time.time()
    if st["profile"] == "twosite":
        a = [h for h in hosts if h.get("site") == 0]
        b = [h for h in hosts if h.get("site") == 1]
        if want("pair") and len(a) >= 2:
            add("pair", "iperf3 %s->%s (same site), fraction of B" % (a[0]["name"], a[1]["name"]),
                ipf.measure([(a[0]["ns"], a[1]["ip"], 5201, 1)], S), B)
        F, W = st["params"]["flow_cap"], st["params"]["wan_rate"]
        if want("wan1"):
            add("wan1", "1 stream %s->%s over WAN, fraction of F" % (a[0]["name"], b[0]["name"]),
                ipf.measure([(a[0]["ns"], b[0]["ip"], 5201, 1)], S), F)
        if want("wank"):
            k = args.streams or 4
            r = ipf.measure([(a[0]["ns"], b[0]["ip"], 5201, k)], S)
            add("wank", "iperf3 -P %d %s->%s over WAN, fraction of F" % (k, a[0]["name"],
                b[0]["name"]), r, F, streams=k, fraction_of_W=r[0] / W)
        if want("wanall") and len(a) == len(b):
            r = ipf.measure([(ha["ns"], hb["ip"], 5201, 1) for ha, hb in zip(a, b)], S)
            add("wanall", "%d hosts A->B one stream each, sum / W" % len(a), [sum(r)], W)
    elif st["profile"] == "cloud":
        F = st["params"]["flow_cap"]
        k = args.streams or 8
        if want("pair") and n >= 2:
            add("pair", "1 stream h0->h1, fraction of F",
                ipf.measure([(hosts[0]["ns"], hosts[1]["ip"], 5201, 1)], S), F)
        if want("pairk") and n >= 2:
            add("pairk", "iperf3 -P %d h0->h1, fraction of B" % k,
                ipf.measure([(hosts[0]["ns"], hosts[1]["ip"], 5201, k)], S), B, streams=k)
    elif st["profile"] == "hetero" and want("pair"):
        m = st["matrix"]
        seen = {}
        for i in range(n):
            for j in range(n):
                if i != j and m[i][j] not in seen:
                    seen[m[i][j]] = (i, j)
        for f, (i, j) in sorted(seen.items(), reverse=True):
            add("pair", "iperf3 h%d->h%d, class %.2f B, fraction of class" % (i, j, f),
                ipf.measure([(hosts[i]["ns"], hosts[j]["ip"], 5201, 1)], S), B * f)
    elif want("pair") and n >= 2:
        add("pair", "iperf3 h0->h1, fraction of B",
            ipf.measure([(hosts[0]["ns"], hosts[1]["ip"], 5201, 1)], S), B)
    if want("ring") and n >= 2:
        jobs = [(hosts[i]["ns"], hosts[(i + 1) % n]["ip"], 5201, 1) for i in range(n)]
        r = ipf.measure(jobs, S)
        if st["profile"] == "hetero":
            refs = [B * st["matrix"][i][(i + 1) % n] for i in range(n)]
            add("ring", "all hosts iperf3 to right neighbour, / pair rate", r, B, refs=refs,
                pair_rate_mbps=[x / 1e6 for x in refs])
        elif st["profile"] == "twosite":
            add("ring", "all hosts iperf3 to right neighbour (2 cross WAN)", r, B)
        elif st["profile"] == "cloud":
            F = st["params"]["flow_cap"]
            add("ring", "all hosts 1 stream to right neighbour, fraction of F", r, F)
        else:
            add("ring", "all hosts iperf3 to right neighbour, fraction of B", r, B)
    if want("a2a") and n >= 2:
        plan = {h["ns"]: [g["ip"] for g in hosts if g is not h] for h in hosts}
        res = run_flows(st, plan, S)
        rx = [res[h["ns"]]["rx_bps"] for h in hosts]
        tx = [res[h["ns"]]["tx_bps"] for h in hosts]
        label = "all-to-all TCP (%d flows) rx per host / B" % (n * (n - 1))
        add("a2a", label, rx, B, tx_fraction=[x / B for x in tx])
    path_tests(st, args, want, add, results)
    elapsed = time.time() - t_start
    print("(%.0fs, load average %s)" % (elapsed, open("/proc/loadavg").read().split()[0]))
    if args.json:
        json_out(args.json, {"lab": st["name"], "profile": st["profile"], "params": st["params"],
                             "seconds": S, "cpus": os.cpu_count(), "results": results,
                             "loadavg": open("/proc/loadavg").read().split()[:3]})
    return EXIT_OK
