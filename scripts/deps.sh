#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian/Ubuntu packages (apt) that a job needs, when they are
# missing; safe to run again. Packages come in sets, so that each job
# installs only what it uses:
#   scripts/deps.sh [--list] [SET ...]     (no SET: every set)
# The main job (scripts/demo.sh) asks for core, openmpi, lab and plot; the
# tests (scripts/test.sh) and the benchmarks for every set. --list prints
# the packages of the sets, one per line, and installs nothing.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/deps.sh [--list] [SET ...]

Installs the Debian packages of the named sets that are missing (as root;
otherwise lists them and fails). Without a SET: every set.

  core     compiler, CMake, Ninja, pkg-config, Python 3, jansson, OpenSSL
  openmpi  Open MPI (the main build)
  mpich    MPICH (the second build of the tests)
  simgrid  SimGrid SMPI (the simulated build)
  lab      iperf3, iproute2, procps, ethtool, ping (netlab)
  plot     matplotlib (the demo's and wirespeed-report's figures)
  fuzz     clang 14 and its sanitizer runtimes (the fuzz targets)
  test     gfortran (the shim's Fortran tests), clang-format 14 (the format test)
  netpipe  NetPIPE over TCP and Open MPI (the lab's check in docs/results/netlab.md)
  slurm    Slurm's controller, node daemon and client, munge (tests/slurm: a
           one-node cluster of the test's own; the packages' own services are
           not used)

  --list   print the packages of the sets and install nothing
EOF
}

# set -> packages, and the commands that must exist once they are in.
declare -A pkgs=(
  [core]="build-essential cmake ninja-build pkg-config python3 libjansson-dev libssl-dev"
  [openmpi]="openmpi-bin libopenmpi-dev"
  [mpich]="mpich libmpich-dev"
  [simgrid]="libsimgrid-dev"
  [lab]="iperf3 iproute2 procps ethtool iputils-ping"
  [plot]="python3-matplotlib"
  [fuzz]="clang-14 libclang-rt-14-dev"
  [test]="gfortran clang-format-14"
  [netpipe]="netpipe-tcp netpipe-openmpi"
  [slurm]="slurmctld slurmd slurm-client munge"
)
declare -A tools=(
  [core]="cmake ninja" [openmpi]="mpicc" [mpich]="mpicc.mpich mpiexec.mpich"
  [simgrid]="smpicc smpirun" [lab]="iperf3 ip ethtool ping" [plot]="" [fuzz]="clang-14"
  [test]="gfortran clang-format-14" [netpipe]="NPtcp"
  [slurm]="slurmctld slurmd srun sinfo munged mungekey"
)
all=(core openmpi mpich simgrid lab plot fuzz test netpipe slurm)

list=0
sets=()
for a in "$@"; do
  case "$a" in
    -h|--help) usage; exit 0 ;;
    --list) list=1 ;;
    -*) echo "deps: unknown option '$a' (see --help)" >&2; exit 2 ;;
    *) [ -n "${pkgs[$a]+x}" ] || { echo "deps: unknown set '$a'; the sets are: ${all[*]}" >&2; exit 2; }
       sets+=("$a") ;;
  esac
done
((${#sets[@]})) || sets=("${all[@]}")

if ((list)); then
  for s in "${sets[@]}"; do printf '%s\n' ${pkgs[$s]}; done
  exit 0
fi

have() { command -v "$1" >/dev/null 2>&1; }
pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

need_pkgs=()
for s in "${sets[@]}"; do
  for p in ${pkgs[$s]}; do pkg_installed "$p" || need_pkgs+=("$p"); done
done
if ((${#need_pkgs[@]})); then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing packages: ${need_pkgs[*]}" >&2
    echo "deps: run as root (or install them) and try again" >&2
    exit 1
  fi
  echo "deps: installing ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi
for s in "${sets[@]}"; do
  for t in ${tools[$s]}; do
    have "$t" || { echo "deps: $t still missing after install (set $s)" >&2; exit 1; }
  done
done
