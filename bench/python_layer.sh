#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Python layer's own cost (docs/results/python.md), on this machine, for
# each MPI: the package installed into a fresh virtual environment
# (tests/python/install.sh), then in one run
#   - bench/python_layer.py at 1 rank: the CPU cost of one call through the
#     package, through ctypes alone and through mpi4py, nothing shared;
#   - the same at WSP_NP ranks (8) for 8 B and 16 MiB, and a shuffle with
#     Python handlers for WSP_SHUFFLE_S seconds;
#   - wsp-bench coll (allreduce, auto and the MPI's call, C) and wsp-bench
#     shuffle (the same shuffle with C handlers) at WSP_NP ranks;
# and a table of the ratios.
#   bench/python_layer.sh [outdir]            (default: results)
# Environment: WSP_MPIS ("openmpi mpich"), WSP_NP (8), WSP_SHUFFLE_S (5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
mpis=${WSP_MPIS:-openmpi mpich}
np=${WSP_NP:-8}
secs=${WSP_SHUFFLE_S:-5}
case "$np" in ''|*[!0-9]*) echo "python_layer.sh: WSP_NP must be a count, got '$np'" >&2; exit 2 ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
json="$out/python-layer.json"
"$root/scripts/deps.sh"
stamp=$(date +%Y%m%d%H%M%S)
for m in $mpis; do
  "$root/scripts/build.sh" "$m" >/dev/null
  venv="$out/py-venv-$m"
  "$root/tests/python/install.sh" "$root" "$venv" "$m" cmake
  if [ "$m" = openmpi ]; then
    launch=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader)
  else
    launch=(mpiexec.mpich)
  fi
  py=("$root/tests/shim/py_run.sh" "$venv" - "$m" "$root/bench/python_layer.py")
  echo "== $m: 1 rank"
  "${launch[@]}" -np 1 "${py[@]}" --sizes 8 --json "$json" --label "$m-np1-$stamp"
  echo "== $m: $np ranks"
  "${launch[@]}" -np "$np" "${py[@]}" --sizes 8,16M --shuffle-seconds "$secs" \
    --json "$json" --label "$m-np$np-$stamp"
  echo "== $m: $np ranks, C (wsp-bench)"
  "${launch[@]}" -np "$np" "$root/build/$m/tools/wsp-bench" coll --colls allreduce \
    --sizes 8,16M --algs auto,mpi --quiet --json "$json" --label "$m-np$np-c-$stamp"
  "${launch[@]}" -np "$np" "$root/build/$m/tools/wsp-bench" shuffle --strategies adaptive \
    --req-size 16 --fold 4 --seconds "$secs" --dest rr --quiet --json "$json" \
    --label "$m-np$np-c-$stamp"
done
/usr/bin/python3 "$root/bench/python_layer_summary.py" "$json" "$stamp"
