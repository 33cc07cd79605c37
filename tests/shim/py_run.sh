#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one rank of the shim's Python test: the venv's Python with the shim
# preloaded here (not through the launcher, which would preload it into
# this shell too) and, for MPICH, mpi4py's MPICH extension. SHIM_LIB "-"
# runs without the shim (bench/shim_netlab.sh's baseline).
#   py_run.sh VENV SHIM_LIB openmpi|mpich SCRIPT [ARGS...]
venv=$1 lib=$2 flavor=$3
shift 3
if [ "$flavor" = mpich ]; then
  LD_LIBRARY_PATH="$venv/mpichlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  MPI4PY_MPIABI=mpich
  export LD_LIBRARY_PATH MPI4PY_MPIABI
fi
if [ "$lib" != - ]; then
  LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}"
  export LD_PRELOAD
fi
exec "$venv/bin/python" "$@"
