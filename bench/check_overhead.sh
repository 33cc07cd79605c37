#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What WSP_CHECK costs (docs/results/coll.md, "What WSP_CHECK costs"): an
# 8-byte wsp_allreduce on a communicator with the check and on one without,
# in the same job (paired blocks, median difference; bench/check_overhead.c),
# on WSP_NP ranks of this machine, for each MPI, WSP_REPS jobs each.
#   bench/check_overhead.sh [outdir]          (default: results)
# Environment: WSP_MPIS ("openmpi mpich"), WSP_NP (16), WSP_REPS (3),
# WSP_BLOCKS (21), WSP_ITERS_OPENMPI (1000), WSP_ITERS_MPICH (300: its
# calls are slower when ranks outnumber the cores).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
mpis=${WSP_MPIS:-openmpi mpich}
np=${WSP_NP:-16}
reps=${WSP_REPS:-3}
blocks=${WSP_BLOCKS:-21}
case "$np$reps$blocks${WSP_ITERS_OPENMPI:-1}${WSP_ITERS_MPICH:-1}" in
  *[!0-9]*|'') echo "check_overhead.sh: WSP_NP, WSP_REPS, WSP_BLOCKS and WSP_ITERS_* must be counts" >&2; exit 2 ;;
esac
mkdir -p "$out"
json="$out/check-overhead.json"
"$root/scripts/deps.sh"
stamp=$(date +%Y%m%d%H%M%S)
for m in $mpis; do
  "$root/scripts/build.sh" "$m" >/dev/null
  if [ "$m" = openmpi ]; then
    launch=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np")
    iters=${WSP_ITERS_OPENMPI:-1000}
  else
    launch=(mpiexec.mpich -np "$np")
    iters=${WSP_ITERS_MPICH:-300}
  fi
  for r in $(seq "$reps"); do
    echo "== $m job $r"
    "${launch[@]}" "$root/build/$m/tools/check_overhead" --iters "$iters" --blocks "$blocks" \
      --json "$json" --label "$m-$r-$stamp"
  done
done
/usr/bin/python3 - "$json" "$stamp" <<'PY'
import json, sys
path, stamp = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(path)]
rows = [r for r in rows if r.get("bench") == "check_overhead" and r["label"].endswith(stamp)]
print("\n| MPI, job | p | without, us | with, us | with / without |")
print("|---|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['label'].rsplit('-', 1)[0]} | {r['p']} | {r['off_us']:.2f} | {r['on_us']:.2f} "
          f"| {r['on_us'] / r['off_us']:.3f} |")
PY
echo "# JSON lines appended to $json (labels end in -$stamp)"
