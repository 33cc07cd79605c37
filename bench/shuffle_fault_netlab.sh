#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The shuffle under each MPI's default settings (no eager limit raised, no
# MCA or UCX variable), and the same with every host's rate halved AT
# seconds into the run (netlab fault rate all): goodput per host / B
# before, and after the change how long the pace takes to follow. Needs
# root; the lab is removed again on exit, whatever happens.
#   bench/shuffle_fault_netlab.sh [outdir] [hosts] [rate] [duration] [at]
#   (defaults: results 16 25mbit 60 30)
# Three cases per MPI: steady (defaults), halved (defaults, every host's
# rate halved AT seconds in), tuned (the MPI's eager limit raised by hand
# to 256 KiB and the engine sending each response chunk whole: the best a
# user could do before responses went in pieces).
# Environment: WSP_MPIS (openmpi mpich), WSP_CASES (steady halved tuned),
# WSP_STRATEGIES (adaptive), WSP_LAB_NAME (shflt), WSP_REQ_SIZE (1K),
# WSP_FOLD (100: responses of 100 KiB, above Open MPI's 64 KiB TCP eager
# limit), WSP_BENCH_ARGS (more wsp-bench options).
# Output: JSON lines (one per second and strategy, and a summary) appended
# to OUTDIR/shuffle-fault-netlab.json, and a table on stdout
# (bench/shuffle_fault_summary.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
hosts=${2:-16}
rate=${3:-25mbit}
duration=${4:-60}
at=${5:-30}
name=${WSP_LAB_NAME:-shflt}
mkdir -p "$out"
"$root/scripts/deps.sh"
mpis=${WSP_MPIS:-openmpi mpich}
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
half=$(PYTHONPATH="$root/lab" /usr/bin/python3 -c \
  'import sys; from netlab.params import parse_rate, fmt_rate; print(fmt_rate(parse_rate(sys.argv[1]) // 2))' "$rate")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate"
json="$out/shuffle-fault-netlab.json"
labels=()
set_all() { # every host's rate, in one netlab command
  "$root/scripts/netlab" fault rate all --link-rate "$1" --name "$name" 2>/dev/null
}
cases=${WSP_CASES:-steady halved tuned}
for m in $mpis; do
  for c in $cases; do
    label="netlab-cluster${hosts}x1-${rate}-$m-defaults-$c"
    [ "$c" = halved ] && label="$label-at${at}s-to-$half"
    # tuned: the MPI set by hand as the docs advised before responses went
    # in pieces (the eager limit above the largest response chunk), and
    # the engine sending each chunk whole, as it did then.
    tune=()
    if [ "$c" = tuned ]; then
      label="netlab-cluster${hosts}x1-${rate}-$m-tuned-eager256k-whole-chunks"
      # The MPI's tuning for the shuffle from bench/tunings (the list every
      # script shares), and the engine's chunks whole.
      sh_tuning=$(wsp_tunings "$m" shuffle | head -n 1)
      # shellcheck disable=SC2086  (the settings are words)
      wsp_setting_args "$m" ${sh_tuning#*: } WSP_SHUFFLE_PIECE 1G
      tune=("${setting_args[@]}")
    fi
    echo "== $label"
    labels+=("$label")
    # The change: AT seconds after the strategy starts (wsp-bench prints
    # a line then), every host at once; the wall clock before and after the
    # command is recorded, and the summary places it on the strategy's
    # seconds (wsp-bench writes each strategy's start, start_epoch_ms).
    joblog="$out/.shuffle-fault-job.log"
    : > "$joblog"
    if [ "$c" = halved ]; then
      ( until grep -q "strategy .* started" "$joblog"; do sleep 0.2; done
        sleep "$at"
        t0=$(date +%s.%N)
        set_all "$half"
        printf '{"bench": "shuffle-fault", "kind": "fault", "label": "%s", "epoch_s": %s, "epoch_done_s": %s, "rate": "%s"}\n' \
          "$label" "$t0" "$(date +%s.%N)" "$half" >> "$json" ) &
      pids+=($!)
    fi
    # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize after the results
    # are written (docs/netlab.md): exit 124 after the done line is fine.
    "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 "${tune[@]}" \
      --time-limit $(( duration * 8 + 600 )) \
      --done-line "# wsp-bench shuffle: finished" --done-grace 60 -- \
      "$root/build/$m/tools/wsp-bench" shuffle \
      --strategies "${WSP_STRATEGIES:-adaptive}" \
      --req-size "${WSP_REQ_SIZE:-1K}" --fold "${WSP_FOLD:-100}" \
      --seconds "$duration" --link-rate "$rate" \
      --label "$label" --json "$json" ${WSP_BENCH_ARGS:-} 2>&1 | tee "$joblog" || \
      [ "${PIPESTATUS[0]}" = 124 ]
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    pids=()
    set_all "$rate"
  done
done
/usr/bin/python3 "$root/bench/shuffle_fault_summary.py" "$json" --at "$at" \
  --labels "${labels[@]}"
