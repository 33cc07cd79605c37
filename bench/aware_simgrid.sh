#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Trees built from a network map, under SimGrid: on a heterogeneous platform
# (racks with oversubscribed uplinks of higher latency, NIC latencies spread
# over a factor, a few slow hosts) and on a uniform one of the same size,
# wsp-probe measures the map, then wsp-bench coll runs bcast, reduce, gather
# and scatter with the map attached (WSP_NETMAP): the aware trees beside
# wirespeed's binomial tree, auto, and the simulated MPI's own collective
# under SMPI's Open MPI selector and its MPICH selector. Prints the time
# table and the aware/binomial ratios (python/wsp_report aware).
#   bench/aware_simgrid.sh [outdir] [p]
# p is a multiple of 8 (racks of p/8 hosts). Environment: WSP_SIZES
# (bcast/reduce: whole messages; default 8,64,512,4K,32K,256K), WSP_BLOCKS
# (gather/scatter: one rank's block; default 8,64,512,4K,16K, the buffer
# being p blocks), WSP_SG_PLATFORMS (hetero,uniform), WSP_COLLS
# (bcast,reduce,gather,scatter), WSP_PROBE_REPS (3), WSP_ALGS (the
# wirespeed algorithms run beside the MPI's collective: binomial,aware,auto;
# add chain to see the paths of long messages beside it), WSP_MAPS (a
# directory holding <platform><p>.netmap.json from an earlier run: used
# instead of probing again; the platforms are made again from their seed),
# WSP_SYNC (window: every call starts at one instant on all ranks and is
# timed to the last rank's end, one call per repetition: its latency;
# barrier: two back-to-back calls after a barrier, as before 2026-11-26,
# which reads less than the latency where ranks leave the barrier apart).
# SMPI's message-size factors are 1 (a plain latency-plus-bytes network, the
# one the platform describes; docs/simgrid.md says why SMPI's own differ)
# and its eager switch is its default (sends below 64 KiB are detached).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
p=${2:-64}
if ! [[ $p =~ ^[0-9]+$ ]] || (( p < 16 || p % 8 )); then
  echo "aware_simgrid.sh: p must be a multiple of 8, at least 16, not '$p'" >&2
  exit 2
fi
mkdir -p "$out"
"$root/scripts/deps.sh"
"$root/scripts/build.sh" simgrid >/dev/null
bin=$root/build/simgrid/tools
racks=8 per=$((p / 8))
sizes=${WSP_SIZES:-8,64,512,4K,32K,256K}
blocks=${WSP_BLOCKS:-8,64,512,4K,16K}
# wsp-bench takes gather/scatter sizes as the whole p-block buffer.
bufs=$(python3 - "$blocks" "$p" <<'EOF'
import sys
units = {"": 1, "K": 1 << 10, "M": 1 << 20}
out = []
for b in sys.argv[1].split(","):
    n = int(b.rstrip("KM")) * units[b[len(b.rstrip("KM")):]]
    out.append(str(n * int(sys.argv[2])))
print(",".join(out))
EOF
)
cfg=(--cfg=smpi/grow-injected-times:no --cfg=smpi/iprobe:1e-6 --cfg=smpi/test:1e-6
     --cfg=smpi/simulate-computation:no --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1
     --log=root.thres:warning --log=xbt_cfg.thres:warning)
json=$out/aware-simgrid.json
sync=${WSP_SYNC:-window}
case $sync in
  window) iters=1 ;;
  barrier) iters=2 ;;
  *) echo "aware_simgrid.sh: WSP_SYNC must be window or barrier, not '$sync'" >&2; exit 2 ;;
esac
colls=${WSP_COLLS:-bcast,reduce,gather,scatter}
IFS=, read -r -a platforms <<< "${WSP_SG_PLATFORMS:-hetero,uniform}"
for kind in "${platforms[@]}"; do
  plat=$out/$kind$p.xml hosts=$out/$kind$p.hosts map=$out/$kind$p.netmap.json
  case $kind in
    hetero)
      python3 "$root/lab/simgrid/wsp_platform.py" racks --racks "$racks" --hosts-per-rack "$per" \
        --bw 1Gbps --lat 10us --lat-spread 10 --oversubscription 4 --uplink-lat 100us \
        --slow-hosts $(( p / 32 > 0 ? p / 32 : 1 )) --slow-bw 100Mbps --seed 7 -o "$plat" --hostfile "$hosts" ;;
    uniform)
      python3 "$root/lab/simgrid/wsp_platform.py" cluster --hosts "$p" --bw 1Gbps --lat 30us \
        -o "$plat" --hostfile "$hosts" ;;
    *) echo "aware_simgrid.sh: unknown platform '$kind' (hetero, uniform)" >&2; exit 2 ;;
  esac
  run() { smpirun -np "$p" -platform "$plat" -hostfile "$hosts" "${cfg[@]}" "$@"; }
  if [ -n "${WSP_MAPS:-}" ]; then
    cp "$WSP_MAPS/$kind$p.netmap.json" "$map.tmp" && mv "$map.tmp" "$map"
  else
    start=$(date +%s)
    run --cfg=smpi/coll-selector:ompi "$bin/wsp-probe" --reps "${WSP_PROBE_REPS:-3}" --out "$map"
    echo "aware_simgrid.sh: probe of $kind$p took $(( $(date +%s) - start )) s of wall time"
  fi
  for sel in ompi mpich; do
    algs=native
    [ $sel = ompi ] && algs=${WSP_ALGS:-binomial,aware,auto},native
    label="simgrid-$kind$p-$sel"
    for c in ${colls//,/ }; do
      s=$sizes
      [[ $c = gather || $c = scatter ]] && s=$bufs
      WSP_NETMAP=$map run --cfg=smpi/coll-selector:$sel "$bin/wsp-bench" coll --colls "$c" \
        --sizes "$s" --algs "$algs" --iters "$iters" --sync "$sync" --reps 1 --warmup 1 --quiet \
        --label "$label" --json "$json"
    done
  done
done
python3 "$root/python/wsp_report" aware "$json" --p "$p"
