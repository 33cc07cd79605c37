#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What the network map costs on netlab: wsp-probe at its defaults on a
# cluster of N hosts (the time it reports, and the job's wall time), then a
# long wsp-bench coll run with the map attached that refreshes one round of
# it whenever --refresh-every seconds have passed between rows, and reports
# the refreshes' share of the run time. Needs root; the lab is removed again
# on exit.
#   bench/netmap_cost_netlab.sh [outdir] [hosts] [rate]   (defaults: results 16 100mbit)
# Environment: WSP_MPI (openmpi), WSP_REFRESH_EVERY (5 s), WSP_COLLS
# (allreduce,bcast), WSP_SIZES (64K,1M,16M), WSP_REPS (5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_map.sh"
out=${1:-$root/results}
hosts=${2:-16}
rate=${3:-100mbit}
mpi=${WSP_MPI:-openmpi}
name=wnc$(( $$ % 10000 ))
mkdir -p "$out"
"$root/scripts/deps.sh"
"$root/scripts/build.sh" "$mpi" >/dev/null
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate"
map="$out/netmap-cluster$hosts-$rate-$mpi.json"
wsp_lab_probe "$root" "$name" "$mpi" "$map"
wsp_netmap_args "$mpi" "$map"
"$root/scripts/netlab" run --name "$name" --mpi "$mpi" --ppn 1 "${netmap_args[@]}" --time-limit 3600 \
  --done-line "# wsp-bench coll: finished" --done-grace 60 -- \
  "$root/build/$mpi/tools/wsp-bench" coll --colls "${WSP_COLLS:-allreduce,bcast}" \
  --sizes "${WSP_SIZES:-64K,1M,16M}" --algs auto,mpi --reps "${WSP_REPS:-5}" \
  --refresh-every "${WSP_REFRESH_EVERY:-5}" --label "netlab-cluster$hosts-$rate-$mpi-refresh" \
  --json "$out/netmap-cost-netlab.json" </dev/null || [ $? = 124 ]
