# SPDX-License-Identifier: BSD-3-Clause
"""A lab that belongs to a process (`netlab up --owner-pid PID`).

A test or a benchmark script removes its lab in a `finally` or a shell trap, but nothing runs in
a process ended by SIGKILL (ctest's time limit, the OOM killer, `kill -9`), and its lab stayed
up. With an owner, `up` records the owner's pid and start time (so that a later process given
the same pid is not taken for it) and starts a watcher: a netlab process in a session of its
own, outside every lab namespace, that checks twice a second whether the owner still runs. When
the owner has ended and the lab is still up, the watcher removes the lab as `netlab down` would;
when the lab is taken down first (the normal case), the watcher ends within half a second. The
watcher never removes a lab it was not started for: it ends as soon as the state file names
another watcher (the lab was removed and a new one of the same name built)."""

import os
import subprocess
import sys
import time

from .base import EXIT_OK, EXIT_USAGE, LabError, log
from .state import load_state, save_state, state_path

PACKAGE_NAME = os.path.basename(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLL_S = 0.5


def start_time(pid):
    """The process's start time in clock ticks since boot (/proc/PID/stat, field 22), or None
    when no such process exists. The command name (field 2) may hold spaces and parentheses,
    so the fields are counted from the last ')'."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return int(rest[19])
    except (OSError, IndexError, ValueError):
        return None


def parse_owner(text, source):
    """The owner named by --owner-pid or NETLAB_OWNER_PID (source names which): a running
    process, checked before anything is created."""
    try:
        pid = int(text)
    except (TypeError, ValueError):
        raise LabError("%s: %r is not a process id" % (source, text), EXIT_USAGE)
    if pid <= 1:
        raise LabError("%s: %d cannot own a lab (give the pid of the process whose end should "
                       "remove it)" % (source, pid), EXIT_USAGE)
    t = start_time(pid)
    if t is None:
        raise LabError("%s: no process %d is running" % (source, pid), EXIT_USAGE)
    return {"pid": pid, "start": t}


def alive(owner):
    return start_time(owner["pid"]) == owner["start"]


def spawn_watcher(st):
    """Start the lab's watcher and record its pid in the state file. Its standard streams go to
    /dev/null: a caller that reads `up`'s output to its end must not wait for the watcher."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PACKAGE_PARENT] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    p = subprocess.Popen([sys.executable, "-m", PACKAGE_NAME, "_watch", st["name"]],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                         cwd="/", env=env)
    st["watcher"] = p.pid
    save_state(st)


def watch_main(name):
    """The watcher's loop (`netlab _watch NAME`, started by spawn_watcher only)."""
    from .build import teardown     # build imports this module's users; import late
    me = os.getpid()
    while True:
        time.sleep(POLL_S)
        if not os.path.exists(state_path(name)):
            return EXIT_OK          # taken down by its owner (or by anyone)
        try:
            st = load_state(name)
        except (LabError, ValueError):
            continue                # being rewritten at this moment: look again
        w = st.get("watcher")
        if "owner" not in st or (w is not None and w != me):
            return EXIT_OK          # not (or no longer) the lab this watcher was started for
        if w is None:
            continue                # `up` has not recorded this watcher yet
        if alive(st["owner"]):
            continue
        log("lab %s: its owner, pid %d, has ended; removing the lab"
            % (name, st["owner"]["pid"]))
        teardown(st)
        return EXIT_OK
