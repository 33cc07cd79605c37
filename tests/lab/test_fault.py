#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`netlab fault`: bad arguments refused at once naming them; a host's rate changed (tc shows
the new rate on both ends of its link); a host's link dropped for 2 s (no connection gets through
meanwhile, one does after); a host's process killed by its command line. Then a shuffle
(tests/mpi/test_fault.c --fault none: every rank asks every rank 8000 times, each answer
checked against the request, every request answered exactly once) on 4 hosts at 20 Mbit/s
under Open MPI, with one host's link dropped for 3 s in its middle: the drop starts 2 s after
every rank has begun the shuffle, and the host's switch port, sampled while every rank is
inside it, must be seen down, with the shuffle's bytes through it before, none while down and
more after. Runtime ~30 s.

usage: test_fault.py PATH/TO/test_fault"""
import json
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labutil import (NETLAB, cleanup, conclude, fail, lab_name, machine_objects, netlab,
                     require_lab)

HOSTS = 4


def state(name):
    p = netlab("status", "--name", name, "--json", "-")
    return json.loads(p.stdout)


def qdisc(ns, dev):
    return subprocess.run(["tc", "-n", ns, "qdisc", "show", "dev", dev], stdout=subprocess.PIPE,
                          text=True).stdout


# Reachability without ping: a TCP connect to a closed port is refused at once (the host
# answers with a reset) when the link is up, and times out when it is down.
PROBE = ("import socket, sys\n"
         "try:\n"
         "    socket.create_connection((sys.argv[1], 9), timeout=1).close()\n"
         "except ConnectionRefusedError:\n"
         "    pass\n"
         "except OSError:\n"
         "    sys.exit(1)\n")


def ping(ns, ip):
    return subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", PROBE, ip],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE).returncode == 0


def port(h):
    """Whether h's switch port is up (administratively) and the bytes it has carried."""
    p = subprocess.run(["ip", "-n", h["sw_ns"], "-s", "-j", "link", "show", "dev", h["swdev"]],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    e = json.loads(p.stdout)[0]
    return "UP" in e["flags"], e["stats64"]["rx"]["bytes"] + e["stats64"]["tx"]["bytes"]


def shuffle_over_drop(name, prog, victim):
    """The shuffle on every host with the victim's link dropped for 3 s once every rank has
    begun it (the program prints START, flushed, before it and RUN after it). While every
    rank is inside the shuffle (all START lines read, no RUN line yet) the victim's switch
    port is sampled: it must be seen down, having carried bytes before that and none while
    down, and carry bytes again once it is back, before any rank ends the shuffle. Returns
    the errors found."""
    errors = []
    cmd = [sys.executable, NETLAB, "run", "--name", name, "--mpi", "openmpi", "--time-limit",
           "120", "--", prog, "--op", "shuffle", "--fault", "none", "--requests", "8000"]
    t0 = time.time()
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = [], []
    starts, ends = set(), set()

    def read_out():
        for line in job.stdout:
            out.append(line)
            m = re.match(r"(START|RUN) rank (\d+) ", line)
            if m:
                (starts if m.group(1) == "START" else ends).add(int(m.group(2)))

    readers = [threading.Thread(target=read_out, daemon=True),
               threading.Thread(target=lambda: err.extend(job.stderr), daemon=True)]
    for r in readers:
        r.start()
    # The fault starts 2 s into the shuffle (its arguments are checked first), so that the
    # link carries the shuffle's traffic before it drops.
    fault = None
    samples = []   # (up, bytes) while every rank is inside the shuffle
    while job.poll() is None and time.time() - t0 < 180:
        inside = len(starts) == HOSTS and not ends
        if inside and fault is None:
            fault = subprocess.Popen([sys.executable, NETLAB, "fault", "down", victim["name"],
                                      "--for", "3", "--after", "2", "--name", name],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if inside:
            sample = port(victim)
            if len(starts) == HOSTS and not ends:  # still inside after the sample was taken
                samples.append(sample)
        time.sleep(0.1)
    if job.poll() is None:
        job.kill()
        errors.append("the shuffle with a link dropped did not end in 180 s")
    job.wait()
    for r in readers:
        r.join(timeout=10)
    out, err = "".join(out), "".join(err)
    print("$ netlab %s  -> %d (%.1fs)" % (" ".join(cmd[2:]), job.returncode, time.time() - t0),
          flush=True)
    print(out[-2000:])
    ok = out.count("VERDICT rank") == HOSTS and "FAILED" not in out
    if job.returncode != 0 or not ok:
        print(err[-3000:])
        errors.append("the shuffle with a link dropped failed (exit %d)" % job.returncode)
    if fault is None:
        return errors + ["the shuffle never had every rank inside it: no fault injected"]
    try:
        frc = fault.wait(timeout=30)
    except subprocess.TimeoutExpired:
        fault.kill()
        frc = fault.wait()
    ferr = fault.stderr.read()
    what = "%s: link down for 3 s" % victim["name"]
    if frc != 0 or what not in ferr or "%s: link up" % victim["name"] not in ferr:
        errors.append("fault down %s: exit %d, %r" % (victim["name"], frc, ferr.strip()))
    down = [i for i, (up, _) in enumerate(samples) if not up]
    print("%d samples of %s's port inside the shuffle, %d of them down" %
          (len(samples), victim["name"], len(down)), flush=True)
    if not down:
        errors.append("%s's link was never seen down while the shuffle ran (%d samples): the "
                      "drop missed the shuffle" % (victim["name"], len(samples)))
        return errors
    first, last = down[0], down[-1]
    before = samples[first][1] - samples[0][1]
    during = samples[last][1] - samples[first][1]
    after = samples[-1][1] - samples[last][1]
    print("bytes through %s's port inside the shuffle: %d before the drop, %d while down, %d "
          "after" % (victim["name"], before, during, after), flush=True)
    if before <= 0:
        errors.append("no shuffle traffic through %s's link before it dropped" % victim["name"])
    if during != 0 or last - first + 1 != len(down):
        errors.append("%s's link carried %d bytes while down, or came back in between" %
                      (victim["name"], during))
    if after <= 0:
        errors.append("the shuffle ended before %s's link came back (or sent nothing after): "
                      "make it longer (--requests)" % victim["name"])
    if not errors:
        print("ok: shuffle over a dropped link, %.1f s" % (time.time() - t0), flush=True)
    return errors


def main():
    if len(sys.argv) != 2 or not os.access(sys.argv[1], os.X_OK):
        fail("usage: test_fault.py PATH/TO/test_fault")
    prog = sys.argv[1]
    require_lab()
    name = lab_name("f")
    before = machine_objects()
    errors = []
    shown = [0]

    def done(what):
        # "ok" only for a part that added no error; the errors are listed at the end.
        print("%s: %s" % ("ok" if len(errors) == shown[0] else "FAILED", what), flush=True)
        shown[0] = len(errors)

    try:
        netlab("up", "cluster", "--name", name, "--hosts", str(HOSTS), "--link-rate", "20mbit")
        st = state(name)
        h = {x["name"]: x for x in st["hosts"]}

        # Bad arguments: exit 2 at once (before --after), naming what is wrong.
        for args, words in [(["rate", "h9", "--link-rate", "5mbit"], "h9"),
                            (["rate", "h1"], "--link-rate"),
                            (["rate", "h1", "--link-rate", "fast"], "--link-rate"),
                            (["down", "h1"], "--for"),
                            (["kill", "h1"], "--match")]:
            t0 = time.time()
            p = netlab("fault", *args, "--name", name, "--after", "30", check=False)
            if p.returncode != 2 or words not in p.stderr or time.time() - t0 > 10:
                errors.append("fault %s: exit %d, %r" % (" ".join(args), p.returncode,
                                                         p.stderr.strip()))
        done("bad arguments refused")

        # The rate, on both ends of h1's link.
        netlab("fault", "rate", "h1", "--link-rate", "5mbit", "--name", name)
        ends = [(h["h1"]["ns"], "eth0"), (h["h1"]["sw_ns"], h["h1"]["swdev"])]
        for ns, dev in ends:
            if "rate 5Mbit" not in qdisc(ns, dev):
                errors.append("after fault rate: %s %s: %s" % (ns, dev, qdisc(ns, dev)))
        if "rate 20Mbit" not in qdisc(h["h2"]["ns"], "eth0"):
            errors.append("fault rate h1 changed h2: %s" % qdisc(h["h2"]["ns"], "eth0"))
        netlab("fault", "rate", "h1", "--link-rate", "20mbit", "--name", name)
        done("rate changed and restored")

        # The link down for 2 s.
        if not ping(h["h0"]["ns"], h["h1"]["ip"]):
            errors.append("h0 cannot ping h1 before the fault")
        down = subprocess.Popen([sys.executable, NETLAB, "fault", "down", "h1", "--for", "2",
                                 "--name", name], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.5)
        if ping(h["h0"]["ns"], h["h1"]["ip"]):
            errors.append("a ping reached h1 while its link was down")
        if down.wait(timeout=30) != 0:
            errors.append("fault down exited %d" % down.returncode)
        if not ping(h["h0"]["ns"], h["h1"]["ip"]):
            errors.append("h0 cannot ping h1 after the link came back")
        done("link dropped and restored")

        # A process killed by its command line; others on the host left alone.
        victim = subprocess.Popen(["ip", "netns", "exec", h["h1"]["ns"], "sleep", "317"])
        bystander = subprocess.Popen(["ip", "netns", "exec", h["h1"]["ns"], "sleep", "318"])
        time.sleep(0.3)
        netlab("fault", "kill", "h1", "--match", "sleep 317", "--name", name)
        try:
            rc = victim.wait(timeout=5)
            if rc != -9:
                errors.append("the killed process exited %d" % rc)
        except subprocess.TimeoutExpired:
            errors.append("fault kill: the process is still running")
            victim.kill()
        if bystander.poll() is not None:
            errors.append("fault kill also ended another process")
        bystander.kill()
        bystander.wait()
        done("process killed")

        # The shuffle with h2's link down for 3 s in its middle.
        errors += shuffle_over_drop(name, prog, h["h2"])
    finally:
        cleanup(name)
    return conclude(errors, before, name)


if __name__ == "__main__":
    sys.exit(main())
