#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The shim under a real Slurm: a one-node cluster of its own (munged,
# slurmctld and slurmd from Debian's packages, in a temporary directory,
# on ports of its own), then an unmodified MPI program started by srun
#   wsp-run srun -n 4 --mpi=PLUGIN PROGRAM ...    and
#   srun -n 4 --mpi=PLUGIN wsp-exec PROGRAM ...
# each of which must end with status 0, with PROGRAM's own checks passed on
# one job of 4 ranks (shim_colls --ranks 4) and the shim's report matching
# REGEX; wsp-run's preload must reach the ranks and not srun; and the same
# program under --mpi=none (ranks the MPI cannot join into one job) must
# fail, so that a launch the checks cannot see through is caught.
#   one_node.sh PLUGIN TOOLS PROGRAM REGEX
# PLUGIN is srun's --mpi plugin for this build's MPI (Debian's Open MPI:
# pmix, its MPICH: pmi2), TOOLS the directory of wsp-run and wsp-exec,
# PROGRAM shim_colls of the same build, REGEX as for tests/bench/expect.sh.
# Needs root (slurmd starts the job steps); exits 77 with "SKIP: reason"
# without it or without Slurm (scripts/deps.sh slurm), and fails instead in
# CI (WSP_CI=1). Everything it starts it stops, on failure too, and checks
# that nothing of it is left: the daemons by the pids it recorded, and the
# processes they started (slurmstepd detaches itself) by a variable only
# this run's processes carry. Runs in about 10 s.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
expect=$here/../bench/expect.sh

skip() {
  if [ "${WSP_CI:-0}" = 1 ]; then
    echo "FAIL: skipped in CI: $1"
    exit 1
  fi
  echo "SKIP: $1"
  exit 77
}
fail() {
  echo "FAIL: $*"
  exit 1
}

[ $# = 4 ] || { echo "usage: one_node.sh PLUGIN TOOLS PROGRAM REGEX" >&2; exit 2; }
plugin=$1 tools=$2 prog=$3 regex=$4
for f in "$tools/wsp-run" "$tools/wsp-exec" "$prog"; do
  [ -x "$f" ] || { echo "one_node.sh: '$f' is not an executable file" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || skip "needs root (slurmd starts the job steps, as root)"
for t in munged mungekey munge slurmctld slurmd srun sinfo squeue scancel python3; do
  command -v "$t" >/dev/null 2>&1 || skip "$t is not installed (scripts/deps.sh slurm)"
done
start=$SECONDS

# ---- cleanup: only what this run started ------------------------------------
dir=$(mktemp -d /tmp/wsp-slurm.XXXXXX) || fail "mktemp"
# munged wants its socket's directory reachable by everyone, its key not.
chmod 711 "$dir"
mkdir -m 700 "$dir/key"
mkdir -m 755 "$dir/run" "$dir/log" "$dir/state" "$dir/spool"
# Every process of this run but this script carries the marker (set on the
# commands below, not exported here).
marker="WSP_SLURM_TEST=$dir"
declare -A pid=()

# The pids of the processes whose environment holds the marker.
marked() {
  grep -lzxF -- "$marker" /proc/[0-9]*/environ 2>/dev/null |
    sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' | grep -vx $$
}
# stop PID...: SIGTERM, up to 15 s for them to end, then SIGKILL.
stop() {
  local p left i
  kill -TERM "$@" 2>/dev/null
  for ((i = 0; i < 150; i++)); do
    left=()
    for p in "$@"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
    ((${#left[@]})) || return 0
    sleep 0.1
  done
  echo "cleanup: SIGKILL to ${left[*]}"
  kill -KILL "${left[@]}" 2>/dev/null
}
cleanup() {
  local status=$? d rest
  set +e
  # Jobs still there (a hung step) end first: slurmd leaves steps running
  # when it stops.
  if [ -n "${pid[slurmctld]:-}" ] && kill -0 "${pid[slurmctld]}" 2>/dev/null; then
    env "$marker" scancel --quiet --full --user=root 2>/dev/null
  fi
  for d in slurmd slurmctld munged; do
    [ -z "${pid[$d]:-}" ] || stop "${pid[$d]}"
    wait "${pid[$d]:-0}" 2>/dev/null
  done
  # What they started and left (slurmstepd, a step's ranks).
  rest=$(marked)
  if [ -n "$rest" ]; then
    echo "cleanup: stopping what the daemons left: $(echo $rest)"
    stop $rest
  fi
  if ((status != 0)); then
    for d in munged slurmctld slurmd; do
      [ ! -s "$dir/log/$d.log" ] || { echo "--- $d.log (end)"; tail -n 15 "$dir/log/$d.log"; }
    done
  fi
  rm -rf "$dir"
  # Nothing of this run is left: no daemon started with its files, no
  # process with its marker.
  rest=$(pgrep -a -f -- "$dir"; marked)
  if [ -n "$rest" ]; then
    echo "FAIL: left behind: $rest"
    status=1
  else
    echo "ok: no process of the test is left (pgrep -f $dir, and the marker); $dir removed"
  fi
  echo "slurm test: $((SECONDS - start)) s"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- the cluster -------------------------------------------------------------
# Two ports free now (the kernel's choice), for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
[ -n "${slurmd_port:-}" ] || fail "no free ports"
node=$(hostname -s)
sock=$dir/run/munge.sock
mungekey --create --keyfile="$dir/key/munge.key" || fail "mungekey"
env "$marker" munged --foreground --socket="$sock" --key-file="$dir/key/munge.key" \
  --pid-file="$dir/run/munged.pid" --seed-file="$dir/key/munged.seed" \
  --log-file="$dir/log/munged.log" >>"$dir/log/munged.out" 2>&1 &
pid[munged]=$!
for ((i = 0; i < 100; i++)); do
  munge -n -S "$sock" >/dev/null 2>&1 && break
  kill -0 "${pid[munged]}" 2>/dev/null || { cat "$dir/log/munged.out"; fail "munged ended"; }
  sleep 0.1
done
munge -n -S "$sock" >/dev/null || fail "munged does not answer on $sock"

cat >"$dir/slurm.conf" <<EOF
# One node, this machine; every file in $dir.
ClusterName=wsptest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
# No cgroups: processes tracked by their parents, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=wsp Nodes=$node Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF=$dir/slurm.conf
env "$marker" slurmctld -D -f "$SLURM_CONF" >>"$dir/log/slurmctld.out" 2>&1 &
pid[slurmctld]=$!
env "$marker" slurmd -D -f "$SLURM_CONF" -N "$node" >>"$dir/log/slurmd.out" 2>&1 &
pid[slurmd]=$!
echo "slurm: slurmctld (pid ${pid[slurmctld]}, port $ctld_port), slurmd (pid ${pid[slurmd]}," \
     "port $slurmd_port), munged (pid ${pid[munged]}) on $node; $(srun --version)"
state=
for ((i = 0; i < 600; i++)); do
  for d in slurmctld slurmd; do
    kill -0 "${pid[$d]}" 2>/dev/null || { cat "$dir/log/$d.out"; fail "$d ended"; }
  done
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null)
  [ "$state" != idle ] || break
  sleep 0.1
done
[ "$state" = idle ] || fail "node $node not idle after 60 s (state '$state')"
echo "ok: node $node idle after $((SECONDS - start)) s"

# ---- the jobs ------------------------------------------------------------------
# srun passes this environment to the ranks (--export=ALL, its default).
export WSP_SHIM=force WSP_SHIM_REPORT=1 WSP_TRANSPORT=mpi
unset LD_PRELOAD
# 4 ranks on 2 CPUs: --overcommit.
srun_args=(-n 4 --overcommit --mpi="$plugin" --time=2)
args=(--big 5000 --ranks 4)
# run STATUS REGEX COMMAND...: expect.sh's checks, the run's time bounded.
run() {
  local status=$1 re=$2
  shift 2
  echo "\$ $*"
  env "$marker" timeout -k 10 60 "$expect" "$status" "$re" "$@"
  case $? in
    0) ;;
    124|137) fail "not done after 60 s: $*" ;;
    *) fail "$*" ;;
  esac
}

# wsp-run: the preload is on srun's --export, not in srun's environment.
out=$dir/preload.out
env "$marker" "$tools/wsp-run" srun -n 1 --time=1 bash -c \
  "touch '$dir/ready'; while [ ! -e '$dir/go' ]; do sleep 0.1; done; echo \"rank LD_PRELOAD=\$LD_PRELOAD\"" \
  >"$out" 2>&1 &
srun_pid=$!
for ((i = 0; i < 300; i++)); do
  [ ! -e "$dir/ready" ] || break
  kill -0 $srun_pid 2>/dev/null || { cat "$out"; fail "wsp-run srun bash ... ended early"; }
  sleep 0.1
done
[ -e "$dir/ready" ] || fail "the step of wsp-run srun bash ... did not start in 30 s"
srun_env=$(tr '\0' '\n' <"/proc/$srun_pid/environ" | grep '^LD_PRELOAD=')
srun_exe=$(readlink "/proc/$srun_pid/exe")
touch "$dir/go"
wait $srun_pid || { cat "$out"; fail "wsp-run srun bash ... failed"; }
lib=$("$tools/wsp-exec" --print-lib)
echo "srun ($srun_exe): ${srun_env:-no LD_PRELOAD}; $(cat "$out")"
[ "${srun_exe##*/}" = srun ] || fail "pid $srun_pid is $srun_exe, not srun"
[ -z "$srun_env" ] || fail "wsp-run put the preload in srun's own environment: $srun_env"
grep -qxF "rank LD_PRELOAD=$lib" "$out" || fail "the rank's LD_PRELOAD is not $lib"
echo "ok: the preload reaches the rank, not srun"

run 0 "$regex" "$tools/wsp-run" srun "${srun_args[@]}" "$prog" "${args[@]}"
run 0 "$regex" srun "${srun_args[@]}" "$tools/wsp-exec" "$prog" "${args[@]}"
# The control: ranks the MPI cannot join (no PMI) either fail in MPI_Init
# or run as singletons, which --ranks refuses.
echo "\$ srun -n 4 --overcommit --mpi=none $tools/wsp-exec $prog ${args[*]}   (must fail)"
ctl=$(env "$marker" timeout -k 10 60 srun -n 4 --overcommit --mpi=none --time=2 \
  "$tools/wsp-exec" "$prog" "${args[@]}" 2>&1)
ctl_status=$?
printf '%s\n' "$ctl" | grep -E "MPI_COMM_WORLD has [0-9]+ ranks|error occurred in MPI_Init|^srun: error" | sort | uniq -c
((ctl_status != 0)) || fail "shim_colls passed under --mpi=none: the checks cannot tell"
echo "ok: under --mpi=none the job fails (status $ctl_status)"
echo "ok: wsp-run srun and srun wsp-exec under Slurm $(srun --version | cut -d' ' -f2)," \
     "--mpi=$plugin"
