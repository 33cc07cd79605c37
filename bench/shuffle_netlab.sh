#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# wsp-bench shuffle on a netlab cluster: s1 (synchronous rounds), s2 (unpaced
# servers), s3 (G-thinker's paced batches) and wsp_shuffle's adaptive pacing,
# each for DURATION seconds, goodput per host as a fraction of the NIC rate
# B. Needs root; the lab is removed again on exit, whatever happens.
#   bench/shuffle_netlab.sh [outdir] [hosts] [ranks-per-host] [rate] [duration]
#   (defaults: results 16 1 25mbit 60; the issue's second layout is "8 2")
# Environment: WSP_STRATEGIES (s1,s2,s3,adaptive), WSP_MPIS (openmpi),
# WSP_S3_RATE (s3's --target-rate; default B), WSP_LAB_NAME (shuf), WSP_REQ_SIZE
# (1K), WSP_FOLD (100), WSP_CALIBRATE (1: netlab calibrate ring,a2a first, to
# show that the CPU is not the limit), WSP_BENCH_ARGS (more options),
# WSP_OMPI_MCA (Open MPI MCA settings for every strategy, as name value
# pairs; empty for Open MPI's defaults; default: Open MPI's shuffle tuning
# in bench/tunings, "btl_tcp_eager_limit 262144 btl_tcp_max_send_size
# 262144"). Why: the responses (100 KiB at the default
# fold) are above Open MPI's TCP eager limit of 64 KiB, so each one waits
# for a rendezvous answer that queues behind the requester's own outgoing
# data; that held every strategy, and a plain MPI stream of 100 KiB
# messages, well below what the same stream gets sent eagerly
# (bench/mpi_stream_netlab.sh; docs/results/shuffle.md, "Eager responses").
# Before 2026-11-25 the default was "btl_tcp_links 2" (two TCP connections
# per pair, which helps rendezvous traffic both ways); with eager responses
# one connection measured as well or better (the same section). Since
# 2026-11-27 the engine sends its responses in eager pieces and needs no
# such setting (bench/shuffle_fault_netlab.sh); the baselines s1-s3 send
# whole responses and still do, so the setting stays for a fair comparison.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
hosts=${2:-16}
ppn=${3:-1}
rate=${4:-25mbit}
duration=${5:-60}
name=${WSP_LAB_NAME:-shuf}
default_mca=$(wsp_tunings openmpi shuffle | head -n 1)
default_mca=${default_mca#*: }
mkdir -p "$out"
"$root/scripts/deps.sh"
mpis=${WSP_MPIS:-openmpi}
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate"
if [ "${WSP_CALIBRATE:-1}" = 1 ]; then
  "$root/scripts/netlab" calibrate --name "$name" --only ring,a2a --seconds 5 \
    --json "$out/shuffle-netlab-calibrate.json"
fi
json="$out/shuffle-netlab.json"
echo "# load before the run: $(uptime)"
for m in $mpis; do
  label="netlab-cluster${hosts}x${ppn}-${rate}-$m"
  echo "== $label"
  s3=()
  [ -n "${WSP_S3_RATE:-}" ] && s3=(--target-rate "$WSP_S3_RATE")
  mca=()
  if [ "$m" = openmpi ]; then
    set -- ${WSP_OMPI_MCA-$default_mca}
    while [ $# -ge 2 ]; do mca+=(--mpi-arg=--mca --mpi-arg="$1" --mpi-arg="$2"); shift 2; done
    mcadesc=$(printf '%s' "${WSP_OMPI_MCA-$default_mca}" | tr ' ' '=')
    label="$label${mcadesc:+-$mcadesc}"
  fi
  # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize after the results are
  # written (docs/netlab.md): 60 s after wsp-bench's "finished" line netlab
  # ends such a job, and its exit code 124 is not an error here.
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn "$ppn" "${mca[@]}" \
    --time-limit $(( duration * 8 + 600 )) \
    --done-line "# wsp-bench shuffle: finished" --done-grace 60 -- \
    "$root/build/$m/tools/wsp-bench" shuffle \
    --strategies "${WSP_STRATEGIES:-s1,s2,s3,adaptive}" \
    --req-size "${WSP_REQ_SIZE:-1K}" --fold "${WSP_FOLD:-100}" \
    --seconds "$duration" --link-rate "$rate" "${s3[@]}" \
    --label "$label" --json "$json" ${WSP_BENCH_ARGS:-} || [ $? = 124 ]
done
echo "# load after the run: $(uptime)"
echo "# JSON lines appended to $json; plot: /usr/bin/python3 $root/python/wsp_report shuffle $json --out shuffle.png"
