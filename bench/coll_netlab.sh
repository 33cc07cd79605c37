#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# wsp-bench coll on a netlab cluster: allreduce and bcast, every algorithm,
# auto, wirespeed's native row and the plain MPI collective, under Open MPI
# and under MPICH, then busbw as a fraction of the NIC rate B. Needs root;
# the lab is removed again on exit.
#   bench/coll_netlab.sh [outdir] [hosts] [ranks-per-host] [rate]
#   (defaults: results 8 1 100mbit; the issue's second table is "4 4")
# Environment: WSP_COLLS (allreduce,bcast), WSP_SIZES (8,64,512,4K,1M,16M,64M),
# WSP_MPIS ("openmpi mpich"), WSP_REPS (3), WSP_MPICH_ENV (NAME=VALUE pairs,
# space-separated, given to MPICH's ranks with -genv and appended to its
# label; e.g. "UCX_RNDV_THRESH=262144", with which UCX sends the chain
# broadcast's segments eagerly: docs/results/coll.md, "MPICH: UCX's
# rendezvous").
# After each MPI's run, a line "cpu-busy: ..." tells how busy the two cores
# were (scripts/cpu-busy).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
hosts=${2:-8}
ppn=${3:-1}
rate=${4:-100mbit}
name=wcb$(( $$ % 10000 ))
mkdir -p "$out"
"$root/scripts/deps.sh"
mpis=${WSP_MPIS:-openmpi mpich}
mpich_env=()
read -r -a mpich_kvs <<< "${WSP_MPICH_ENV:-}" # split on blanks, no globbing
for kv in "${mpich_kvs[@]}"; do
  case $kv in
    [A-Za-z_]*=*) mpich_env+=(--mpi-arg=-genv --mpi-arg="${kv%%=*}" --mpi-arg="${kv#*=}") ;;
    *) echo "coll_netlab.sh: WSP_MPICH_ENV: '$kv' is not NAME=VALUE" >&2; exit 2 ;;
  esac
done
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate"
json="$out/coll-netlab.json"
labels=
for m in $mpis; do
  label="netlab-cluster${hosts}x${ppn}-${rate}-$m"
  envargs=()
  if [ "$m" = mpich ] && [ ${#mpich_env[@]} -gt 0 ]; then
    envargs=("${mpich_env[@]}")
    label="$label-$(IFS=-; printf '%s' "${mpich_kvs[*]}")"
  fi
  labels="$labels$label,"
  echo "== $label"
  # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize after the results are
  # written (docs/netlab.md): 60 s after wsp-bench's "finished" line netlab
  # ends such a job, and its exit code 124 is not an error here.
  "$root/scripts/cpu-busy" "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn "$ppn" "${envargs[@]}" --time-limit 3600 \
    --done-line "# wsp-bench coll: finished" --done-grace 60 -- \
    "$root/build/$m/tools/wsp-bench" coll --colls "${WSP_COLLS:-allreduce,bcast}" \
    --sizes "${WSP_SIZES:-8,64,512,4K,1M,16M,64M}" --reps "${WSP_REPS:-3}" \
    --label "$label" --json "$json" || [ $? = 124 ]
done
mbit=${rate%mbit}
/usr/bin/python3 "$root/python/wsp_report" table "$json" --link-mbit "$mbit" \
  --labels "$labels"
