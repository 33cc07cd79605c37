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
# WSP_JOBS (default,nolanes,lanes,tuned: which jobs run). The default job's
# log shows what auto decided and why (docs/shuffle.md, "Over the lanes").
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
jobs=",${WSP_JOBS:-default,nolanes,lanes,tuned},"
mkdir -p "$out"
"$root/scripts/deps.sh"
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cloud --name "$name" --hosts "$hosts" --rate "$rate" --flow-cap "$cap"
json="$out/cloud-shuffle-netlab.json"
stamp=$(date +%Y%m%d%H%M%S)
labels=

# run MPI JOB [NAME VALUE ...]: one wsp-bench shuffle job, labelled MPI-JOB.
run() {
  local m=$1 label="$1-$2-$stamp"
  shift 2
  wsp_setting_args "$m" "$@"
  labels="$labels$label,"
  echo "== $label"
  # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize after the results are
  # written (docs/netlab.md): netlab ends such a job 60 s after the
  # "finished" line.
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 "${setting_args[@]}" \
    --timeout $(( duration * 4 + 600 )) \
    --done-line "# wsp-bench shuffle: finished" --done-grace 60 -- \
    "$root/build/$m/tools/wsp-bench" shuffle --strategies adaptive \
    --req-size "${WSP_REQ_SIZE:-1K}" --fold "${WSP_FOLD:-100}" \
    --duration "$duration" --link-rate "$rate" --label "$label" --json "$json" \
    </dev/null || echo "   (job ended with $?)"
}

for m in $mpis; do
  # The default job logs its verdict and the shuffle's rule (WSP_LOG=info:
  # "transport: lanes pay ...", "wsp_shuffle_open: N flows per host ...").
  [[ $jobs == *,default,* ]] && run "$m" default WSP_LOG info
  [[ $jobs == *,nolanes,* ]] && run "$m" nolanes WSP_TRANSPORT mpi
  [[ $jobs == *,lanes,* ]] && run "$m" lanes WSP_TRANSPORT lanes WSP_P2P_LANES 8
  if [[ $jobs == *,tuned,* ]]; then
    if [ "$m" = openmpi ]; then
      run "$m" nolanes-links4 WSP_TRANSPORT mpi btl_tcp_links 4
    else
      run "$m" nolanes-rndv256K WSP_TRANSPORT mpi $(wsp_tuning mpich rndv-256K)
    fi
  fi
done

/usr/bin/python3 - "$json" "$labels" <<'EOF'
import json, sys
want = [l for l in sys.argv[2].split(",") if l]
rows = {r["label"]: r for r in map(json.loads, open(sys.argv[1]))
        if r.get("label") in want and r.get("kind") == "summary"}
print(f"\n{'job':<40} {'goodput/B':>9} {'worst host':>10} {'vs nolanes':>10}")
for lab in want:
    r = rows.get(lab)
    if r is None:
        print(f"{lab:<40} (no summary)")
        continue
    base = rows.get(lab.split("-")[0] + "-nolanes-" + lab.rsplit("-", 1)[1])
    ratio = r["mean_Bps"] / base["mean_Bps"] if base and base["mean_Bps"] else float("nan")
    print(f"{lab:<40} {r['frac_B_mean']:9.3f} {r['frac_B_min_host']:10.3f} {ratio:10.2f}")
EOF
echo "# JSON lines appended to $json (labels end in -$stamp)"
