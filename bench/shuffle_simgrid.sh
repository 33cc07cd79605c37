#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# wsp-bench shuffle under SimGrid: p simulated hosts with one rank each
# (NICs of rate B, 50 us), every strategy (s1, s2, s3 at B, adaptive) one
# after the other. SimGrid shares links as a fluid: no packets, no queue
# overflow, no retransmission timeouts, so this shows what the strategies do
# on an ideal network, not TCP's behaviour (netlab shows that,
# bench/shuffle_netlab.sh). Simulated time does not depend on how busy this
# machine is; the wall time does (docs/results/simgrid.md, "Wall time of the
# simulations"; the runs: docs/results/shuffle.md, "Under SimGrid").
#   bench/shuffle_simgrid.sh [outdir] [p] [rate] [seconds]
# Environment: WSP_STRATEGIES (s1,s2,s3,adaptive), WSP_BENCH_ARGS (more
# options of wsp-bench shuffle, e.g. "--dest random"), WSP_SG_SELECTOR (the
# simulated MPI's collectives, ompi or mpich; docs/simgrid.md says why
# SMPI's default is not used).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
p=${2:-16}
rate=${3:-25mbit}
secs=${4:-30}
mkdir -p "$out"
"$root/scripts/deps.sh"
"$root/scripts/build.sh" simgrid >/dev/null
# SimGrid writes bandwidths as 25Mbps where tc writes 25mbit.
bw=$(echo "$rate" | sed -E 's/([kmg])bit$/\U\1bps/; s/KBPS$/kbps/; s/MBPS$/Mbps/; s/GBPS$/Gbps/')
plat="$out/cluster$p-$bw.xml" hosts="$out/cluster$p-$bw.hosts"
python3 "$root/lab/simgrid/wsp_platform.py" cluster --hosts "$p" --bw "$bw" --lat 50us \
  -o "$plat" --hostfile "$hosts"
cfg=(--cfg=smpi/grow-injected-times:no
     --cfg=smpi/iprobe:1e-6 --cfg=smpi/test:1e-6 --cfg=smpi/simulate-computation:no
     --cfg=smpi/coll-selector:${WSP_SG_SELECTOR:-ompi}
     --log=root.thres:warning --log=xbt_cfg.thres:warning)
smpirun -np "$p" -platform "$plat" -hostfile "$hosts" "${cfg[@]}" \
  "$root/build/simgrid/tools/wsp-bench" shuffle --seconds "$secs" --link-rate "$rate" \
  --strategies "${WSP_STRATEGIES:-s1,s2,s3,adaptive}" \
  --quiet --label "simgrid-cluster$p-$bw" --json "$out/shuffle-simgrid.json" ${WSP_BENCH_ARGS:-}
