#!/usr/bin/env python3
"""`netlab fault`: bad arguments refused at once naming them; a host's rate changed (tc shows
the new rate on both ends of its link); a host's link dropped for 2 s (no connection gets through
meanwhile, one does after); a host's process killed by its command line. Then a shuffle
(tests/mpi/test_fault.c --fault none: every rank asks every rank 8000 times, each answer
checked against the request, every request answered exactly once) on 4 hosts at 20 Mbit/s,
about 8 s long, with one host's link dropped for 3 s in its middle, under Open MPI. Runtime
~30 s.

usage: test_fault.py PATH/TO/test_fault"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labutil import (NETLAB, cleanup, conclude, fail, lab_name, machine_objects, netlab,
                     require_lab)

HOSTS = 4


def state(name):
    import json
    p = netlab("status", "--name", name, "--json")
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


def main():
    if len(sys.argv) != 2 or not os.access(sys.argv[1], os.X_OK):
        fail("usage: test_fault.py PATH/TO/test_fault")
    prog = sys.argv[1]
    require_lab()
    name = lab_name("f")
    before = machine_objects()
    errors = []
    try:
        netlab("up", "cluster", "--name", name, "--hosts", str(HOSTS), "--rate", "20mbit")
        st = state(name)
        h = {x["name"]: x for x in st["hosts"]}

        # Bad arguments: exit 2 at once (before --after), naming what is wrong.
        for args, words in [(["rate", "h9", "--rate", "5mbit"], "h9"),
                            (["rate", "h1"], "--rate"),
                            (["rate", "h1", "--rate", "fast"], "--rate"),
                            (["down", "h1"], "--for"),
                            (["kill", "h1"], "--match")]:
            t0 = time.time()
            p = netlab("fault", *args, "--name", name, "--after", "30", check=False)
            if p.returncode != 2 or words not in p.stderr or time.time() - t0 > 10:
                errors.append("fault %s: exit %d, %r" % (" ".join(args), p.returncode,
                                                         p.stderr.strip()))
        print("ok: bad arguments refused", flush=True)

        # The rate, on both ends of h1's link.
        netlab("fault", "rate", "h1", "--rate", "5mbit", "--name", name)
        ends = [(h["h1"]["ns"], "eth0"), (h["h1"]["sw_ns"], h["h1"]["swdev"])]
        for ns, dev in ends:
            if "rate 5Mbit" not in qdisc(ns, dev):
                errors.append("after fault rate: %s %s: %s" % (ns, dev, qdisc(ns, dev)))
        if "rate 20Mbit" not in qdisc(h["h2"]["ns"], "eth0"):
            errors.append("fault rate h1 changed h2: %s" % qdisc(h["h2"]["ns"], "eth0"))
        netlab("fault", "rate", "h1", "--rate", "20mbit", "--name", name)
        print("ok: rate changed and restored", flush=True)

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
        print("ok: link dropped and restored", flush=True)

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
        print("ok: process killed", flush=True)

        # The shuffle with h2's link down for 3 s in its middle.
        down = subprocess.Popen([sys.executable, NETLAB, "fault", "down", "h2", "--for", "3",
                                 "--after", "3", "--name", name],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        t0 = time.time()
        p = netlab("run", "--name", name, "--mpi", "openmpi", "--timeout", "120", "--",
                   prog, "--op", "shuffle", "--fault", "none", "--requests", "8000",
                   check=False, timeout=180)
        took = time.time() - t0
        down.wait(timeout=60)
        print(p.stdout[-2000:])
        ok = p.stdout.count("VERDICT rank") == HOSTS and "FAILED" not in p.stdout
        if p.returncode != 0 or not ok:
            print(p.stderr[-3000:])
            errors.append("the shuffle with a link dropped failed (exit %d)" % p.returncode)
        elif took < 6:
            errors.append("the shuffle ended after %.1f s, before the link came back: make "
                          "it longer (--requests)" % took)
        else:
            print("ok: shuffle over a dropped link, %.1f s" % took, flush=True)
    finally:
        cleanup(name)
    return conclude(errors, before, name)


if __name__ == "__main__":
    sys.exit(main())
