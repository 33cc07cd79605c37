#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Configures and builds one flavour of wirespeed into build/<flavour>.
#   scripts/build.sh openmpi|mpich|asan|simgrid|fuzz [extra cmake args]
# CI builds use -DWSP_WERROR=ON (warnings are errors).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:?usage: build.sh openmpi|mpich|asan|simgrid|fuzz [extra cmake args]}
shift
if [ "$flavour" = --help ] || [ "$flavour" = -h ]; then
  echo "usage: scripts/build.sh openmpi|mpich|asan|simgrid|fuzz [extra cmake args]"
  echo "Configures and builds one flavour into build/<flavour>"
  echo "(scripts/deps.sh installs what it needs)."
  exit 0
fi
common=(-G Ninja -DWSP_WERROR=ON)
case "$flavour" in
  openmpi) args=() ;;
  mpich)   args=(-DMPI_C_COMPILER=mpicc.mpich -DMPI_Fortran_COMPILER=mpif90.mpich
                 -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)"
                 -DWSP_LAB_TESTS=OFF) ;;
  asan)    args=(-DWSP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DWSP_LAB_TESTS=OFF) ;;
  simgrid) args=(-DWSP_SIMGRID=ON -DCMAKE_C_COMPILER=smpicc) ;;
  # The parsers under libFuzzer: the library and the fuzz targets only.
  fuzz)    args=(-DWSP_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 -DWSP_BUILD_TOOLS=OFF
                 -DWSP_BUILD_TESTS=OFF -DWSP_LAB_TESTS=OFF) ;;
  *) echo "build.sh: unknown flavour '$flavour' (openmpi, mpich, asan, simgrid, fuzz)" >&2; exit 2 ;;
esac
cmake -S "$root" -B "$root/build/$flavour" "${common[@]}" "${args[@]}" "$@" >/dev/null
cmake --build "$root/build/$flavour"
