#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The collectives' headline against the MPI library at its defaults and tuned
# by hand: on one netlab cluster, wsp-bench coll (auto and the plain MPI
# collective) under each MPI's default settings and then under each hand
# tuning in the lists below, back to back; then one table of busbw / B per
# run and a summary: auto against the MPI's default call and against the
# best hand-tuned MPI call of that collective, with its settings.
# Needs root; the lab is removed again on exit.
#   bench/coll_tuned_netlab.sh [outdir] [hosts] [rate]
#   (defaults: results 4 100mbit; one rank per host)
# Environment:
#   WSP_COLLS (allreduce,bcast), WSP_SIZES (16M), WSP_MPIS ("openmpi mpich"),
#   WSP_REPS (3), WSP_LAB_PROFILE (cluster; hetero: netlab's pairs in rate
#   classes, seed 1, where busbw / B is over the NIC rate, not the pair's;
#   cloud: every TCP flow capped at WSP_FLOW_CAP, default 20mbit)
#   WSP_SETTINGS: NAME VALUE pairs added to every job, the default one too
#     (e.g. "WSP_TRANSPORT lanes WSP_P2P_LANES 8": wirespeed's collectives
#     over lanes beside the MPI at its defaults and at each tuning)
#   WSP_OMPI_TUNED, WSP_MPICH_TUNED: the hand tunings, one per line,
#     "label: NAME VALUE NAME VALUE ..." (Open MPI MCA parameters; MPICH
#     environment variables, CVARs and UCX's); default: those of
#     bench/tunings for the collectives measured (one list for every script)
#   WSP_BENCH_OLD: another wsp-bench binary (built for Open MPI) to run beside
#     this one at the default settings, labelled "old" (to re-measure a change)
#   WSP_NETMAP_RUN (1): 1 probes the lab with wsp-probe under each MPI first
#     and adds a run at that MPI's defaults with the map attached
#     (WSP_NETMAP), labelled "default-map": the eager limit it measured
#     bounds the pipelined segments (docs/netmap.md); 0 leaves it out
# In the tuning lists, a NAME starting with WSP_ is an environment variable
# of wirespeed's, not a setting of the MPI's. Every job runs auto beside the
# MPI's call, so each ratio in the summary divides two figures of one job.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_map.sh"
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
hosts=${2:-4}
rate=${3:-100mbit}
case "$rate" in *mbit) ;; *) echo "coll_tuned_netlab.sh: rate must be given in mbit (e.g. 100mbit), got '$rate'" >&2; exit 2 ;; esac
name=wct$(( $$ % 10000 ))
colls=${WSP_COLLS:-allreduce,bcast}
sizes=${WSP_SIZES:-16M}
reps=${WSP_REPS:-3}
mpis=${WSP_MPIS:-openmpi mpich}
mkdir -p "$out"
"$root/scripts/deps.sh"
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
if [ -n "${WSP_BENCH_OLD:-}" ] && [ ! -x "$WSP_BENCH_OLD" ]; then
  echo "coll_tuned_netlab.sh: WSP_BENCH_OLD: '$WSP_BENCH_OLD' is not an executable" >&2; exit 2
fi
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
profile=${WSP_LAB_PROFILE:-cluster}
lab_args=()
case $profile in
  cluster|hetero) ;;
  cloud) lab_args=(--flow-cap "${WSP_FLOW_CAP:-20mbit}") ;;
  *) echo "coll_tuned_netlab.sh: WSP_LAB_PROFILE must be cluster, hetero or cloud, not '$profile'" >&2; exit 2 ;;
esac
"$root/scripts/netlab" up "$profile" --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate" "${lab_args[@]}"
json="$out/coll-tuned-netlab.json"
stamp=$(date +%Y%m%d%H%M%S)
labels=

# run MPI LABEL BENCH [NAME VALUE ...]: one wsp-bench coll job with these settings.
run() {
  local m=$1 label="$2-$stamp" bench=$3
  shift 3
  local common=()
  read -r -a common <<< "${WSP_SETTINGS:-}"
  wsp_setting_args "$m" "${common[@]}" "$@"
  local args=("${setting_args[@]}")
  labels="$labels$label,"
  echo "== $label"
  # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize after the results are
  # written (docs/netlab.md): netlab ends such a job 60 s after wsp-bench's
  # "finished" line, and its exit code 124 is not an error here. Its stdin
  # is not the list of tunings being read.
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 "${args[@]}" --time-limit 1800 \
    --done-line "# wsp-bench coll: finished" --done-grace 60 -- \
    "$bench" coll --colls "$colls" --sizes "$sizes" --algs auto,mpi --reps "$reps" \
    --iters 1 --warmup 1 --label "$label" --json "$json" --quiet </dev/null || [ $? = 124 ]
}

for m in $mpis; do
  run "$m" "$m-default" "$root/build/$m/tools/wsp-bench"
  if [ "${WSP_NETMAP_RUN:-1}" = 1 ]; then
    map="$out/netmap-$name-$m.json"
    wsp_lab_probe "$root" "$name" "$m" "$map"
    run "$m" "$m-default-map" "$root/build/$m/tools/wsp-bench" WSP_NETMAP "$map"
  fi
  if [ "$m" = openmpi ] && [ -n "${WSP_BENCH_OLD:-}" ]; then
    run "$m" "$m-default-old" "$WSP_BENCH_OLD"
  fi
  if [ "$m" = openmpi ]; then list=${WSP_OMPI_TUNED-$(wsp_tunings "$m" "$colls")}
  else list=${WSP_MPICH_TUNED-$(wsp_tunings "$m" "$colls")}; fi
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    tlabel=${line%%:*}
    read -r -a kv <<< "${line#*:}"
    run "$m" "$m-$tlabel" "$root/build/$m/tools/wsp-bench" "${kv[@]}"
  done <<< "$list"
done

/usr/bin/python3 - "$json" "${rate%mbit}" "$labels" "$stamp" <<'PY'
import json, sys
path, mbit, labels, stamp = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
want = [l for l in labels.split(",") if l]
B = mbit * 1e6 / 8
rows = {}
for line in open(path):
    r = json.loads(line)
    if r.get("bench") != "coll" or r["label"] not in want:
        continue
    rows[(r["label"], r["coll"], r["size"], r["alg"])] = r
def frac(r):
    return r["busbw_GBps"] * 1e9 / B
print("\n| run | collective | size | auto busbw / B (ran) | MPI busbw / B | auto / MPI |")
print("|---|---|---|---|---|---|")
keys = sorted({(l, c, s) for (l, c, s, a) in rows}, key=lambda k: (k[1], k[2], want.index(k[0])))
for (l, c, s) in keys:
    a, m = rows.get((l, c, s, "auto")), rows.get((l, c, s, "mpi"))
    if not a or not m:
        continue
    print(f"| {l[:-len(stamp) - 1]} | {c} | {s} | {frac(a):.3f} ({a['ran']}) | {frac(m):.3f} | {m['time_s'] / a['time_s']:.2f} |")
print("\nsummary: auto against each MPI's default call and its best hand-tuned call; each ratio")
print("divides the MPI's time by auto's in the same job (the tuned MPI's settings apply to both)")
for mpi in ("openmpi", "mpich"):
    for c in sorted({k[1] for k in keys}):
        for s in sorted({k[2] for k in keys if k[1] == c}):
            d = f"{mpi}-default-{stamp}"
            a, md = rows.get((d, c, s, "auto")), rows.get((d, c, s, "mpi"))
            if not a or not md:
                continue
            # The best tuning is the job whose MPI call ran fastest, the defaults included.
            jobs = [k[0] for k in rows if k[1] == c and k[2] == s and k[3] == "mpi"
                    and k[0].startswith(mpi + "-") and "-default-map-" not in k[0]
                    and "-default-old-" not in k[0] and (k[0], c, s, "auto") in rows]
            bl = max(jobs, key=lambda l: rows[(l, c, s, "mpi")]["busbw_GBps"])
            bt, ba = rows[(bl, c, s, "mpi")], rows[(bl, c, s, "auto")]
            print(f"  {mpi} {c} {s}: defaults: auto {frac(a):.3f} B ({a['ran']}), MPI {frac(md):.3f} B "
                  f"-> {md['time_s'] / a['time_s']:.2f}x; best tuning {bl[len(mpi) + 1:-len(stamp) - 1]}: "
                  f"MPI {frac(bt):.3f} B, auto {frac(ba):.3f} B ({ba['ran']}) -> {bt['time_s'] / ba['time_s']:.2f}x")
            am = rows.get((f"{mpi}-default-map-{stamp}", c, s, "auto"))
            mm = rows.get((f"{mpi}-default-map-{stamp}", c, s, "mpi"))
            if am and mm:
                print(f"  {mpi} {c} {s}: with the network map: auto {frac(am):.3f} B ({am['ran']}), "
                      f"MPI {frac(mm):.3f} B -> {mm['time_s'] / am['time_s']:.2f}x (same job)")
PY
echo "# JSON lines appended to $json (labels end in -$stamp)"
