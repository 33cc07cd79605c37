# SPDX-License-Identifier: BSD-3-Clause
"""Starting MPI jobs with each lab namespace as one host: the ssh stand-in, the hostfile, the
launcher command lines and environment of Open MPI and MPICH, rank placement, the job's time
limits, and the byte counters of the shaped devices around the job."""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time

from .base import (EXIT_COUNTERS, EXIT_ENV, EXIT_USAGE, LabError, ip, kill_ns_pids,
                   kill_tree, log, tc)
from .state import runtime_dir

MPIS = ("openmpi", "mpich")

STANDIN = r"""#!/bin/sh
# netlab ssh stand-in for lab %(name)s: "<this> [ssh-style options] HOST COMMAND..."
# runs COMMAND inside the network namespace HOST, which must be a host of this lab.
while [ $# -gt 0 ]; do
  case "$1" in
    -l|-p|-o|-i|-F|-E|-b|-c|-m|-J|-L|-R|-D|-W|-w) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ]; then echo "netlab stand-in: no host given" >&2; exit 255; fi
host="${1#*@}"; shift
case " %(hosts)s " in
  *" $host "*) ;;
  *) echo "netlab stand-in: '$host' is not a host of lab %(name)s" >&2; exit 255 ;;
esac
# A UTS namespace gives each host its own hostname (= namespace name): MPI libraries name
# shared-memory segments after the hostname, and /dev/shm is shared by all namespaces.
cmd="$*"
export NETLAB_HOST="$host"
exec ip netns exec "$host" unshare --uts sh -c 'hostname "$NETLAB_HOST" && exec sh -c "$0"' "$cmd"
"""


def standin_text(st):
    return STANDIN % {"name": st["name"], "hosts": " ".join(h["ns"] for h in st["hosts"])}


def write_standin(st):
    path = os.path.join(runtime_dir(st["name"]), "ssh-standin")
    with open(path, "w") as f:
        f.write(standin_text(st))
    os.chmod(path, 0o755)
    st["standin"] = path
    return path


def place_ranks(n_lab_hosts, ppn, hosts=None, np_=None):
    """(hosts used, ranks) of `run --ppn/--hosts/--np` on a lab of n_lab_hosts hosts. Ranks go
    in blocks of ppn: 0..ppn-1 on h0, and so on."""
    if ppn < 1:
        raise LabError("--ppn must be at least 1 (got %d)" % ppn, EXIT_USAGE)
    if hosts is not None and hosts < 1:
        raise LabError("--hosts must be at least 1 (got %d)" % hosts, EXIT_USAGE)
    if np_ is not None and np_ < 1:
        raise LabError("--np must be at least 1 (got %d)" % np_, EXIT_USAGE)
    if hosts:
        nh = hosts
    elif np_:
        nh = -(-np_ // ppn)
    else:
        nh = n_lab_hosts
    if nh > n_lab_hosts:
        raise LabError("need %d hosts at --ppn %d, lab has %d" % (nh, ppn, n_lab_hosts),
                       EXIT_USAGE)
    n = np_ or nh * ppn
    if n > nh * ppn:
        raise LabError("--np %d does not fit %d hosts x --ppn %d" % (n, nh, ppn), EXIT_USAGE)
    return nh, n


def mpi_command(st, mpi, np_, ppn, hosts, prog, extra, hostfile, standin, mpiexec="mpiexec"):
    """The launcher's argv, the environment it needs on top of the caller's, and the text of
    its hostfile. Nothing is written or looked up here."""
    if mpi == "openmpi":
        hf_text = "".join("%s slots=%d\n" % (h["ns"], ppn) for h in hosts)
        # --bind-to none: every "host" would otherwise bind its first rank to core 0.
        # plm_rsh_agent: each namespace is a host reached through the stand-in; the daemons
        # find each other over the lab subnet (oob), the ranks over eth0 only (btl).
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
               "-np", str(np_), "--hostfile", hostfile, "--map-by", "slot",
               "--mca", "plm_rsh_agent", standin, "--mca", "plm_rsh_no_tree_spawn", "1",
               "--mca", "btl", "tcp,self,vader", "--mca", "btl_tcp_if_include", "eth0",
               "--mca", "oob_tcp_if_include", st["subnet"]]
        # several PMIx daemons share /dev/shm: the hash store avoids dstore's clashes
        env = {"PMIX_MCA_gds": "hash", "OMPI_MCA_btl_base_warn_component_unused": "0"}
    elif mpi == "mpich":
        hf_text = "".join("%s:%d\n" % (h["ns"], ppn) for h in hosts)
        # -localhost: Hydra's proxies call back to the root namespace's address on the lab
        cmd = [mpiexec, "-launcher", "ssh", "-launcher-exec", standin, "-localhost",
               st["root_ip"], "-f", hostfile, "-n", str(np_)]
        # without UCX_TLS, UCX may use shared memory between namespaces (same /dev/shm and
        # hostname) and bypass the shaped links
        env = {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "eth0"}
    else:
        raise LabError("--mpi must be one of %s (got %r)" % (", ".join(MPIS), mpi), EXIT_USAGE)
    return cmd + list(extra) + list(prog), env, hf_text


def build_mpi_command(st, mpi, np_, ppn, hosts, prog, extra):
    """mpi_command with its files written: the stand-in (again if it went missing) and a
    hostfile for this process. Returns (argv, full environment, hostfile path)."""
    rd = runtime_dir(st["name"])
    os.makedirs(rd, exist_ok=True)
    standin = st.get("standin") or write_standin(st)
    if not os.path.exists(standin):
        standin = write_standin(st)
    hf = os.path.join(rd, "hostfile.%s.%d" % (mpi, os.getpid()))
    mpiexec = "mpiexec"
    if mpi == "openmpi":
        if shutil.which("mpirun") is None:
            raise LabError("mpirun (Open MPI) not found", EXIT_ENV)
    elif mpi == "mpich":
        mpiexec = shutil.which("mpiexec.mpich")
        if mpiexec is None:
            raise LabError("mpiexec.mpich not found", EXIT_ENV)
    cmd, extra_env, hf_text = mpi_command(st, mpi, np_, ppn, hosts, prog, extra, hf, standin,
                                          mpiexec)
    with open(hf, "w") as f:
        f.write(hf_text)
    env = dict(os.environ)
    env.update(extra_env)
    return cmd, env, hf


# ----------------------------------------------------------------------------- counters

def dev_counters(ns, dev):
    p = ip(ns, "-s", "-j", "link", "show", "dev", dev, check=False)
    tx = rx = 0
    try:
        s = json.loads(p.stdout)[0]["stats64"]
        tx, rx = s["tx"]["bytes"], s["rx"]["bytes"]
    except (ValueError, KeyError, IndexError):
        pass
    q = tc(ns, "-s", "-j", "qdisc", "show", "dev", dev, check=False)
    qbytes = qdrops = 0
    try:
        for e in json.loads(q.stdout):
            if e.get("root"):
                qbytes, qdrops = e.get("bytes", 0), e.get("drops", 0)
    except ValueError:
        pass
    return {"tx": tx, "rx": rx, "shaper_bytes": qbytes, "shaper_drops": qdrops}


def snapshot(st):
    return {"%s/%s" % (s["ns"], s["dev"]): dict(dev_counters(s["ns"], s["dev"]), **s)
            for s in st["shaped"]}


def host_egress_bytes(snap):
    return sum(c["shaper_bytes"] for c in snap.values() if c["role"] == "host-egress")


# ----------------------------------------------------------------------------- run

def check_run_args(args):
    """Usage errors of `run` that need no lab: program, time limits."""
    prog = list(args.program)
    if prog and prog[0] == "--":
        prog = prog[1:]
    if not prog:
        raise LabError("no program given: netlab run [options] -- PROGRAM ARGS", EXIT_USAGE)
    if not args.timeout > 0:
        raise LabError("--time-limit must be > 0 seconds (got %s)" % args.timeout, EXIT_USAGE)
    if not args.done_grace >= 0:
        raise LabError("--done-grace must be >= 0 seconds (got %s)" % args.done_grace, EXIT_USAGE)
    if args.done_line is not None and not args.done_line:
        raise LabError("--done-line must not be empty", EXIT_USAGE)
    if args.expect_bytes < 0:
        raise LabError("--expect-bytes must be >= 0 (got %d)" % args.expect_bytes, EXIT_USAGE)
    return prog


def run_job(st, args):
    """`netlab run` on lab st: start the job, enforce --time-limit / --done-line, report the
    counters. Returns the exit code."""
    if st.get("status") != "up":
        raise LabError("lab %s is not up (status %s)" % (st["name"], st.get("status")))
    prog = check_run_args(args)
    if os.path.sep in prog[0] or os.path.exists(prog[0]):
        prog[0] = os.path.abspath(prog[0])
    ppn = args.ppn
    all_hosts = st["hosts"]
    nh, np_ = place_ranks(len(all_hosts), ppn, args.hosts, args.np)
    hosts = all_hosts[:nh]
    cmd, env, hf = build_mpi_command(st, args.mpi, np_, ppn, hosts, prog, args.mpi_arg or [])
    if args.verbose:
        log("running: " + " ".join(cmd))
    before = snapshot(st) if (args.check_counters or args.expect_bytes or args.json_counters) else None
    t0 = time.time()
    # With --done-line, the job's output passes through a reader thread that
    # notes when the line appears; from then on the job has --done-grace
    # seconds to exit (an MPI that hangs in MPI_Finalize after the program
    # has finished would otherwise hold the run until --time-limit).
    done_at = []
    proc = subprocess.Popen(cmd, env=env, start_new_session=True,
                            stdout=subprocess.PIPE if args.done_line else None)
    reader = None
    if args.done_line:
        def pump():
            for raw in iter(proc.stdout.readline, b""):
                sys.stdout.buffer.write(raw)
                sys.stdout.flush()
                if not done_at and args.done_line.encode() in raw:
                    done_at.append(time.time())
        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
    try:
        rc = None
        deadline = t0 + args.timeout
        while rc is None:
            try:
                rc = proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                now = time.time()
                if done_at and now > done_at[0] + args.done_grace:
                    log("the job printed %r %.0f s ago and has not exited: killing it"
                        % (args.done_line, now - done_at[0]))
                elif now > deadline:
                    log("timeout after %ss: killing the MPI job" % args.timeout)
                else:
                    continue
                kill_tree(proc)
                kill_ns_pids([h["ns"] for h in hosts])
                rc = 124
    except KeyboardInterrupt:
        kill_tree(proc)
        kill_ns_pids([h["ns"] for h in hosts])
        rc = 130
    finally:
        with contextlib.suppress(OSError):
            os.unlink(hf)
        if reader is not None:
            reader.join(timeout=5)
    elapsed = time.time() - t0
    if before is not None:
        after = snapshot(st)
        rows = []
        for k, c in after.items():
            b = before[k]
            rows.append((k, c["role"], c["tx"] - b["tx"], c["shaper_bytes"] - b["shaper_bytes"]))
        moved = sum(r[3] for r in rows if r[1] == "host-egress")
        print("netlab: counters over %.2fs (%s, %d ranks on %d hosts):" % (elapsed, args.mpi,
              np_, nh), file=sys.stderr)
        if args.check_counters:
            for r in rows:
                if r[2] or r[3]:
                    print("  %-24s %-12s tx %12d  shaped %12d" % r, file=sys.stderr)
        print("netlab: bytes through shaped host egress: %d" % moved, file=sys.stderr)
        if args.json_counters:
            with open(args.json_counters, "w") as f:
                json.dump({"elapsed": elapsed, "host_egress_bytes": moved,
                           "devices": [dict(zip(("dev", "role", "tx", "shaped"), r))
                                       for r in rows]}, f, indent=1)
        if args.expect_bytes and moved < args.expect_bytes:
            log("COUNTER CHECK FAILED: %d bytes through shaped links < expected %d"
                % (moved, args.expect_bytes))
            return EXIT_COUNTERS if rc == 0 else rc
        if args.expect_bytes:
            print("netlab: counter check ok (%d >= %d expected)" % (moved, args.expect_bytes),
                  file=sys.stderr)
    return rc
