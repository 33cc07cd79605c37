#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Reproduces the SimGrid figures of docs/sparse.md (the runs:
# docs/results/sparse.md, "Simulated cluster"): NBX, PEX, alltoallv and
# auto at p = 64 and 256 on a simulated cluster of 256 hosts with 1 Gbit/s
# NICs (50 us each), one peer per rank and 10% density, 1 KiB and 64 KiB.
# Simulated time does not depend on how busy this machine is.
# MPI_Alltoall(v) follow Open MPI's algorithm choices (SMPI's "ompi"
# selector); WSP_SG_SELECTOR=mpich or default picks others. WSP_SG_PS sets
# the rank counts (default "64 256").
#   bench/sparse_simgrid.sh [outdir]
# It takes long: p = 256 simulates every NBX poll of 256 ranks on one core
# (wall time: docs/results/simgrid.md, "Wall time of the simulations").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
mkdir -p "$out"
"$root/scripts/deps.sh"
"$root/scripts/build.sh" simgrid >/dev/null
plat="$out/cluster256.xml" hosts="$out/cluster256.hosts"
python3 "$root/lab/simgrid/wsp_platform.py" cluster --hosts 256 --bw 1Gbps --lat 50us \
  -o "$plat" --hostfile "$hosts"
cfg=(--cfg=smpi/send-is-detached-thresh:0 --cfg=smpi/grow-injected-times:no
     --cfg=smpi/iprobe:1e-6 --cfg=smpi/test:1e-6 --cfg=smpi/simulate-computation:no
     --cfg=smpi/coll-selector:${WSP_SG_SELECTOR:-ompi}
     --log=root.thres:warning --log=xbt_cfg.thres:warning)
for p in ${WSP_SG_PS:-64 256}; do
  iters=5
  [ "$p" -gt 128 ] && iters=3
  echo "== p=$p"
  smpirun -np "$p" -platform "$plat" -hostfile "$hosts" "${cfg[@]}" \
    "$root/build/simgrid/tools/wsp-bench" sparse --densities 1/p,0.1 --sizes 1K,64K \
    --iters $iters --reps 3 --warmup 12 --label "simgrid-cluster256-1Gbps-${WSP_SG_SELECTOR:-ompi}" \
    --json "$out/sparse-simgrid.json"
done
