#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The shuffle (wsp_shuffle, adaptive pacing) on netlab's cloud profile
# (every TCP flow capped at F below the NIC rate B): wirespeed at its
# defaults (WSP_TRANSPORT=auto) beside the same with every transfer on MPI
# (WSP_TRANSPORT=mpi, as before the lanes) and the lanes forced, and the MPI
# tuned by hand (Open MPI: btl_tcp_links 4; MPICH: UCX_RNDV_THRESH 256K),
# each one job of DURATION seconds; goodput per host / B. Needs root; the
# lab is removed again on exit.
#   bench/cloud_shuffle_netlab.sh [outdir] [hosts] [rate] [flow-cap] [duration]
#   (defaults: results 8 100mbit 20mbit 60; one rank per host)
# Environment: WSP_MPIS ("openmpi mpich"), WSP_REQ_SIZE (1K), WSP_FOLD (100),
# WSP_JOBS (default,nolanes,lanes,tuned: which jobs run, in that order; a
# name may repeat, e.g. default,nolanes,nolanes,default, to alternate the
# order against drift between jobs: the summary then compares means). The
# default job's log shows what auto decided and why (docs/shuffle.md, "Over
# the lanes").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
hosts=${2:-8}
rate=${3:-100mbit}
cap=${4:-20mbit}
duration=${5:-60}
case "$rate" in *mbit) ;; *) echo "cloud_shuffle_netlab.sh: rate must be given in mbit (e.g. 100mbit), got '$rate'" >&2; exit 2 ;; esac
name=wch$(( $$ % 10000 ))
mpis=${WSP_MPIS:-openmpi mpich}
jobs=${WSP_JOBS:-default,nolanes,lanes,tuned}
for j in ${jobs//,/ }; do
  case "$j" in default|nolanes|lanes|tuned) ;;
    *) echo "cloud_shuffle_netlab.sh: WSP_JOBS: unknown job '$j' (default, nolanes, lanes, tuned)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
"$root/scripts/deps.sh"
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cloud --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate" --flow-cap "$cap"
json="$out/cloud-shuffle-netlab.json"
stamp=$(date +%Y%m%d%H%M%S)
labels=

# run MPI JOB [NAME VALUE ...]: one wsp-bench shuffle job, labelled
# MPI-JOB-STAMP, or MPI-JOB.N-STAMP for the Nth repeat of JOB (N >= 2).
declare -A seen=()
run() {
  local m=$1 key="$1-$2"
  seen[$key]=$(( ${seen[$key]:-0} + 1 ))
  local label="$key-$stamp"
  [ "${seen[$key]}" -gt 1 ] && label="$key.${seen[$key]}-$stamp"
  shift 2
  wsp_setting_args "$m" "$@"
  labels="$labels$label,"
  echo "== $label"
  # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize after the results are
  # written (docs/netlab.md): netlab ends such a job 60 s after the
  # "finished" line.
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 "${setting_args[@]}" \
    --time-limit $(( duration * 4 + 600 )) \
    --done-line "# wsp-bench shuffle: finished" --done-grace 60 -- \
    "$root/build/$m/tools/wsp-bench" shuffle --strategies adaptive \
    --req-size "${WSP_REQ_SIZE:-1K}" --fold "${WSP_FOLD:-100}" \
    --seconds "$duration" --link-rate "$rate" --label "$label" --json "$json" \
    </dev/null || echo "   (job ended with $?)"
}

for m in $mpis; do
  for j in ${jobs//,/ }; do
    case "$j" in
      # The default job logs its verdict and the shuffle's rule (WSP_LOG=info:
      # "transport: lanes pay ...", "wsp_shuffle_open: N flows per host ...").
      default) run "$m" default WSP_LOG info ;;
      nolanes) run "$m" nolanes WSP_TRANSPORT mpi ;;
      lanes) run "$m" lanes WSP_TRANSPORT lanes WSP_P2P_LANES 8 ;;
      tuned)
        if [ "$m" = openmpi ]; then
          run "$m" tuned-links4 WSP_TRANSPORT mpi btl_tcp_links 4
        else
          run "$m" tuned-rndv256K WSP_TRANSPORT mpi $(wsp_tuning mpich rndv-256K)
        fi ;;
    esac
  done
done

/usr/bin/python3 - "$json" "$labels" <<'EOF'
import json, sys
want = [l for l in sys.argv[2].split(",") if l]
rows = {r["label"]: r for r in map(json.loads, open(sys.argv[1]))
        if r.get("label") in want and r.get("kind") == "summary"}
# Each job beside the mean of its MPI's nolanes jobs; then each job kind's
# mean (over its repeats) against that mean.
def kind(lab):  # "openmpi-default.2-2026..." -> ("openmpi", "default")
    mpi, rest = lab.split("-", 1)
    return mpi, rest.rsplit("-", 1)[0].split(".")[0]
groups = {}
for lab in want:
    if lab in rows:
        groups.setdefault(kind(lab), []).append(rows[lab]["mean_Bps"])
mean = lambda v: sum(v) / len(v)
print(f"\n{'job':<40} {'goodput/B':>9} {'worst host':>10} {'vs nolanes':>10}")
for lab in want:
    r = rows.get(lab)
    if r is None:
        print(f"{lab:<40} (no summary)")
        continue
    base = groups.get((kind(lab)[0], "nolanes"))
    ratio = r["mean_Bps"] / mean(base) if base else float("nan")
    print(f"{lab:<40} {r['frac_B_mean']:9.3f} {r['frac_B_min_host']:10.3f} {ratio:10.2f}")
print(f"\n{'MPI, job (jobs)':<40} {'mean vs mean of nolanes':>24}")
for (mpi, k), v in groups.items():
    base = groups.get((mpi, "nolanes"))
    ratio = mean(v) / mean(base) if base else float("nan")
    print(f"{mpi + ', ' + k + ' (' + str(len(v)) + ')':<40} {ratio:24.3f}")
EOF
echo "# JSON lines appended to $json (labels end in -$stamp)"
