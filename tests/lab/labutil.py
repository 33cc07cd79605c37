# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers for the netlab tests (tests/lab/test_*.py).

Exit codes follow ctest: 0 pass, 1 fail, 77 skip (printed reason). In CI (WSP_CI=1, set by
.ci/run) a test that cannot run fails instead of skipping: the lab tests are the only tests of
the network-level claims, and CI runs as root, so a skip there means they were lost.
Every test uses its own lab name, so it only ever removes its own lab.
"""
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NETLAB = os.path.join(ROOT, "scripts", "netlab")   # launcher of the lab/netlab package
SKIP = 77


def _terminated(signum, _frame):
    """A test stopped from outside (ctest ended, a user's kill) ends through its `finally`, which
    removes its lab; Python's default would end it on the spot and leave the lab up."""
    raise SystemExit(128 + signum)


signal.signal(signal.SIGTERM, _terminated)
signal.signal(signal.SIGHUP, _terminated)

# Every lab a test brings up belongs to the test's process (`netlab up --owner-pid`, given
# through the environment): a test ended by SIGKILL (ctest's time limit) runs no `finally`,
# and netlab's watcher then removes its lab.
os.environ["NETLAB_OWNER_PID"] = str(os.getpid())


def in_ci():
    """Whether this is a CI run: WSP_CI=1 (unset, empty or 0: not)."""
    v = os.environ.get("WSP_CI", "")
    if v not in ("", "0", "1"):
        fail("WSP_CI=%r: expected 0 or 1" % v)
    return v == "1"


def skip(reason):
    if in_ci():
        fail("skipped in CI: " + reason)
    print("SKIP: " + reason, flush=True)
    sys.exit(SKIP)


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def lab_name(tag):
    """A short lab name unique to this test process (<= 8 chars, [a-z][a-z0-9]*)."""
    return ("t%s%d" % (tag, os.getpid() % 100000))[:8]


def netlab(*args, timeout=120, env=None, check=True):
    e = dict(os.environ)
    if env:
        e.update(env)
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, NETLAB] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout, env=e)
    except subprocess.TimeoutExpired as ex:
        fail("netlab %s timed out after %ss" % (" ".join(args), timeout))
    print("$ netlab %s  -> %d (%.1fs)" % (" ".join(args), p.returncode, time.time() - t0),
          flush=True)
    if check and p.returncode != 0:
        print(p.stdout)
        print(p.stderr)
        fail("netlab %s exited %d" % (" ".join(args), p.returncode))
    return p


def require_lab(tools=()):
    """Skip (77) unless root, namespaces/tc work, and the given tools exist."""
    if os.geteuid() != 0:
        skip("needs root (network namespaces)")
    for t in ("ip", "tc") + tuple(tools):
        if shutil.which(t) is None:
            skip("%s not installed" % t)
    p = subprocess.run([sys.executable, NETLAB, "doctor"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    if p.returncode != 0:
        skip("netlab doctor: " + (p.stderr or p.stdout).strip())


def machine_objects():
    """Namespaces and root-namespace links by name, plus lab-block addresses in the root ns."""
    ns = subprocess.run(["ip", "-j", "netns", "list"], stdout=subprocess.PIPE, text=True).stdout
    ns = {e["name"] for e in json.loads(ns or "[]")}
    links = subprocess.run(["ip", "-j", "link", "show"], stdout=subprocess.PIPE, text=True).stdout
    links = {e["ifname"] for e in json.loads(links or "[]")}
    addrs = subprocess.run(["ip", "-j", "-4", "addr", "show"], stdout=subprocess.PIPE,
                           text=True).stdout
    a = set()
    for l in json.loads(addrs or "[]"):
        for x in l.get("addr_info", []):
            if x.get("local", "").startswith("10.231."):
                a.add(x["local"])
    return {"netns": ns, "links": links, "addrs": a}


def other_lab_prefixes(own):
    """Prefixes of other netlab labs (state files), whose objects may come and go meanwhile."""
    d = "/run/netlab"
    res = set()
    if os.path.isdir(d):
        for fn in os.listdir(d):
            if fn.endswith(".json") and fn[:-5] != own:
                res.add(fn[:-5] + "-")
    return res


def other_lab_subnets(own):
    """Subnets of other netlab labs (state files): their root-namespace addresses may come
    and go while a test runs, as their links do."""
    d = "/run/netlab"
    res = []
    if os.path.isdir(d):
        for fn in os.listdir(d):
            if not fn.endswith(".json") or fn[:-5] == own:
                continue
            try:
                with open(os.path.join(d, fn)) as f:
                    res.append(ipaddress.ip_network(json.load(f)["subnet"], strict=False))
            except (OSError, ValueError, KeyError, TypeError):
                pass  # a lab being created or removed meanwhile
    return res


def conclude(errors, before, own, passed="PASS"):
    """The end of a lab test: adds the objects the lab left behind (residue) to errors,
    then fails with all of them, or prints `passed` and returns 0."""
    bad = residue(before, machine_objects(), own)
    if bad:
        errors.append("residue: %s" % bad)
    if errors:
        fail("; ".join(errors))
    print(passed)
    return 0


def residue(before, after, own):
    """Objects present after but not before, ignoring other labs' objects (names and
    addresses); plus any object
    that still carries our prefix."""
    pre = own + "-"
    others = other_lab_prefixes(own)
    bad = []
    for kind in ("netns", "links"):
        for n in sorted(after[kind] - before[kind]):
            if not any(n.startswith(o) for o in others) or n.startswith(pre):
                bad.append("%s %s" % (kind, n))
        for n in sorted(after[kind]):
            if n.startswith(pre) and "%s %s" % (kind, n) not in bad:
                bad.append("%s %s" % (kind, n))
    nets = other_lab_subnets(own)
    for a in sorted(after["addrs"] - before["addrs"]):
        if not any(ipaddress.ip_address(a) in n for n in nets):
            bad.append("address %s" % a)
    if os.path.exists("/run/netlab/%s.json" % own):
        bad.append("state file /run/netlab/%s.json" % own)
    return bad


def cleanup(name):
    """Best-effort removal of our own lab (state file first, then prefix scan)."""
    subprocess.run([sys.executable, NETLAB, "down", "--name", name, "--scan"],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
