#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The collectives on netlab's cloud profile (every TCP flow capped at F below
# the NIC rate B): wirespeed at its defaults (WSP_TRANSPORT=auto, which
# measures whether lanes pay at the first large collective) beside the MPI's
# own call at its defaults and under each hand tuning, each in one job; then
# busbw / B and the ratios. Needs root; the lab is removed again on exit.
#   bench/cloud_netlab.sh [outdir] [hosts] [rate] [flow-cap]
#   (defaults: results 8 100mbit 20mbit; one rank per host)
# Environment: WSP_COLLS (allreduce,bcast,allgather,alltoall), WSP_SIZES
# (16M), WSP_REPS (3), WSP_MPIS ("openmpi mpich"), WSP_TIMEOUT_S (1200: a job
# that runs longer is ended and reported missing).
# The hand tunings run only the collectives they tune, because Open MPI's
# own allgather with btl_tcp_links 8 did not finish a 16 MiB call within
# 30 min on this lab (docs/results/p2p.md, "The lanes under the
# collectives"). Open MPI: its best algorithms (ring allreduce, pipelined
# bcast with 32 KiB segments) with btl_tcp_links 1, 4 and 8; MPICH: its
# ring allreduce, and its pipelined ring and scatter + ring allgather bcast
# (bench/tunings).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
hosts=${2:-8}
rate=${3:-100mbit}
cap=${4:-20mbit}
case "$rate" in *mbit) ;; *) echo "cloud_netlab.sh: rate must be given in mbit (e.g. 100mbit), got '$rate'" >&2; exit 2 ;; esac
name=wcc$(( $$ % 10000 ))
colls=${WSP_COLLS:-allreduce,bcast,allgather,alltoall}
sizes=${WSP_SIZES:-16M}
reps=${WSP_REPS:-3}
mpis=${WSP_MPIS:-openmpi mpich}
mkdir -p "$out"
"$root/scripts/deps.sh"
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cloud --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate" --flow-cap "$cap"
json="$out/cloud-netlab.json"
stamp=$(date +%Y%m%d%H%M%S)
labels=

# run MPI LABEL COLLS [NAME VALUE ...]: one wsp-bench coll job.
run() {
  local m=$1 label="$2-$stamp" which=$3
  shift 3
  wsp_setting_args "$m" "$@"
  labels="$labels$label,"
  echo "== $label ($which)"
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 "${setting_args[@]}" \
    --time-limit "${WSP_TIMEOUT_S:-1200}" --done-line "# wsp-bench coll: finished" --done-grace 60 -- \
    "$root/build/$m/tools/wsp-bench" coll --colls "$which" --sizes "$sizes" --algs auto,mpi \
    --reps "$reps" --iters 1 --warmup 1 --label "$label" --json "$json" --quiet </dev/null ||
    echo "   (job ended with $?)"
}

# Only the collectives of COLLS that are in the run's list.
pick() {
  local c keep=
  for c in ${1//,/ }; do [[ ",$colls," == *",$c,"* ]] && keep="$keep$c,"; done
  printf '%s' "${keep%,}"
}

ompi_ring="coll_tuned_use_dynamic_rules 1 coll_tuned_allreduce_algorithm 4"
ompi_pipe="coll_tuned_use_dynamic_rules 1 coll_tuned_bcast_algorithm 3 coll_tuned_bcast_algorithm_segmentsize 32768"
for m in $mpis; do
  run "$m" "$m-default" "$colls"
  if [ "$m" = openmpi ]; then
    for links in 1 4 8; do
      c=$(pick allreduce); [ -z "$c" ] || run "$m" "$m-ring-links$links" "$c" $ompi_ring btl_tcp_links $links
      c=$(pick bcast); [ -z "$c" ] || run "$m" "$m-pipeline32K-links$links" "$c" $ompi_pipe btl_tcp_links $links
      if [ "$links" != 8 ]; then
        c=$(pick allgather,alltoall); [ -z "$c" ] || run "$m" "$m-links$links" "$c" btl_tcp_links $links
      fi
    done
  else
    c=$(pick allreduce); [ -z "$c" ] || run "$m" "$m-ring" "$c" $(wsp_tuning mpich allreduce-ring)
    c=$(pick bcast); [ -z "$c" ] || run "$m" "$m-ring-32K" "$c" $(wsp_tuning mpich bcast-ring-32K)
    c=$(pick bcast); [ -z "$c" ] || run "$m" "$m-scatter-ring" "$c" $(wsp_tuning mpich bcast-scatter-ring)
  fi
done

/usr/bin/python3 "$root/python/wsp_report" tuned "$json" --link-mbit "${rate%mbit}" \
  --labels "$labels" --stamp "$stamp"
echo "# JSON lines appended to $json (labels end in -$stamp)"
