#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The PMPI shim's cost where it does nothing (docs/results/shim.md): an
# 8-byte MPI_Allreduce and an 8-byte MPI_Send/MPI_Recv ping-pong through
# their MPI_ names against their PMPI_ names, in the same job (paired
# blocks, median difference), on 2 ranks of this machine, with no shim,
# the shim with WSP_SHIM=off and with WSP_SHIM=auto (8 bytes stay with the
# MPI), for each MPI, each job WSP_REPS times.
#   bench/shim_overhead.sh [outdir]          (default: results)
# Environment: WSP_MPIS ("openmpi mpich"), WSP_REPS (3), WSP_BLOCKS (101).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
mpis=${WSP_MPIS:-openmpi mpich}
reps=${WSP_REPS:-3}
blocks=${WSP_BLOCKS:-101}
case "$reps$blocks" in *[!0-9]*|'') echo "shim_overhead.sh: WSP_REPS and WSP_BLOCKS must be counts" >&2; exit 2 ;; esac
mkdir -p "$out"
json="$out/shim-overhead.json"
"$root/scripts/deps.sh"
stamp=$(date +%Y%m%d%H%M%S)
for m in $mpis; do
  "$root/scripts/build.sh" "$m" >/dev/null
  b="$root/build/$m"
  for r in $(seq "$reps"); do
    for mode in none off auto; do
      if [ "$m" = openmpi ]; then
        launch=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np 2)
        [ "$mode" = none ] || launch+=(-x LD_PRELOAD="$b/libwirespeed_pmpi.so" -x WSP_SHIM="$mode")
      else
        launch=(mpiexec.mpich -np 2)
        [ "$mode" = none ] || launch+=(-genv LD_PRELOAD "$b/libwirespeed_pmpi.so" -genv WSP_SHIM "$mode")
      fi
      echo "== $m $mode rep $r"
      "${launch[@]}" "$b/tools/shim_overhead" --blocks "$blocks" --json "$json" \
        --label "$m-$mode-$stamp"
    done
  done
done
/usr/bin/python3 - "$json" "$stamp" <<'PY'
import json, statistics, sys
path, stamp = sys.argv[1], sys.argv[2]
rows = {}
for line in open(path):
    r = json.loads(line)
    if r.get("bench") == "shim_overhead" and r["label"].endswith(stamp):
        rows.setdefault((r["label"].rsplit("-", 1)[0], r["call"]), []).append(r["diff_ns"])
print("\n| MPI, shim | call | MPI_ - PMPI_ per call, ns (each job) | median |")
print("|---|---|---|---:|")
for (k, call), v in sorted(rows.items()):
    print(f"| {k} | {call} | {', '.join(f'{x:.1f}' for x in v)} | {statistics.median(v):.1f} |")
PY
echo "# JSON lines appended to $json (labels end in -$stamp)"
