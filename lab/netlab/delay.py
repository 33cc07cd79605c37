# SPDX-License-Identifier: BSD-3-Clause
"""Latency, jitter and loss on a lab's links without netem: the delay line (delayline.c, built
here with the machine's C compiler) joins each delayed device to a TAP device that takes the
device's place in its bridge. docs/netlab.md says what it adds and what it costs."""

import contextlib
import hashlib
import os
import select
import shutil
import signal
import subprocess
import time

from .base import EXIT_ENV, LabError, ip, nsexec, run_cmd
from .state import STATE_DIR

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "delayline.c")
READY_TIMEOUT = 10.0
TAP_QUEUE = 10000   # frames the bridge may queue for the line before it drops (default 1000)
SEED = 1            # one seeded generator for all directions: a single flow's losses repeat


def binary():
    """The delay line's executable, compiled once per version of its source into
    /run/netlab/bin (LabError EXIT_ENV without a C compiler)."""
    with open(SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    path = os.path.join(STATE_DIR, "bin", "delayline-" + digest)
    if os.access(path, os.X_OK):
        return path
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise LabError("--delay/--jitter/--loss need a C compiler (cc) to build the delay "
                       "line: scripts/deps.sh core", EXIT_ENV)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.%d" % (path, os.getpid())
    p = run_cmd([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-o", tmp, SOURCE], check=False)
    if p.returncode != 0:
        raise LabError("building the delay line failed:\n%s" % p.stderr, EXIT_ENV)
    os.replace(tmp, path)
    return path


def offloads_off(ns, dev):
    """Segmentation and checksum offload off on a device whose frames reach the delay line:
    the line reads frames as they are on the wire, and a frame of 64 KiB or with its checksum
    left to the NIC cannot be written out as one."""
    if not shutil.which("ethtool"):
        raise LabError("--delay/--jitter/--loss need ethtool: scripts/deps.sh lab", EXIT_ENV)
    argv = ["ethtool", "-K", dev, "tx", "off", "tso", "off", "gso", "off"]
    p = nsexec(ns, argv, check=False) if ns else run_cmd(argv, check=False)
    if p.returncode != 0:
        raise LabError("ethtool -K %s in %s: %s" % (dev, ns or "the root namespace",
                                                    p.stderr.strip()), EXIT_ENV)


def direction(delay=0, jitter=0, loss=0.0):
    """One direction of a port as the delay line reads it: DELAY_NS/JITTER_NS/LOSS."""
    return "%d/%d/%.12g" % (delay, jitter, loss)


def start(st, ports, logpath):
    """Starts the delay line for ports = [{ns, dev, tap, br, out, back}] (out: DEV to TAP, back:
    TAP to DEV, each a direction() string), waits until it says it is ready, and puts every
    TAP into its bridge. Records the process in st["delayline"]; the caller saves st."""
    argv = [binary(), "--seed", str(SEED)]
    for p in ports:
        argv += ["--port", ",".join((p["ns"], p["dev"], p["tap"], p["out"], p["back"]))]
    with open(logpath, "w") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=log, start_new_session=True)
    st["delayline"] = {"pid": proc.pid, "log": logpath, "argv": argv}
    deadline = time.monotonic() + READY_TIMEOUT
    line = b""
    while time.monotonic() < deadline and proc.poll() is None:
        r, _, _ = select.select([proc.stdout], [], [], 0.1)
        if r:
            line = proc.stdout.readline()
            break
    proc.stdout.close()
    if line.strip() != b"ready":
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        with open(logpath) as f:
            raise LabError("the delay line did not start: %s" % f.read().strip())
    for p in ports:
        ip(p["ns"], "link", "set", p["tap"], "txqueuelen", str(TAP_QUEUE))
        ip(p["ns"], "link", "set", p["tap"], "master", p["br"], "up")
        ip(p["ns"], "link", "set", p["dev"], "up")


def stop(st):
    """Ends the lab's delay line if it still runs (its counters go to its log)."""
    pid = (st.get("delayline") or {}).get("pid")
    if not pid:
        return
    want = "\0".join(st["delayline"].get("argv", [])).encode()
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if f.read().rstrip(b"\0") != want:
                return      # the pid now belongs to another process (another lab's line)
    except OSError:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    for _ in range(40):
        if not os.path.exists("/proc/%d" % pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
