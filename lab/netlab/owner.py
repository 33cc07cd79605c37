# SPDX-License-Identifier: BSD-3-Clause
"""A lab that belongs to a process (`netlab up --owner-pid PID`).

A test or a benchmark script removes its lab in a `finally` or a shell trap, but nothing runs in
a process ended by SIGKILL (ctest's time limit, the OOM killer, `kill -9`), and its lab stayed
up. With an owner, `up` records the owner's pid and start time (so that a later process given
the same pid is not taken for it) and starts a watcher: a netlab process in a session of its
own, outside every lab namespace, that checks twice a second whether the owner still runs. When
the owner has ended and the lab is still up, the watcher removes the lab as `netlab down` would;
when the lab is taken down first (the normal case), the watcher ends within half a second. The
watcher never removes a lab it was not started for: it knows its lab by a token in the state
file, and ends as soon as the state file holds another (the lab was removed and a new one of
the same name built)."""

import contextlib
import os
import secrets
import subprocess
import time

from .base import EXIT_FAIL, EXIT_OK, EXIT_USAGE, LabError, self_command
from .build import _teardown
from .state import load_state, runtime_dir, save_state, state_lock, state_path

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
    """Start the lab's watcher. It is named by a token recorded in the state file before it
    starts, so that it knows its lab from the first look, even if `up` dies right after
    starting it. Its standard streams go to /dev/null (a caller that reads `up`'s output to its
    end must not wait for the watcher); what it has to say goes to the lab's runtime directory
    (watch.log), which the teardown removes with the lab."""
    st["watcher"] = {"token": secrets.token_hex(8)}
    save_state(st)
    argv, env = self_command("_watch", st["name"], st["watcher"]["token"])
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                         cwd="/", env=env)
    st["watcher"]["pid"] = p.pid
    save_state(st)


def _mine(name, token):
    """The lab's state if it is still the lab this watcher was started for, else None."""
    if not os.path.exists(state_path(name)):
        return None
    try:
        st = load_state(name)
    except (LabError, ValueError):
        return {}               # being rewritten at this moment: look again
    if "owner" not in st or st.get("watcher", {}).get("token") != token:
        return None
    return st


def watch_main(name, token):
    """The watcher's loop (`netlab _watch NAME TOKEN`, started by spawn_watcher only): once the
    owner has ended, the lab is removed under the state lock, after a last look at the state
    file under the same lock, so that a lab removed and built again under the same name in
    the meantime is left alone. A failed removal is retried 3 times, a second apart."""
    log_path = os.path.join(runtime_dir(name), "watch.log")
    while True:
        time.sleep(POLL_S)
        st = _mine(name, token)
        if st is None:
            return EXIT_OK          # taken down by its owner (or by anyone), or another lab
        if not st or alive(st["owner"]):
            continue
        for attempt in range(3):
            with state_lock():
                st = _mine(name, token)
                if st is None:
                    return EXIT_OK
                try:
                    if not st:
                        raise LabError("the state file could not be read")
                    _teardown(st, False)
                    return EXIT_OK
                except LabError as e:
                    with contextlib.suppress(OSError):
                        os.makedirs(os.path.dirname(log_path), exist_ok=True)
                        with open(log_path, "a") as f:
                            f.write("%s: owner pid %d ended; removing the lab failed (try %d "
                                    "of 3): %s\n" % (time.strftime("%Y-%m-%d %H:%M:%S"),
                                                      st.get("owner", {}).get("pid", -1),
                                                      attempt + 1, e))
            time.sleep(1)
        return EXIT_FAIL
