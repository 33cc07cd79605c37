#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Reproduces the loopback figures of docs/sparse.md (the runs:
# docs/results/sparse.md, "Loopback"): wsp-bench sparse at
# 16 ranks on this machine, under Open MPI and MPICH, densities 1/p, 10%, 50%
# and 1 KiB / 64 KiB messages. Loopback is CPU-bound (16 ranks share the
# cores): it measures overheads, not networks.
#   bench/sparse_loopback.sh [outdir] [np]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
np=${2:-16}
mkdir -p "$out"
"$root/scripts/deps.sh"
"$root/scripts/build.sh" openmpi >/dev/null
"$root/scripts/build.sh" mpich >/dev/null
args=(sparse --densities 1/p,0.1,0.5 --sizes 1K,64K --warmup 12)
echo "== Open MPI, np=$np"
mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np "$np" \
  "$root/build/openmpi/tools/wsp-bench" "${args[@]}" --iters 20 --reps 25 \
  --label loopback-openmpi --json "$out/sparse-loopback.json"
# MPICH 4.0 busy-polls when ranks outnumber cores (docs/results/machines.md),
# so fewer rounds. Many short repetitions rather than a few long ones: with 16
# ranks on 2 cores one repetition's time swings with the scheduler (forced pex
# took very different times per round in different runs of the same command:
# docs/results/sparse.md, "Loopback"), and the median of 25 interleaved
# repetitions is steadier than that of 7.
echo "== MPICH, np=$np"
mpiexec.mpich -np "$np" "$root/build/mpich/tools/wsp-bench" "${args[@]}" --iters 10 --reps 11 \
  --label loopback-mpich --json "$out/sparse-loopback.json"
