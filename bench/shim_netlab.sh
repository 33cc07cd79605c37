#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The PMPI shim under a public program it was not written for: the OSU
# broadcast latency test that mpi4py ships in its source distribution
# (demo/osu_bcast.py, run unmodified; its function takes the largest size
# and the loop counts as arguments), on a netlab cluster of 8 hosts, one
# rank each, at 100 Mbit/s, under each MPI without the shim and with it
# (WSP_SHIM=auto, the report on), and without it under the MPI tuned by
# hand for large broadcasts (the tuning bench/tunings marks best for bcast
# on 8 x 1; the shim and the tuned MPI are jobs of their own, since the
# shim is preloaded for a whole job). Then the small
# sizes (1 B-4 KiB) again, WSP_REPS times each way, alternating, on the
# first N hosts for each N in WSP_SMALL_HOSTS, to compare latencies.
# Needs root; the lab it makes is removed again on exit.
#   bench/shim_netlab.sh [outdir]            (default: results)
# Environment: WSP_MPIS ("openmpi mpich"), WSP_REPS (3; 0 skips the small
# sizes), WSP_MAX (64M), WSP_SMALL_HOSTS ("8"), WSP_BIG_MODES ("none shim
# tuned": the large-size jobs to run), WSP_TUNING_OPENMPI and
# WSP_TUNING_MPICH (a tuning of one's own: "NAME VALUE ...", MCA
# parameters or environment variables).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
mpis=${WSP_MPIS:-openmpi mpich}
reps=${WSP_REPS:-3}
max=${WSP_MAX:-64M}
small_hosts=${WSP_SMALL_HOSTS:-8}
big_modes=${WSP_BIG_MODES-none shim tuned}
case "$reps" in ''|*[!0-9]*) echo "shim_netlab.sh: WSP_REPS must be a count" >&2; exit 2 ;; esac
for h in $small_hosts; do
  case "$h" in ''|*[!0-9]*) echo "shim_netlab.sh: WSP_SMALL_HOSTS must list host counts (2-8)" >&2; exit 2 ;; esac
  [ "$h" -ge 2 ] && [ "$h" -le 8 ] || { echo "shim_netlab.sh: WSP_SMALL_HOSTS must list host counts (2-8)" >&2; exit 2; }
done
for b in $big_modes; do
  case "$b" in none|shim|tuned) ;; *) echo "shim_netlab.sh: WSP_BIG_MODES lists none, shim and tuned, not $b" >&2; exit 2 ;; esac
done
case "$max" in ''|*[!0-9KMG]*) echo "shim_netlab.sh: WSP_MAX must be a size like 64M" >&2; exit 2 ;; esac
maxb=$(/usr/bin/python3 -c "import sys; s=sys.argv[1]; u={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(s[:-1])*u[s[-1]] if s[-1] in u else int(s))" "$max")
mkdir -p "$out"
json="$out/shim-netlab.json"
"$root/scripts/deps.sh"
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
venv="$out/shim_venv"
"$root/tests/shim/py_setup.sh" "$venv"
demo="$venv/mpi4py-src/demo"
name=wsh$(( $$ % 1000 ))
lab_down() { "$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true; }
trap lab_down EXIT
stamp=$(date +%Y%m%d%H%M%S)
lab_down
"$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts 8 --link-rate 100mbit

# The hand tuning for large broadcasts, per MPI: the best known on this
# lab's shape in bench/tunings (the list every script shares).
tuning() {
  local best
  best=$(wsp_tuning_best "$1" bcast@8x1)
  case $1 in
    openmpi) echo "${WSP_TUNING_OPENMPI:-${best#*: }}" ;;
    mpich) echo "${WSP_TUNING_MPICH:-${best#*: }}" ;;
  esac
}

# job MPI MODE(none|shim|tuned) KIND(big|small) REP [HOSTS]
job() {
  local m=$1 mode=$2 kind=$3 rep=$4 hosts=${5:-8} lib=- args call log
  if [ "$mode" = shim ]; then lib="$root/build/$m/libwirespeed_pmpi.so"; fi
  if [ "$kind" = big ] && [ "$mode" = tuned ]; then
    # The tunings are for large broadcasts (MPICH's scatter + ring
    # allgather takes about 50 ms a call below 64 KiB): the small sizes,
    # not reported for them, run once.
    call="osu_bcast(MAX_MSG_SIZE=$maxb, skip=0, loop=1, skip_large=1, loop_large=3)"
  elif [ "$kind" = big ]; then
    call="osu_bcast(MAX_MSG_SIZE=$maxb, skip=100, loop=1000, skip_large=1, loop_large=3)"
  else
    call="osu_bcast(MAX_MSG_SIZE=4096, skip=200, loop=2000)"
  fi
  if [ "$mode" = tuned ]; then
    # shellcheck disable=SC2046
    wsp_setting_args "$m" $(tuning "$m")
  else
    wsp_setting_args "$m" WSP_SHIM auto WSP_SHIM_REPORT 1
  fi
  args=("${setting_args[@]}")
  log="$out/shim-netlab-$m-$mode-$kind-$hosts-$rep-$stamp.txt"
  echo "== $m $mode $kind hosts $hosts rep $rep"
  # MPICH 4.0.2 + UCX can hang in MPI_Finalize after the last line: the
  # report comes before it (the shim's MPI_Finalize), and exit 124 is
  # not an error here.
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 --hosts "$hosts" "${args[@]}" --time-limit 3600 \
    --done-line "$([ "$kind" = big ] && echo "$maxb " || echo "      4096 ")" --done-grace 30 -- \
    "$root/tests/shim/py_run.sh" "$venv" "$lib" "$m" -c \
    "import sys; sys.path.insert(0, '$demo'); from osu_bcast import osu_bcast; $call" \
    </dev/null 2>&1 | tee "$log" || [ "${PIPESTATUS[0]}" = 124 ]
  /usr/bin/python3 - "$log" "$json" "$m" "$mode" "$kind" "$rep" "$stamp" "$hosts" "$(tuning "$m")" <<'PY'
import json, re, sys
log, path, m, mode, kind, rep, stamp, hosts, tuning = sys.argv[1:]
with open(path, "a") as f:
    for line in open(log):
        x = re.match(r"^\s*(\d+)\s+([0-9.]+)\s*$", line)
        if x:
            row = {"bench": "shim_netlab", "label": f"{m}-{mode}-{kind}-{hosts}-{rep}-{stamp}",
                   "mpi": m, "shim": mode, "kind": kind, "rep": int(rep),
                   "program": "mpi4py demo/osu_bcast.py", "p": int(hosts),
                   "size": int(x.group(1)), "latency_us": float(x.group(2))}
            if mode == "tuned":
                row["settings"] = tuning
            f.write(json.dumps(row) + "\n")
PY
}

for m in $mpis; do
  for b in $big_modes; do job "$m" "$b" big 1; done
done
for h in $small_hosts; do
  for m in $mpis; do
    for r in $(seq "$reps"); do
      job "$m" none small "$r" "$h"
      job "$m" shim small "$r" "$h"
    done
  done
done

/usr/bin/python3 - "$json" "$stamp" <<'PY'
import json, statistics, sys
path, stamp = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(path)]
rows = [r for r in rows if r.get("bench") == "shim_netlab" and r["label"].endswith(stamp)]
for m in sorted({r["mpi"] for r in rows}):
    big = {(r["shim"], r["size"]): r["latency_us"] for r in rows if r["mpi"] == m and r["kind"] == "big"}
    settings = next((r["settings"] for r in rows if r["mpi"] == m and r.get("settings")), "")
    print(f"\n{m}: osu_bcast.py, 8 x 1 at 100 Mbit/s, one job each way; tuned: {settings}")
    print("| size | no shim, us | tuned, us | with the shim, us | no shim / shim | tuned / shim |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size in sorted({s for _, s in big}):
        a, t, b = big.get(("none", size)), big.get(("tuned", size)), big.get(("shim", size))
        if size < 65536 or not (a or t or b):
            continue
        fmt = lambda x: f"{x:.0f}" if x else "-"
        rat = lambda x: f"{x / b:.2f}x" if x and b else "-"
        print(f"| {size} | {fmt(a)} | {fmt(t)} | {fmt(b)} | {rat(a)} | {rat(t)} |")
    for h in sorted({r["p"] for r in rows if r["mpi"] == m and r["kind"] == "small"}):
        small = {}
        for r in rows:
            if r["mpi"] == m and r["kind"] == "small" and r["p"] == h:
                small.setdefault((r["shim"], r["size"]), []).append(r["latency_us"])
        print(f"\n{m}: small sizes on {h} x 1, median of the jobs (each job's figure in brackets)")
        print("| size | without, us | with, us | with / without |")
        print("|---:|---:|---:|---:|")
        for size in sorted({s for _, s in small}):
            a, b = small.get(("none", size), []), small.get(("shim", size), [])
            if a and b:
                print(f"| {size} | {statistics.median(a):.1f} ({', '.join(f'{x:.1f}' for x in a)}) "
                      f"| {statistics.median(b):.1f} ({', '.join(f'{x:.1f}' for x in b)}) "
                      f"| {statistics.median(b) / statistics.median(a):.3f} |")
PY
echo "# JSON lines appended to $json (labels end in -$stamp)"
