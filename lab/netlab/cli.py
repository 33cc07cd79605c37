# SPDX-License-Identifier: BSD-3-Clause
"""The netlab command line: argument parsing, one function per subcommand, exit codes."""

import argparse
import json
import os
import sys
import time

from . import version
from .base import EXIT_OK, EXIT_USAGE, LabError, json_out, list_netns, log, require_root
from .build import BUILDERS, Builder, doctor, teardown
from .fault import SIGNALS, cmd_fault as fault_main
from .owner import parse_owner, spawn_watcher, watch_main
from .params import DEFAULTS, DELAY_KEYS, WAN_DELAY_KEYS, fmt_duration, fmt_rate, merge_params
from .run import MPIS, run_job, snapshot, write_standin
from .traffic import CALIBRATE_TESTS
from .state import (ADDR_BLOCK, NAME_RE, all_states, allocate, check_name, new_state,
                    pick_lab, runtime_dir, save_state, state_lock, state_path)
from .traffic import calibrate, flow_main


class _Deprecated(argparse.Action):
    """An old name of an option (docs/tools.md): stores its value where the new name does and
    warns once, naming the new one. Not shown by --help."""

    def __init__(self, option_strings, dest, new=None, **kw):
        self.new = new
        self.warned = False
        super().__init__(option_strings, dest, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        if not self.warned:
            log("warning: %s is deprecated, use %s" % (option_string, self.new))
            self.warned = True
        setattr(namespace, self.dest, values)


def _deprecated(p, old, new, dest, **kw):
    """`old` as a deprecated name of the option `new` of parser p (same dest, same type)."""
    p.add_argument(old, action=_Deprecated, new=new, dest=dest, help=argparse.SUPPRESS,
                   default=argparse.SUPPRESS, **kw)


def _name_arg(args):
    """--name of down/status/run/calibrate, checked before it names a file."""
    if getattr(args, "name", None) is not None:
        try:
            check_name(args.name)
        except LabError as e:
            raise LabError("--name: %s" % e, e.code)
    return args.name


def print_params(st):
    p = st["params"]
    items = ["hosts=%d" % p["hosts"], "rate=%s" % fmt_rate(p["rate"]),
             "tcp_cc=%s" % p.get("tcp_cc", "default")]
    if st["profile"] == "twosite":
        items += ["wan_rate=%s" % fmt_rate(p["wan_rate"]), "flow_cap=%s" % fmt_rate(p["flow_cap"])]
    if st["profile"] == "cloud":
        items += ["flow_cap=%s" % fmt_rate(p["flow_cap"])]
    for k in DELAY_KEYS + WAN_DELAY_KEYS:
        if k in p:
            items.append("%s=%s" % (k, ("%g%%" % (100 * p[k])) if k.endswith("loss")
                                    else fmt_duration(p[k])))
    if st["profile"] == "hetero":
        items += ["seed=%d" % p["seed"], "classes=%s" % p["classes"], "weights=%s" % p["weights"]]
    print("  " + " ".join(items))


def cmd_up(args):
    require_root()
    profile, params, name = merge_params(args)
    if name is not None:
        check_name(name)
    owner = None
    if args.owner_pid is not None:
        owner = parse_owner(args.owner_pid, "--owner-pid")
    elif os.environ.get("NETLAB_OWNER_PID"):
        owner = parse_owner(os.environ["NETLAB_OWNER_PID"], "NETLAB_OWNER_PID")
    with state_lock():
        name, index = allocate(name)
        st = new_state(name, index, profile, params)
        if owner:
            st["owner"] = owner
        save_state(st)
    t0 = time.time()
    try:
        b = Builder(st)
        BUILDERS[profile](b)
        b.finish()
        os.makedirs(runtime_dir(name), exist_ok=True)
        write_standin(st)
        st["status"] = "up"
        save_state(st)
        if owner:
            spawn_watcher(st)
    except BaseException as e:
        log("up failed, removing what was created: %s" % e)
        try:
            teardown(st)
        except LabError as e2:
            log(str(e2))
        if isinstance(e, LabError) and "File exists" in str(e):
            raise LabError(str(e) + "\n(an object with this lab's name already exists)")
        raise
    print("lab %s up: profile %s, %d hosts, subnet %s, root-ns address %s (%.1fs)"
          % (name, profile, params["hosts"], st["subnet"], st["root_ip"], time.time() - t0))
    print_params(st)
    if owner:
        print("  removed when process %d ends (watcher pid %d)"
              % (owner["pid"], st["watcher"]["pid"]))
    return EXIT_OK


def cmd_down(args):
    require_root()
    _name_arg(args)
    if args.all:
        sts = all_states()
        if not sts:
            print("no lab is up")
        for st in sts:
            teardown(st, scan=args.scan)
            print("lab %s down" % st["name"])
        return EXIT_OK
    if args.name and not os.path.exists(state_path(args.name)):
        if args.scan:
            teardown({"name": args.name, "prefix": args.name + "-"}, scan=True)
            print("lab %s: removed objects named %s-* (no state file)" % (args.name, args.name))
            return EXIT_OK
        raise LabError("no state file for lab %r (use --scan to remove objects named %s-*)"
                       % (args.name, args.name))
    st = pick_lab(args.name)
    if st.get("status") == "creating" and st.get("pid") and \
            os.path.exists("/proc/%d" % st["pid"]) and st["pid"] != os.getpid():
        log("warning: `netlab up` (pid %d) for this lab may still be running" % st["pid"])
    teardown(st, scan=args.scan)
    print("lab %s down" % st["name"])
    return EXIT_OK


def cmd_status(args):
    require_root()
    _name_arg(args)
    if not args.name and len(all_states()) != 1:
        sts = all_states()
        if not sts:
            print("no lab is up")
            return EXIT_OK
        print("%-8s %-8s %-9s %5s %-16s %s" % ("name", "profile", "status", "hosts", "subnet",
                                                "root-ns address"))
        for st in sts:
            print("%-8s %-8s %-9s %5d %-16s %s" % (st["name"], st["profile"], st["status"],
                                                   st["params"]["hosts"], st["subnet"],
                                                   st.get("root_ip", "-")))
        return EXIT_OK
    st = pick_lab(args.name)
    if args.json == "":         # `status --json` without FILE (deprecated): standard output
        log("warning: --json without FILE is deprecated, use --json -")
        args.json = "-"
    if args.json:
        json_out(args.json, st)
        return EXIT_OK
    print("lab %s: profile %s, status %s, subnet %s, root-ns %s on %s"
          % (st["name"], st["profile"], st["status"], st["subnet"], st.get("root_ip"),
             st.get("root_dev")))
    print_params(st)
    if "owner" in st:
        print("  owner: process %d (watcher pid %s)"
              % (st["owner"]["pid"], st.get("watcher", {}).get("pid")))
    present = set(list_netns())
    missing = [n for n in st["created"]["netns"] if n not in present]
    print("  namespaces: %d recorded, %d missing%s" % (len(st["created"]["netns"]), len(missing),
          (" (" + ", ".join(missing) + ")") if missing else ""))
    print("  %-6s %-14s %-15s %s" % ("host", "netns", "address", "site"))
    for h in st["hosts"]:
        print("  %-6s %-14s %-15s %s" % (h["name"], h["ns"], h["ip"], h.get("site", "-")))
    if st["profile"] == "hetero" and "matrix" in st:
        print("  pair rate as a fraction of B (row = sender):")
        for row in st["matrix"]:
            print("   " + " ".join("%5.2f" % x for x in row))
    if args.counters:
        print("  %-22s %-12s %-12s %14s %14s %8s" % ("device", "kind", "role", "tx bytes",
                                                     "shaper bytes", "drops"))
        for k, c in snapshot(st).items():
            print("  %-22s %-12s %-12s %14d %14d %8d" % (k, c["kind"], c["role"], c["tx"],
                                                         c["shaper_bytes"], c["shaper_drops"]))
    return EXIT_OK


def cmd_run(args):
    require_root()
    return run_job(pick_lab(_name_arg(args)), args)


def cmd_fault(args):
    require_root()
    return fault_main(pick_lab(_name_arg(args)), args)


def cmd_calibrate(args):
    require_root()
    return calibrate(pick_lab(_name_arg(args)), args)


def cmd_doctor(args):
    """Check that this machine can host a lab (exit 0) or say why not (exit 4)."""
    require_root()
    tools = doctor()
    print("ok: namespaces, veth, bridge, tbf, htb, u32, bpf work; tools: " +
          " ".join("%s=%s" % (k, "yes" if v else "no") for k, v in tools.items()))
    return EXIT_OK


def parser(prog="netlab"):
    ap = argparse.ArgumentParser(
        prog=prog, description="Emulated cluster of network namespaces with shaped links "
        "(addresses from %s, one /24 per lab). See docs/netlab.md." % ADDR_BLOCK)
    ap.add_argument("--version", action="version", version="%s (wirespeed) %s" % (prog, version()))
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")

    up = sub.add_parser("up", help="create a lab", description="Create a lab from a profile "
                        "(cluster, twosite, hetero, cloud) or a JSON spec file. Defaults: " +
                        "; ".join("%s: %s" % (k, ", ".join("%s=%s" % kv for kv in v.items()))
                                  for k, v in DEFAULTS.items()))
    up.add_argument("profile", nargs="?", choices=sorted(BUILDERS), help="lab profile")
    up.add_argument("--spec", help="JSON file with {\"profile\": ..., \"hosts\": ..., ...}; "
                    "command-line options override it")
    up.add_argument("--name", help="lab name = prefix of all its objects (default wl<index>; "
                    "%s)" % NAME_RE.pattern.strip("^$"))
    up.add_argument("--hosts", type=int, help="number of hosts (namespaces)")
    up.add_argument("--link-rate", dest="rate", metavar="RATE",
                    help="host NIC rate B, both directions (e.g. 100mbit)")
    _deprecated(up, "--rate", "--link-rate", "rate")
    up.add_argument("--wan-rate", dest="wan_rate", help="twosite: WAN capacity W")
    up.add_argument("--flow-cap", dest="flow_cap", help="twosite: per-TCP-flow cap F on the WAN; cloud: on every host's egress")
    up.add_argument("--seed", type=int, help="hetero: seed of the pair-rate matrix")
    up.add_argument("--classes", help="hetero: rate classes as fractions of B (e.g. 1,0.5,0.1)")
    up.add_argument("--weights", help="hetero: probability weights of the classes")
    up.add_argument("--delay", help="added to every host's egress (e.g. 10ms; a round trip "
                    "between hosts pays it twice); any of --delay, --jitter, --loss routes the "
                    "hosts' links through netlab's delay line")
    up.add_argument("--jitter", help="each frame's delay is drawn uniformly from delay +- "
                    "jitter (frames may overtake each other, as with netem)")
    up.add_argument("--loss", help="probability that a frame leaving a host is dropped "
                    "(e.g. 0.1%% or 0.001)")
    up.add_argument("--wan-delay", dest="wan_delay", help="twosite: delay of the WAN, each "
                    "direction")
    up.add_argument("--wan-jitter", dest="wan_jitter", help="twosite: jitter of the WAN")
    up.add_argument("--wan-loss", dest="wan_loss", help="twosite: loss of the WAN, each "
                    "direction")
    up.add_argument("--tcp-cc", dest="tcp_cc", help="TCP congestion control of the hosts' "
                    "connections, set on their routes (default: $NETLAB_TCP_CC, else cubic; "
                    "\"default\": the machine's own)")
    up.add_argument("--owner-pid", dest="owner_pid", metavar="PID",
                    help="the lab belongs to process PID: a watcher removes it once PID has "
                    "ended, even by SIGKILL (default: $NETLAB_OWNER_PID; none: the lab stays "
                    "until `down`)")
    up.set_defaults(func=cmd_up)

    dn = sub.add_parser("down", help="remove a lab", description="Remove exactly the objects "
                        "recorded in the lab's state file (works after a crash too).")
    dn.add_argument("--name", help="lab name (default: the only lab up)")
    dn.add_argument("--all", action="store_true", help="remove every lab that has a state file")
    dn.add_argument("--scan", action="store_true", help="also remove namespaces/links named "
                    "<name>-* that are missing from the state file (recovery)")
    dn.set_defaults(func=cmd_down)

    stp = sub.add_parser("status", help="show labs", description="List labs, or show one lab.")
    stp.add_argument("--name")
    stp.add_argument("--counters", action="store_true", help="show shaped-device counters")
    stp.add_argument("--json", metavar="FILE", nargs="?", const="",
                     help="append the lab's state as one JSON line to FILE (-: standard output)")
    stp.set_defaults(func=cmd_status)

    rn = sub.add_parser("run", help="run an MPI program on the lab hosts",
                        description="Start an MPI program with each lab namespace as a host: "
                        "ranks on one host share memory, ranks on different hosts talk TCP over "
                        "the shaped links. Usage: netlab run [options] -- PROGRAM ARGS")
    rn.add_argument("--name")
    rn.add_argument("--mpi", choices=list(MPIS), default="openmpi")
    rn.add_argument("--ppn", type=int, default=1, help="ranks per host (default 1)")
    rn.add_argument("--np", type=int, help="number of ranks (default hosts x ppn)")
    rn.add_argument("--hosts", type=int, help="use the first N hosts")
    rn.add_argument("--time-limit", dest="timeout", type=float, default=600, metavar="SEC",
                    help="kill the job after this many seconds (exit 124; default 600)")
    _deprecated(rn, "--timeout", "--time-limit", "timeout", type=float)
    rn.add_argument("--done-line", metavar="TEXT", help="once the job prints a line containing "
                    "TEXT, give it --done-grace seconds to exit, then kill it (exit 124 as for "
                    "--time-limit); for MPIs that can hang in MPI_Finalize")
    rn.add_argument("--done-grace", type=float, default=60, metavar="SEC",
                    help="seconds allowed after --done-line (default 60)")
    rn.add_argument("--check-counters", action="store_true", help="print per-device byte "
                    "counters of the shaped links moved during the run")
    rn.add_argument("--expect-bytes", type=int, default=0, help="fail (exit 3) unless at least "
                    "this many bytes went through the shaped host egress devices")
    rn.add_argument("--json-counters", help="write the counter deltas to this JSON file")
    rn.add_argument("--mpi-arg", action="append", help="extra argument for mpirun/mpiexec "
                    "(repeatable), e.g. --mpi-arg=--mca --mpi-arg=btl_tcp_links --mpi-arg=2")
    rn.add_argument("-v", "--verbose", action="store_true")
    rn.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS")
    rn.set_defaults(func=cmd_run)

    fa = sub.add_parser("fault", help="inject a fault into a running lab",
                        description="rate: change a host's NIC rate (both directions) to "
                        "--link-rate; "
                        "down: drop every packet to and from a host for --for seconds, then "
                        "restore its link; kill: send --signal to the processes on a host whose "
                        "command line contains --match. --after waits first, so that a fault "
                        "can be scheduled into a run started beside it (netlab fault ... &).")
    fa.add_argument("kind", choices=["rate", "down", "kill"], help="what to do")
    fa.add_argument("host", help="the host (h3), hosts separated by commas (h1,h4), or all")
    fa.add_argument("--name")
    fa.add_argument("--link-rate", dest="rate", metavar="RATE",
                    help="rate: the host's new NIC rate (e.g. 12500kbit)")
    _deprecated(fa, "--rate", "--link-rate", "rate")
    fa.add_argument("--for", dest="seconds", type=float, help="down: seconds the link stays down")
    fa.add_argument("--signal", choices=sorted(SIGNALS), default="KILL",
                    help="kill: the signal (default KILL)")
    fa.add_argument("--match", help="kill: text the processes' command lines contain")
    fa.add_argument("--after", type=float, default=0, help="seconds to wait before the fault")
    fa.set_defaults(func=cmd_fault)

    ca = sub.add_parser("calibrate", help="measure the lab with iperf3 / TCP flows",
                        description="pair: iperf3 between two hosts (fraction of B); ring: all "
                        "hosts send to their right neighbour at once; a2a: every host sends to "
                        "every other at once (netlab's own TCP flow helper); twosite: one vs k "
                        "WAN streams (fraction of F); cloud: pair is one stream (fraction of F), "
                        "pairk k streams (fraction of B); rtt: ping round trips (expected: twice "
                        "the delay); window: one flow with its window clamped (fraction of "
                        "window/RTT); lossflow: one flow under the lab's loss (fraction of "
                        "Mathis's MSS/RTT x 1.22/sqrt(p)). Fractions near 1 mean the lab, not "
                        "the CPU, is the limit.")
    ca.add_argument("--name")
    ca.add_argument("--seconds", type=int, default=3, metavar="SEC",
                    help="measured seconds per test (default 3, plus 1 s warm-up)")
    ca.add_argument("--streams", type=int, help="k for iperf3 -P k (default: twosite 4, "
                    "cloud 8)")
    ca.add_argument("--only", help="comma list of tests: " + ",".join(CALIBRATE_TESTS))
    ca.add_argument("--window", type=int, help="window: the receiver's window clamp in bytes "
                    "(default 65536)")
    ca.add_argument("--json", metavar="FILE", help="append the results as one JSON line to FILE "
                    "(-: standard output)")
    ca.set_defaults(func=cmd_calibrate)

    dc = sub.add_parser("doctor", help="check that this machine can host a lab",
                        description="Exit 0 if namespaces, veth, bridge, tbf, htb, u32 and bpf work; "
                        "exit 4 with a reason otherwise.")
    dc.set_defaults(func=cmd_doctor)

    return ap


def flow_parser(prog="netlab _flow"):
    """The internal helper's own parser (traffic.run_flows starts it in each host): kept out of
    the commands' parser, so that neither --help nor an error's list of commands names it."""
    fl = argparse.ArgumentParser(prog=prog, add_help=False)
    fl.add_argument("--port", type=int, required=True)
    fl.add_argument("--dests", default="")
    fl.add_argument("--start", type=float, required=True)
    fl.add_argument("--warmup", type=float, default=1.0)
    fl.add_argument("--seconds", type=float, default=3.0)
    fl.add_argument("--window-clamp", dest="window_clamp", type=int, default=0)
    fl.set_defaults(func=flow_main)
    return fl


def main(argv=None, prog="netlab"):
    argv = sys.argv[1:] if argv is None else list(argv)
    # --version anywhere before "--" (what follows is the MPI program's), as in every tool.
    head = argv[:argv.index("--")] if "--" in argv else argv
    if "--version" in head:
        print("%s (wirespeed) %s" % (prog, version()))
        return EXIT_OK
    if argv[:1] == ["_watch"] and len(argv) == 3:   # owner.spawn_watcher's process
        return watch_main(check_name(argv[1]), argv[2])
    if argv[:1] == ["_flow"]:
        args = flow_parser("%s _flow" % prog).parse_args(argv[1:])
        return args.func(args)
    ap = parser(prog)
    args = ap.parse_args(argv)
    if not getattr(args, "func", None):
        ap.print_help()
        return EXIT_USAGE
    try:
        return args.func(args)
    except LabError as e:
        log("error: %s" % e)
        return e.code
    except KeyboardInterrupt:
        log("interrupted")
        return 130

