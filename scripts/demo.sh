#!/usr/bin/env bash
# The main job: installs what is missing, builds wirespeed, and runs the
# sparse-exchange benchmark on loopback (NBX, PEX, alltoallv and auto side
# by side), printing the comparison and writing results/sparse-loopback.json.
#   scripts/demo.sh [--np N] [extra wsp-bench sparse options]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
np=16
if [ "${1:-}" = "--np" ]; then np=${2:?--np needs a number}; shift 2; fi
case "$np" in ''|*[!0-9]*) echo "demo: --np '$np' is not a number" >&2; exit 2 ;; esac
"$root/scripts/deps.sh"
"$root/scripts/build.sh" openmpi >/dev/null
mkdir -p "$root/results"
json="$root/results/sparse-loopback.json"
echo "demo: wsp-bench sparse on loopback, $np ranks (Open MPI); JSON lines in $json"
mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np "$np" \
  "$root/build/openmpi/tools/wsp-bench" sparse --json "$json" --label loopback "$@"
