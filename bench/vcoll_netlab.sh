#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The vector collectives under an unmodified program (bench/vcoll.c: three
# alltoallv patterns, an uneven allgatherv, a 16 MiB reduce_scatter_block)
# on a netlab cluster of 8 hosts, one rank each, at 100 Mbit/s: per MPI, one
# job at its defaults, one with the shim (wsp-exec under the launcher;
# WSP_SHIM=auto, its report on) and one per hand tuning that bench/tunings
# lists for alltoallv, allgatherv or reduce_scatter (each forces one of the
# MPI's algorithms). The summary puts each case's default, its best tuning
# (named) and the shim side by side. Needs root; the lab it makes is
# removed again on exit.
#   bench/vcoll_netlab.sh [outdir]            (default: results)
# Environment: WSP_MPIS ("openmpi mpich"), WSP_REPS (5), WSP_HOSTS (8),
# WSP_LINK (100mbit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
mpis=${WSP_MPIS:-openmpi mpich}
reps=${WSP_REPS:-5}
hosts=${WSP_HOSTS:-8}
link=${WSP_LINK:-100mbit}
case "$reps" in '' | *[!0-9]* | 0) echo "vcoll_netlab.sh: WSP_REPS must be a count" >&2; exit 2 ;; esac
case "$hosts" in '' | *[!0-9]*) echo "vcoll_netlab.sh: WSP_HOSTS must be a count" >&2; exit 2 ;; esac
for m in $mpis; do
  case "$m" in openmpi | mpich) ;; *) echo "vcoll_netlab.sh: WSP_MPIS lists openmpi and mpich, not $m" >&2; exit 2 ;; esac
done
mkdir -p "$out"
json="$out/vcoll-netlab.json"
"$root/scripts/deps.sh"
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
name=wvc$(($$ % 1000))
lab_down() { "$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true; }
trap lab_down EXIT
stamp=$(date +%Y%m%d%H%M%S)
lab_down
"$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$link"

# job MPI MODE(none|shim|LABEL of a tuning) [SETTINGS...]
job() {
  local m=$1 mode=$2 log
  shift 2
  local prog=("$root/build/$m/tools/vcoll")
  if [ "$mode" = shim ]; then
    prog=("$root/build/$m/tools/wsp-exec" "${prog[@]}")
    wsp_setting_args "$m" WSP_SHIM auto WSP_SHIM_REPORT 1
  else
    wsp_setting_args "$m" "$@"
  fi
  log="$out/vcoll-netlab-$m-$mode-$stamp.txt"
  echo "== $m $mode${*:+ ($*)}"
  # MPICH 4.0.2 + UCX can hang in MPI_Finalize after the last line (exit
  # 124 after the done line is not an error here).
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 --hosts "$hosts" \
    "${setting_args[@]}" --time-limit 1800 --done-line "# vcoll: finished" --done-grace 30 -- \
    "${prog[@]}" --reps "$reps" --json "$json" --label "$m|$mode|$*|$stamp" \
    </dev/null 2>&1 | tee "$log" || [ "${PIPESTATUS[0]}" = 124 ]
}

for m in $mpis; do
  job "$m" none
  job "$m" shim
  while IFS= read -r t; do
    [ -n "$t" ] || continue
    # shellcheck disable=SC2086
    job "$m" "${t%%:*}" ${t#*: }
  done < <(wsp_tunings "$m" alltoallv,allgatherv,reduce_scatter)
done

/usr/bin/python3 - "$json" "$stamp" "$hosts" "$link" <<'PY'
import json, sys
path, stamp, hosts, link = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rate = float(link.replace("mbit", "")) * 1e6 / 8 if link.endswith("mbit") else None
rows = [json.loads(l) for l in open(path)]
rows = [r for r in rows if r.get("bench") == "vcoll" and r["label"].endswith("|" + stamp)]
# The tunings of a case are those whose label starts with its collective's.
prefix = {"a2a": "a2av-", "agv": "agv-", "rsb": "rsb-"}
for m in sorted({r["label"].split("|")[0] for r in rows}):
    mine = [r for r in rows if r["label"].startswith(m + "|")]
    print(f"\n{m}: bench/vcoll.c, {hosts} x 1 at {link}, median of each job's reps (s)")
    print("| case | MPI default | best of default and tunings | which | wirespeed (shim) | default / wirespeed | best / wirespeed |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for case in sorted({r["case"] for r in mine}, key=lambda c: ["a2a-uniform", "a2a-fft", "a2a-skewed", "agv-uneven", "rsb-16M"].index(c)):
        at = {r["label"].split("|")[1]: r for r in mine if r["case"] == case}
        d, w = at.get("none"), at.get("shim")
        # The best the user could pick: the default or any tuning.
        tuned = [(r["median_s"], lab) for lab, r in at.items()
                 if lab == "none" or lab.startswith(prefix[case.split("-")[0]])]
        t, tl = min(tuned) if tuned else (None, "-")
        f = lambda x: f"{x:.3f}" if x else "-"
        ratio = lambda a, b: f"{a / b:.2f}x" if a and b else "-"
        print(f"| {case} | {f(d and d['median_s'])} | {f(t)} | {tl} | {f(w and w['median_s'])} | "
              f"{ratio(d and d['median_s'], w and w['median_s'])} | {ratio(t, w and w['median_s'])} |")
    w = next((r for r in mine if r["case"] == "rsb-16M" and r["label"].split("|")[1] == "shim"), None)
    if w and rate:
        bound = (hosts - 1) / hosts * (16 << 20) / rate
        print(f"\nreduce_scatter_block 16 MiB: the bound (p-1)/p.M/B is {bound:.3f} s; "
              f"wirespeed {w['median_s']:.3f} s = {bound / w['median_s']:.2f} of it")
PY
