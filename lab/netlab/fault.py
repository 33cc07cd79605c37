# SPDX-License-Identifier: BSD-3-Clause
"""Faults injected into a running lab: a host's link rate changed, a host's link dropped for a
while, the processes of a host killed or stopped (`netlab fault ...`, docs/netlab.md).

Each acts on hosts of one lab (a name, names separated by commas, or "all") and touches only
that lab's objects:
- rate: replaces the tbf of the host's egress (eth0 in its namespace) and ingress (its port
  on the switch) with one at the new rate; the state file records it, so `status` shows it.
  Only hosts shaped by tbf at both ends (the cluster and twosite profiles) can be changed.
- down: sets the host's switch port down, so that every packet to and from the host is
  dropped (TCP retransmits, as over a cable pulled and plugged back), and up again after
  --for seconds.
- kill: sends a signal (KILL, STOP, CONT, TERM) to the processes running in the host's
  namespace whose command line contains --match.
"""

import os
import signal
import time

from .base import LabError, EXIT_USAGE, ip, log, run_cmd, tc
from .build import tbf_args
from .params import fmt_rate, parse_rate
from .state import load_state, save_state, state_lock

SIGNALS = {"KILL": signal.SIGKILL, "STOP": signal.SIGSTOP, "CONT": signal.SIGCONT,
           "TERM": signal.SIGTERM}


def find_host(st, name):
    for h in st["hosts"]:
        if h["name"] == name:
            return h
    raise LabError("no host %r in lab %s (hosts: %s)" % (
        name, st["name"], ", ".join(h["name"] for h in st["hosts"])), EXIT_USAGE)


def find_hosts(st, spec):
    """The hosts named by `spec`: one name, names separated by commas, or "all"."""
    if spec == "all":
        return [h["name"] for h in st["hosts"]]
    names = [x for x in spec.split(",") if x]
    if not names:
        raise LabError("no host given", EXIT_USAGE)
    for n in names:
        find_host(st, n)
    return names


def rate_ends(st, host):
    """The shaped ends of a host's link (its egress and its switch port): tbf only."""
    ends = [s for s in st["shaped"] if s.get("host") == host]
    if not ends or any(s["kind"] != "tbf" for s in ends):
        raise LabError("host %s is not shaped by tbf (profile %s): its rate cannot be changed"
                       % (host, st["profile"]), EXIT_USAGE)
    return ends


def set_rate(st, hosts, bps):
    """The hosts' NIC rate, both directions, to bps (tbf-shaped hosts only)."""
    for host in hosts:
        for s in rate_ends(st, host):
            tc(s["ns"], *tbf_args(s["dev"], bps))
    # Recorded under the lock, in the state as it is now: another netlab process may change
    # other hosts at the same time.
    with state_lock():
        cur = load_state(st["name"])
        for s in cur["shaped"]:
            if s.get("host") in hosts:
                s["rate"] = bps
        save_state(cur)
    log("%s: rate %s" % (",".join(hosts), fmt_rate(bps)))


def link_down(st, hosts, seconds):
    """The hosts' switch ports down for `seconds`, then up again (also when interrupted)."""
    down = []
    try:
        for host in hosts:
            h = find_host(st, host)
            ip(h["sw_ns"], "link", "set", h["swdev"], "down")
            down.append(h)
        log("%s: link down for %g s" % (",".join(hosts), seconds))
        time.sleep(seconds)
    finally:
        for h in down:
            ip(h["sw_ns"], "link", "set", h["swdev"], "up")
        log("%s: link up" % ",".join(h["name"] for h in down))


def signal_procs(st, hosts, sig, match):
    """Sends sig to the processes in the hosts' namespaces whose command line contains match;
    returns their pids (an error when there is none)."""
    toks = []
    for host in hosts:
        p = run_cmd(["ip", "netns", "pids", find_host(st, host)["ns"]], check=False)
        toks += (p.stdout or "").split()
    pids = []
    for tok in toks:
        if not tok.isdigit() or int(tok) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % tok, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if match in cmd:
            pids.append(int(tok))
    if not pids:
        raise LabError("no process on %s matches %r" % (",".join(hosts), match))
    for pid in pids:
        try:
            os.kill(pid, SIGNALS[sig])
        except ProcessLookupError:
            pass
    log("%s: SIG%s to %s" % (",".join(hosts), sig, " ".join(map(str, pids))))
    return pids


def cmd_fault(st, args):
    """Checks every argument first, so that a mistake is reported at once and not after
    --after seconds; then waits and injects the fault."""
    hosts = find_hosts(st, args.host)
    if args.after < 0:
        raise LabError("--after: %g is negative" % args.after, EXIT_USAGE)
    bps = None
    if args.kind == "rate":
        if not args.rate:
            raise LabError("fault rate: give the new rate, e.g. --link-rate 50mbit", EXIT_USAGE)
        try:
            bps = parse_rate(args.rate)
        except LabError as e:
            raise LabError("--link-rate: %s" % e, EXIT_USAGE)
        for host in hosts:
            rate_ends(st, host)
    elif args.kind == "down":
        if not (args.seconds and args.seconds > 0):
            raise LabError("fault down: give --for SECONDS > 0", EXIT_USAGE)
    elif not args.match:
        raise LabError("fault kill: give --match TEXT (part of the command line of the "
                       "processes to signal)", EXIT_USAGE)
    if args.after:
        time.sleep(args.after)
    if args.kind == "rate":
        set_rate(st, hosts, bps)
    elif args.kind == "down":
        link_down(st, hosts, args.seconds)
    else:
        signal_procs(st, hosts, args.signal, args.match)
    return 0
