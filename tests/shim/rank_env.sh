#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a program with one environment variable set differently on one rank,
# for the shim's check that its settings agree across ranks.
#   rank_env.sh RANK NAME VALUE PROGRAM [ARGS...]
# On the rank of MPI_COMM_WORLD numbered RANK (as the launcher tells it:
# OMPI_COMM_WORLD_RANK for Open MPI, PMI_RANK for MPICH's Hydra) NAME is
# set to VALUE; every other rank runs PROGRAM unchanged.
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: rank_env.sh RANK NAME VALUE PROGRAM [ARGS...]" >&2
  exit 2
fi
want=$1 name=$2 value=$3
shift 3
me=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}
if [ -z "$me" ]; then
  echo "rank_env.sh: the launcher gave no rank (OMPI_COMM_WORLD_RANK or PMI_RANK)" >&2
  exit 2
fi
[ "$me" != "$want" ] || export "$name=$value"
exec "$@"
