# SPDX-License-Identifier: BSD-3-Clause
"""Errors and exit codes, running iproute2 and other commands, ending processes."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# The directory that holds the netlab package, and its name there: netlab's own helpers (the flow
# helper inside the host namespaces, a lab's watcher) run as `python3 -m netlab` and must find the
# same package (installed with the Python package, it is wirespeed/_netlab).
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_NAME = os.path.basename(os.path.dirname(os.path.abspath(__file__)))

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_COUNTERS = 3
EXIT_ENV = 4          # environment cannot host a lab (not root, no namespaces, no tc ...)


class LabError(Exception):
    def __init__(self, msg, code=EXIT_FAIL):
        super().__init__(msg)
        self.code = code


def log(msg):
    print("netlab: " + msg, file=sys.stderr, flush=True)


def json_out(path, doc):
    """--json FILE of every command (docs/tools.md): doc appended to FILE as one JSON line;
    "-" is standard output."""
    line = json.dumps(doc) + "\n"
    if path == "-":
        sys.stdout.write(line)
        sys.stdout.flush()
        return
    try:
        with open(path, "a") as f:
            f.write(line)
    except OSError as e:
        raise LabError("--json: cannot write %s (%s)" % (path, e.strerror), EXIT_USAGE)


def run_cmd(argv, check=True, capture=True, timeout=60, input_text=None):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE if capture else None,
                           stderr=subprocess.PIPE if capture else None, text=True,
                           timeout=timeout, input=input_text)
    except FileNotFoundError:
        raise LabError("command not found: %s" % argv[0], EXIT_ENV)
    except subprocess.TimeoutExpired:
        raise LabError("command timed out: %s" % " ".join(argv))
    if check and p.returncode != 0:
        raise LabError("command failed (%d): %s\n%s" % (p.returncode, " ".join(argv),
                                                       (p.stderr or "").strip()))
    return p


def ip(ns, *args, check=True):
    argv = ["ip"] + (["-n", ns] if ns else []) + list(args)
    return run_cmd(argv, check=check)


def tc(ns, *args, check=True):
    argv = ["tc"] + (["-n", ns] if ns else []) + list(args)
    return run_cmd(argv, check=check)


def tc_batch(ns, lines):
    with tempfile.NamedTemporaryFile("w", suffix=".tc", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        run_cmd(["tc", "-n", ns, "-batch", path], timeout=120)
    finally:
        os.unlink(path)


def nsexec(ns, argv, **kw):
    return run_cmd(["ip", "netns", "exec", ns] + list(argv), **kw)


def list_netns():
    p = run_cmd(["ip", "-j", "netns", "list"], check=False)
    out = (p.stdout or "").strip()
    if not out:
        return []
    try:
        return [e["name"] for e in json.loads(out)]
    except ValueError:
        return [l.split()[0] for l in out.splitlines() if l.strip()]


def list_links(ns=None):
    p = ip(ns, "-j", "link", "show", check=False)
    try:
        return [e["ifname"] for e in json.loads(p.stdout or "[]")]
    except ValueError:
        return []


def self_command(*args):
    """The argv and environment that run this netlab package's command line with args."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PACKAGE_PARENT] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return [sys.executable, "-m", PACKAGE_NAME] + [str(a) for a in args], env


def require_root():
    if os.geteuid() != 0:
        raise LabError("must run as root: network namespaces and tc need CAP_NET_ADMIN", EXIT_ENV)
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise LabError("iproute2 tool '%s' not found" % tool, EXIT_ENV)
    if not os.path.exists("/proc/self/ns/net"):
        raise LabError("network namespaces are not available in this kernel", EXIT_ENV)


def kill_tree(proc):
    """End a process started with start_new_session=True and everything in its group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def kill_ns_pids(namespaces):
    """End every process inside the given namespaces (TERM, then KILL after 2 s)."""
    pids = set()
    for ns in namespaces:
        p = run_cmd(["ip", "netns", "pids", ns], check=False)
        for tok in (p.stdout or "").split():
            if tok.isdigit() and int(tok) != os.getpid():
                pids.add(int(tok))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for pid in pids:
            try:
                os.kill(pid, sig)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            break
        deadline = time.time() + 2
        while time.time() < deadline:
            alive = [x for x in alive if os.path.exists("/proc/%d" % x)]
            if not alive:
                break
            time.sleep(0.05)
        pids = set(alive)
