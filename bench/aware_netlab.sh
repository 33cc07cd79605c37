#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Trees built from a network map on netlab's hetero profile (hosts whose
# pairs are shaped to 1, 0.5, 0.25 or 0.1 of the NIC rate B: 10 to 100
# Mbit/s at the default B): wsp-probe measures the lab under Open MPI, then
# wsp-bench coll runs bcast and reduce with the map attached (WSP_NETMAP):
# the aware tree beside wirespeed's binomial tree, auto and the MPI's own
# call, side by side in one job. Prints the time per call and the ratios
# (python/wsp_report aware). Needs root; the lab is removed again
# on exit.
#   bench/aware_netlab.sh [outdir] [hosts] [rate]   (defaults: results 8 100mbit)
# Environment: WSP_COLLS (bcast,reduce), WSP_SIZES (4K,16K,64K,256K,1M,4M),
# WSP_REPS (5), WSP_SEED (1: the pair-rate matrix), WSP_MPI (openmpi),
# WSP_ALGS (binomial,aware,auto,mpi; add chain to see the paths of long
# messages beside wirespeed's chain in rank order).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_map.sh"
out=${1:-$root/results}
hosts=${2:-8}
rate=${3:-100mbit}
mpi=${WSP_MPI:-openmpi}
case "$rate" in *mbit) ;; *) echo "aware_netlab.sh: rate must be given in mbit (e.g. 100mbit), got '$rate'" >&2; exit 2 ;; esac
name=wan$(( $$ % 10000 ))
mkdir -p "$out"
"$root/scripts/deps.sh"
"$root/scripts/build.sh" "$mpi" >/dev/null
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up hetero --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate" --seed "${WSP_SEED:-1}"
"$root/scripts/netlab" status --name "$name"
map="$out/netmap-hetero$hosts-$rate.json"
label="netlab-hetero$hosts-$rate-$mpi"
json="$out/aware-netlab.json"
wsp_lab_probe "$root" "$name" "$mpi" "$map"
wsp_netmap_args "$mpi" "$map"
"$root/scripts/netlab" run --name "$name" --mpi "$mpi" --ppn 1 "${netmap_args[@]}" --time-limit 3600 \
  --done-line "# wsp-bench coll: finished" --done-grace 60 -- \
  "$root/build/$mpi/tools/wsp-bench" coll --colls "${WSP_COLLS:-bcast,reduce}" \
  --sizes "${WSP_SIZES:-4K,16K,64K,256K,1M,4M}" --algs "${WSP_ALGS:-binomial,aware,auto,mpi}" \
  --reps "${WSP_REPS:-5}" --label "$label" --json "$json" </dev/null || [ $? = 124 ]
python3 "$root/python/wsp_report" aware "$json" --labels "$label" --link-mbit "${rate%mbit}"
