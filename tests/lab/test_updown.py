#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""netlab up/down leaves no residue: normal down, rollback after an error, down from the
state file after a crash (SIGKILL of `netlab up` midway), all three profiles, two labs at once,
a lab removed by its watcher when its owner is SIGKILLed, clear error when not root, TCP
between hosts under the lab's congestion control (--tcp-cc). Runtime ~20 s."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labutil import (NETLAB, ROOT, cleanup, fail, lab_name, machine_objects, netlab,
                     require_lab, residue)

DEADLINE = time.time() + 150


def check_clean(before, name, what):
    bad = residue(before, machine_objects(), name)
    if bad:
        fail("%s left residue: %s" % (what, ", ".join(bad)))
    print("ok: %s left no residue" % what, flush=True)


# Accepts one connection on port 5299 and reports nothing; the client prints the congestion
# control its socket uses.
SERVER = ("import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, "
          "socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0', 5299)); s.listen(1); s.settimeout(20); "
          "c, _ = s.accept(); c.recv(1)")
CLIENT = ("import socket, sys, time\n"
          "for i in range(100):\n"
          "    try:\n"
          "        c = socket.create_connection((sys.argv[1], 5299), timeout=5); break\n"
          "    except OSError:\n"
          "        time.sleep(0.1)\n"
          "print(c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)"
          ".split(b'\\0')[0].decode())\n"
          "c.send(b'x')\n")


def connection_cc(client, server):
    """The congestion control of a TCP connection from host `client` to host `server`."""
    srv = subprocess.Popen(["ip", "netns", "exec", server["ns"], sys.executable, "-c", SERVER])
    try:
        r = subprocess.run(["ip", "netns", "exec", client["ns"], sys.executable, "-c", CLIENT,
                            server["ip"]], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=30)
        if r.returncode != 0:
            fail("TCP probe between lab hosts failed: %s" % r.stderr.strip())
        return r.stdout.strip()
    finally:
        try:
            srv.wait(timeout=10)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()


def gone(pid, seconds):
    """Whether process pid has ended (or is a zombie) within the given seconds."""
    t0 = time.time()
    while time.time() - t0 < seconds:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def main():
    require_lab()
    os.environ.pop("NETLAB_TCP_CC", None)  # the checks below expect netlab's own default
    n1, n2 = lab_name("ua"), lab_name("ub")
    before = machine_objects()
    try:
        # 1. every profile: up, objects exist with the prefix and match the state file, down
        for prof, extra in (("cluster", ["--hosts", "6"]), ("twosite", ["--hosts", "4"]),
                            ("hetero", ["--hosts", "4", "--seed", "3"]),
                            ("cloud", ["--hosts", "3"])):
            netlab("up", prof, "--name", n1, *extra)
            st = json.load(open("/run/netlab/%s.json" % n1))
            now = machine_objects()
            ours = {n for n in now["netns"] if n.startswith(n1 + "-")}
            if ours != set(st["created"]["netns"]):
                fail("namespaces %s != state file %s" % (sorted(ours), st["created"]["netns"]))
            for n in list(now["netns"]) + list(now["links"] - before["links"]):
                if n in ours or n in st["created"]["links"]:
                    if not n.startswith(n1 + "-"):
                        fail("object without lab prefix: %s" % n)
            for l in st["created"]["links"]:
                if len(l) > 15:
                    fail("interface name too long: %s" % l)
            # hosts reach each other and the root-ns address; nothing outside the lab is routed
            h0, hl = st["hosts"][0], st["hosts"][-1]
            r = subprocess.run(["ip", "-n", h0["ns"], "route", "get", "192.0.2.1"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if r.returncode == 0:
                fail("host has a route outside the lab: %s" % r.stdout)
            r = subprocess.run(["ip", "-n", h0["ns"], "route", "get", hl["ip"]],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                fail("no route between lab hosts")
            # TCP between hosts uses the lab's congestion control (cubic by default), whatever
            # the machine's own default is
            cc = connection_cc(h0, hl)
            if cc != "cubic":
                fail("%s: a TCP connection between hosts uses %r, not cubic" % (prof, cc))
            print("ok: %s: TCP between hosts uses %s (machine default: %s)"
                  % (prof, cc, open("/proc/sys/net/ipv4/tcp_congestion_control").read().strip()),
                  flush=True)
            netlab("status", "--name", n1, "--counters")
            netlab("down", "--name", n1)
            check_clean(before, n1, "up/down %s" % prof)

        # 1b. --tcp-cc: an unknown algorithm is refused before anything is created; "default"
        # leaves the machine's own
        p = netlab("up", "cluster", "--name", n1, "--hosts", "2", "--tcp-cc", "nosuchcc",
                   check=False)
        if p.returncode != 2 or "--tcp-cc" not in p.stderr or "nosuchcc" not in p.stderr:
            fail("--tcp-cc nosuchcc: rc %d, %s" % (p.returncode, p.stderr.strip()))
        check_clean(before, n1, "refused --tcp-cc")
        p = netlab("up", "cluster", "--name", n1, "--hosts", "2", check=False,
                   env={"NETLAB_TCP_CC": "nosuchcc"})
        if p.returncode != 2 or "nosuchcc" not in p.stderr:
            fail("NETLAB_TCP_CC=nosuchcc: rc %d, %s" % (p.returncode, p.stderr.strip()))
        check_clean(before, n1, "refused NETLAB_TCP_CC")
        netlab("up", "cluster", "--name", n1, "--hosts", "2", "--tcp-cc", "default")
        st = json.load(open("/run/netlab/%s.json" % n1))
        mine = open("/proc/sys/net/ipv4/tcp_congestion_control").read().strip()
        cc = connection_cc(st["hosts"][0], st["hosts"][1])
        if cc != mine:
            fail("--tcp-cc default: the connection uses %r, the machine %r" % (cc, mine))
        netlab("down", "--name", n1)
        check_clean(before, n1, "up/down --tcp-cc default")

        # 2. error midway (test hook) -> up rolls back by itself
        p = netlab("up", "cluster", "--name", n1, "--hosts", "6", check=False,
                   env={"NETLAB_TEST_FAIL_AFTER": "4"})
        if p.returncode == 0:
            fail("up with NETLAB_TEST_FAIL_AFTER should fail")
        check_clean(before, n1, "failed up (rollback)")

        # 3. crash midway (SIGKILL, no cleanup at all) -> state file says what to remove
        p = netlab("up", "cluster", "--name", n1, "--hosts", "8", check=False,
                   env={"NETLAB_TEST_CRASH_AFTER": "5"})
        if p.returncode != -signal.SIGKILL:
            fail("crash hook did not kill netlab up (rc %s)" % p.returncode)
        st = json.load(open("/run/netlab/%s.json" % n1))
        left = {n for n in machine_objects()["netns"] if n.startswith(n1 + "-")}
        if st["status"] != "creating" or not left:
            fail("crash simulation did not leave a half-built lab (%s, %s)" % (st["status"], left))
        print("crashed lab left %d namespaces, state file lists %d" %
              (len(left), len(st["created"]["netns"])), flush=True)
        netlab("down", "--name", n1)
        check_clean(before, n1, "down after crash")

        # 4. crash, then the state file is lost too -> down --scan removes <name>-* objects
        netlab("up", "cluster", "--name", n1, "--hosts", "4", check=False,
               env={"NETLAB_TEST_CRASH_AFTER": "3"})
        os.unlink("/run/netlab/%s.json" % n1)
        p = netlab("down", "--name", n1, check=False)
        if p.returncode == 0:
            fail("down without state file and without --scan should refuse")
        netlab("down", "--name", n1, "--scan")
        check_clean(before, n1, "down --scan without state file")

        # 5. two labs at once: distinct prefixes and subnets; down of one keeps the other
        netlab("up", "cluster", "--name", n1, "--hosts", "2")
        netlab("up", "twosite", "--name", n2, "--hosts", "2")
        s1 = json.load(open("/run/netlab/%s.json" % n1))
        s2 = json.load(open("/run/netlab/%s.json" % n2))
        if s1["subnet"] == s2["subnet"] or s1["prefix"] == s2["prefix"]:
            fail("two labs share a subnet or prefix")
        p = netlab("up", "cluster", "--name", n1, check=False)
        if p.returncode == 0 or "already exists" not in p.stderr:
            fail("second up with the same name must be refused: %s" % p.stderr)
        netlab("down", "--name", n1)
        if not {n for n in machine_objects()["netns"] if n.startswith(n2 + "-")}:
            fail("down of one lab removed the other")
        netlab("down", "--name", n2)
        check_clean(before, n1, "two labs")
        check_clean(before, n2, "two labs")

        # 6. a lab with an owner: removed by its watcher when the owner is SIGKILLed (no
        # `finally` runs); a bad owner is refused before anything exists; after a normal down
        # the watcher ends by itself
        p = netlab("up", "cluster", "--name", n1, "--hosts", "2", "--owner-pid", "999999999",
                   check=False)
        if p.returncode != 2 or "--owner-pid" not in p.stderr:
            fail("--owner-pid of no process: rc %d, %s" % (p.returncode, p.stderr.strip()))
        check_clean(before, n1, "refused --owner-pid")
        owner = subprocess.Popen(["sleep", "120"])
        try:
            netlab("up", "cluster", "--name", n1, "--hosts", "3", "--owner-pid", str(owner.pid))
            watcher = json.load(open("/run/netlab/%s.json" % n1))["watcher"]["pid"]
            time.sleep(1.2)     # two of the watcher's checks: the lab stays while its owner runs
            if not os.path.exists("/run/netlab/%s.json" % n1):
                fail("the lab went down while its owner was running")
        finally:
            owner.kill()
            owner.wait()
        t0 = time.time()
        while os.path.exists("/run/netlab/%s.json" % n1) and time.time() - t0 < 15:
            time.sleep(0.1)
        if os.path.exists("/run/netlab/%s.json" % n1):
            fail("the lab of a SIGKILLed owner is still up after 15 s")
        check_clean(before, n1, "owner killed, lab removed by its watcher (%.1f s)"
                    % (time.time() - t0))
        if not gone(watcher, 5):
            fail("the watcher (pid %d) did not end after removing the lab" % watcher)
        owner = subprocess.Popen(["sleep", "120"])
        try:
            netlab("up", "cluster", "--name", n1, "--hosts", "2", "--owner-pid", str(owner.pid))
            watcher = json.load(open("/run/netlab/%s.json" % n1))["watcher"]["pid"]
            netlab("down", "--name", n1)
            if not gone(watcher, 5):
                fail("the watcher (pid %d) outlived its lab's down" % watcher)
            check_clean(before, n1, "owned lab, normal down")
        finally:
            owner.kill()
            owner.wait()

        # 7. not root -> clear error, nothing created
        if shutil.which("setpriv"):
            # The checkout may sit in a directory other users cannot read
            # (a mktemp clone): run a world-readable copy of the tool (the
            # launcher and the package, in the repository's layout).
            tmpdir = tempfile.mkdtemp(prefix="netlab-nonroot-")
            os.chmod(tmpdir, 0o755)
            shutil.copytree(os.path.join(ROOT, "lab", "netlab"),
                            os.path.join(tmpdir, "lab", "netlab"),
                            ignore=shutil.ignore_patterns("__pycache__"))
            os.makedirs(os.path.join(tmpdir, "scripts"))
            tool = os.path.join(tmpdir, "scripts", "netlab")
            shutil.copy(NETLAB, tool)
            for d, _, files in os.walk(tmpdir):
                os.chmod(d, 0o755)
                for f in files:
                    os.chmod(os.path.join(d, f), 0o755 if d.endswith("scripts") else 0o644)
            try:
                p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                    sys.executable, tool, "up", "cluster", "--name", n1],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   timeout=30, cwd=tmpdir)
            finally:
                shutil.rmtree(tmpdir, ignore_errors=True)
            if p.returncode != 4 or "root" not in p.stderr:
                fail("non-root up: rc %d, %s" % (p.returncode, p.stderr.strip()))
            print("ok: non-root gets: %s" % p.stderr.strip(), flush=True)
        if time.time() > DEADLINE:
            fail("test exceeded its time bound")
    finally:
        cleanup(n1)
        cleanup(n2)
    check_clean(before, n1, "whole test")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
