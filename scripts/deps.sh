#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs what wirespeed's build, tests and demo need, when it is missing.
# Debian/Ubuntu (apt). Safe to run again: it only installs what is absent.
set -euo pipefail

need_pkgs=()
have() { command -v "$1" >/dev/null 2>&1; }
pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

for p in build-essential cmake ninja-build pkg-config python3 gfortran \
         openmpi-bin libopenmpi-dev mpich libmpich-dev libsimgrid-dev \
         iperf3 netpipe-tcp netpipe-openmpi iproute2 procps \
         libjansson-dev libssl-dev python3-matplotlib clang-14 libclang-rt-14-dev \
         clang-format-14; do
  pkg_installed "$p" || need_pkgs+=("$p")
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
for t in cmake ninja mpicc mpicc.mpich mpiexec.mpich smpicc smpirun clang-14 clang-format-14; do
  have "$t" || { echo "deps: $t still missing after install" >&2; exit 1; }
done
