#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# wsp-bench sparse on a netlab cluster (16 hosts, 25 Mbit/s NICs, one rank
# per host, Open MPI over TCP through the shaped links), beside the same
# command on loopback. Needs root. The lab is removed again on exit.
#   bench/sparse_netlab.sh [outdir] [hosts] [rate]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
hosts=${2:-16}
rate=${3:-25mbit}
name=wsb$(( $$ % 10000 ))
mkdir -p "$out"
"$root/scripts/deps.sh"
"$root/scripts/build.sh" openmpi >/dev/null
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate"
args=(sparse --densities ${WSP_DENSITIES:-1/p,0.1,0.5} --sizes ${WSP_SIZES:-1K,64K} --warmup 12 --iters 20 --reps 5)
echo "== netlab cluster, $hosts hosts x 1 rank, NIC $rate"
"$root/scripts/netlab" run --name "$name" --mpi openmpi --time-limit 1800 --check-counters -- \
  "$root/build/openmpi/tools/wsp-bench" "${args[@]}" \
  --label "netlab-cluster$hosts-$rate" --json "$out/sparse-netlab.json"
echo "== loopback, $hosts ranks"
mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np "$hosts" \
  "$root/build/openmpi/tools/wsp-bench" "${args[@]}" \
  --label "loopback-np$hosts" --json "$out/sparse-netlab.json"
