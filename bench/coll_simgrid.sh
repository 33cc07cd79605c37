#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# wsp-bench coll under SimGrid at p = 256 (a simulated cluster of 256 hosts,
# 1 Gbit/s NICs, 50 us): every algorithm of every collective, auto and the
# simulated MPI's own collective (SMPI's "ompi" selector: Open MPI's
# choices), then how often auto picked the fastest algorithm and its worst
# loss against the fastest. Simulated time does not depend on how busy this
# machine is, and a simulation is deterministic: two calls per row (after one
# warm-up) are enough.
#   bench/coll_simgrid.sh [outdir] [p]
# Environment: WSP_COLLS (all), WSP_SIZES (8,512,32K,1M,16M), WSP_SG_SELECTOR
# (ompi; mpich for MPICH's choices), WSP_SG_BW and WSP_SG_LAT (the NIC's rate
# and latency, 1Gbps and 50us; e.g. 100Mbps and 10us for netlab's cluster, to
# judge small-message latency free of the 2-core lab's CPU scheduling),
# WSP_SG_FACTORS (default: SMPI's own piecewise bandwidth and latency
# factors by message size; flat: every factor 1, so the simulated network is
# a plain alpha-beta network; docs/simgrid.md, "How SMPI's network differs
# from TCP", says why both are worth a look),
# WSP_SG_CFG (more smpirun words, e.g. --cfg=smpi/bcast:binomial_tree to
# force the simulated MPI's algorithm; the label does not name them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
p=${2:-256}
case ${WSP_SG_FACTORS:-default} in
  default|flat) ;;
  *) echo "coll_simgrid.sh: WSP_SG_FACTORS must be default or flat, not '$WSP_SG_FACTORS'" >&2
     exit 2 ;;
esac
mkdir -p "$out"
"$root/scripts/deps.sh"
"$root/scripts/build.sh" simgrid >/dev/null
plat="$out/cluster$p.xml" hosts="$out/cluster$p.hosts"
bw=${WSP_SG_BW:-1Gbps} lat=${WSP_SG_LAT:-50us}
python3 "$root/lab/simgrid/wsp_platform.py" cluster --hosts "$p" --bw "$bw" --lat "$lat" \
  -o "$plat" --hostfile "$hosts"
# SMPI's default eager/rendezvous switch (sends under 64 KiB are detached),
# as in real MPIs; the sparse tests force synchronous sends, collectives need not.
cfg=(--cfg=smpi/grow-injected-times:no
     --cfg=smpi/iprobe:1e-6 --cfg=smpi/test:1e-6 --cfg=smpi/simulate-computation:no
     --cfg=smpi/coll-selector:${WSP_SG_SELECTOR:-ompi}
     --log=root.thres:warning --log=xbt_cfg.thres:warning)
[ "${WSP_SG_FACTORS:-default}" = flat ] &&
  cfg+=(--cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1)
read -r -a extra <<< "${WSP_SG_CFG:-}"
cfg+=("${extra[@]}")
# The label names the latency only when it is not the default, so that runs
# with the defaults keep the labels of the earlier data.
label="simgrid-cluster$p-$bw${WSP_SG_LAT:+-$lat}-${WSP_SG_SELECTOR:-ompi}"
[ "${WSP_SG_FACTORS:-default}" = flat ] && label="$label-flat"
smpirun -np "$p" -platform "$plat" -hostfile "$hosts" "${cfg[@]}" \
  "$root/build/simgrid/tools/wsp-bench" coll --colls "${WSP_COLLS:-bcast,reduce,allreduce,gather,scatter,allgather,alltoall}" \
  --sizes "${WSP_SIZES:-8,512,32K,1M,16M}" --iters 2 --reps 1 --warmup 1 \
  --label "$label" --json "$out/coll-simgrid.json"
/usr/bin/python3 "$root/python/wsp_report" table "$out/coll-simgrid.json" --labels "$label" --metric time
/usr/bin/python3 "$root/python/wsp_report" table "$out/coll-simgrid.json" --labels "$label" --auto-summary
