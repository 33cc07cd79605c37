#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The multi-site collectives under SimGrid at the source's scale: two sites
# of 64 hosts (1 Gbit/s NICs, 50 us) joined by a 10 Gbit/s WAN of 10 ms,
# full duplex (wsp_platform.py twosite --wan-duplex split).
#   compare  bcast and allreduce with the multi-site algorithms, the
#            baselines far_first and two_tier, auto and the simulated MPI's
#            call (SMPI's ompi selector), with the number of connections n
#            the model picks; then the simulated MPI's call forced to the
#            algorithms a user would pick by hand (one job per setting).
#   sweep    the multi-site algorithms for each n (WSP_WAN_CONNECTIONS),
#            to see where more connections stop helping (the knee).
# bench/sites_knee.py then prints each n's time beside the source's formula
# L + M/min(n.B, W) + 2M/B, the model's prediction, and the model's n.
# SMPI's network factors are flat (every bandwidth and latency factor 1):
# its default latency factors multiply a large message's latency by up to
# 11.6, which over a 10 ms WAN makes every crossing a tenth of a second
# (docs/results/sites.md, "SimGrid: two sites of 64"). A simulation is
# deterministic: one call per row after one warm-up is enough.
#   bench/sites_simgrid.sh [outdir]              (default: results)
# Environment: WSP_SITES_PARTS ("compare sweep"), WSP_SIZES (16M),
# WSP_SWEEP (the n to try: "1 2 ... 16"), WSP_SG_HOSTS (128, split in two
# sites), WSP_SG_BW (1Gbps), WSP_SG_LAT (50us), WSP_SG_WAN_BW (10Gbps),
# WSP_SG_WAN_LAT (10ms).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
parts=${WSP_SITES_PARTS:-compare sweep}
sizes=${WSP_SIZES:-16M}
sweep=${WSP_SWEEP:-$(seq -s ' ' 1 16)}
hosts=${WSP_SG_HOSTS:-128}
bw=${WSP_SG_BW:-1Gbps} lat=${WSP_SG_LAT:-50us}
wan_bw=${WSP_SG_WAN_BW:-10Gbps} wan_lat=${WSP_SG_WAN_LAT:-10ms}
for part in $parts; do
  case $part in
    compare|sweep) ;;
    *) echo "sites_simgrid.sh: WSP_SITES_PARTS: unknown part '$part' (compare, sweep)" >&2
       exit 2 ;;
  esac
done
for n in $sweep; do
  case $n in
    ''|*[!0-9]*) echo "sites_simgrid.sh: WSP_SWEEP: '$n' is not a number of connections" >&2
                 exit 2 ;;
  esac
done
case $hosts in
  ''|*[!0-9]*) echo "sites_simgrid.sh: WSP_SG_HOSTS must be a number, not '$hosts'" >&2; exit 2 ;;
esac
if [ "$hosts" -lt 4 ]; then
  echo "sites_simgrid.sh: WSP_SG_HOSTS must be at least 4 (two sites of two)" >&2
  exit 2
fi
mkdir -p "$out"
"$root/scripts/deps.sh"
"$root/scripts/build.sh" simgrid >/dev/null
half=$((hosts / 2))
sites="ranks:0-$((half - 1));$half-$((hosts - 1))"
plat="$out/twosite$hosts.xml" hostfile="$out/twosite$hosts.hosts"
python3 "$root/lab/simgrid/wsp_platform.py" twosite --hosts "$hosts" --bw "$bw" --lat "$lat" \
  --wan-bw "$wan_bw" --wan-lat "$wan_lat" --wan-duplex split -o "$plat" --hostfile "$hostfile"
cfg=(--cfg=smpi/grow-injected-times:no --cfg=smpi/simulate-computation:no
     --cfg=smpi/iprobe:1e-6 --cfg=smpi/test:1e-6
     --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1
     --log=root.thres:warning --log=xbt_cfg.thres:warning)
json="$out/sites-simgrid.json"
stamp=$(date +%Y%m%d%H%M%S)
base="simgrid-twosite$hosts-$bw-$wan_bw-$wan_lat"
labels=

# run LABEL COLLS ALGS [smpirun words...]: one simulated wsp-bench coll job.
run() {
  local label="$1-$stamp" colls=$2 algs=$3
  shift 3
  labels="$labels$label,"
  echo "== $label"
  WSP_SITES="$sites" smpirun -np "$hosts" -platform "$plat" -hostfile "$hostfile" \
    "${cfg[@]}" --cfg=smpi/coll-selector:ompi "$@" \
    "$root/build/simgrid/tools/wsp-bench" coll --sites --colls "$colls" --algs "$algs" \
    --sizes "$sizes" --iters 1 --reps 1 --warmup 1 --label "$label" --json "$json"
}

for part in $parts; do
  case $part in
    compare)
      run "$base-model" bcast,allreduce sites,sites_chain,far_first,two_tier,auto,mpi
      # What a user of the simulated MPI could force instead (SMPI's names
      # of Open MPI's and MPICH's algorithms).
      for a in scatter_LR_allgather scatter_rdb_allgather ompi_pipeline; do
        run "$base-smpi-bcast-$a" bcast mpi --cfg=smpi/bcast:$a
      done
      for a in rab_rdb lr ompi_ring_segmented redbcast; do
        run "$base-smpi-allreduce-$a" allreduce mpi --cfg=smpi/allreduce:$a
      done
      ;;
    sweep)
      for n in $sweep; do
        WSP_WAN_CONNECTIONS=$n run "$base-n$n" bcast,allreduce sites,sites_chain
      done
      ;;
  esac
done
python3 "$root/bench/sites_knee.py" "$json" --labels "${labels%,}" --nic-bw "$bw" \
  --wan-bw "$wan_bw" --wan-lat "$wan_lat"
