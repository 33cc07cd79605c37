#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The sparse exchange on netlab's cloud profile (every TCP flow capped at F
# below the NIC rate B): 1 MiB messages to 1 and to 4 peers, every
# algorithm and auto, with wirespeed at its defaults (WSP_TRANSPORT=auto:
# the lanes are decided after the first round of large messages) beside
# the same with every message on MPI (WSP_TRANSPORT=mpi, as before the
# lanes), and that under the MPI tuned by hand (Open MPI: btl_tcp_links 4
# and 8; MPICH: UCX_RNDV_THRESH 256K, and its scattered alltoallv), each in
# one job; then the ratios. Needs root; the lab is removed again on exit.
#   bench/cloud_sparse_netlab.sh [outdir] [hosts] [rate] [flow-cap]
#   (defaults: results 8 100mbit 20mbit; one rank per host)
# Environment: WSP_MPIS ("openmpi mpich"), WSP_SIZES (1M), WSP_DENSITIES
# (1/p,4/7 of 8 ranks: 1 and 4 peers), WSP_ITERS (5), WSP_REPS (3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
hosts=${2:-8}
rate=${3:-100mbit}
cap=${4:-20mbit}
case "$rate" in *mbit) ;; *) echo "cloud_sparse_netlab.sh: rate must be given in mbit (e.g. 100mbit), got '$rate'" >&2; exit 2 ;; esac
name=wcs$(( $$ % 10000 ))
mpis=${WSP_MPIS:-openmpi mpich}
four=$(awk -v h="$hosts" 'BEGIN { printf "%.6f", 4 / (h - 1) }')
dens=${WSP_DENSITIES:-1/p,$four}
mkdir -p "$out"
"$root/scripts/deps.sh"
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cloud --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate" --flow-cap "$cap"
json="$out/cloud-sparse-netlab.json"
stamp=$(date +%Y%m%d%H%M%S)
labels=

# run MPI LABEL [NAME VALUE ...]: one wsp-bench sparse job.
run() {
  local m=$1 label="$2-$stamp"
  shift 2
  wsp_setting_args "$m" "$@"
  labels="$labels$label,"
  echo "== $label"
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 "${setting_args[@]}" \
    --time-limit 1800 --done-line "# wsp-bench sparse: finished" --done-grace 60 -- \
    "$root/build/$m/tools/wsp-bench" sparse --sizes "${WSP_SIZES:-1M}" --densities "$dens" \
    --warmup 12 --iters "${WSP_ITERS:-5}" --reps "${WSP_REPS:-3}" --label "$label" \
    --json "$json" </dev/null || echo "   (job ended with $?)"
}

for m in $mpis; do
  run "$m" "$m-default"
  run "$m" "$m-nolanes" WSP_TRANSPORT mpi
  if [ "$m" = openmpi ]; then
    for links in 4 8; do run "$m" "$m-nolanes-links$links" WSP_TRANSPORT mpi btl_tcp_links $links; done
  else
    run "$m" "$m-nolanes-rndv256K" WSP_TRANSPORT mpi $(wsp_tuning mpich rndv-256K)
    run "$m" "$m-nolanes-scattered" WSP_TRANSPORT mpi MPIR_CVAR_ALLTOALLV_INTRA_ALGORITHM scattered
  fi
done

# Per MPI, size and peers: each algorithm's time at the defaults (lanes
# where auto found they pay) against the same without lanes, and auto
# against the fastest row of every job without lanes (the best a user of
# the MPI alone could pick: any algorithm, any btl_tcp_links).
/usr/bin/python3 - "$json" "$labels" <<'EOF'
import json, sys
want = [l for l in sys.argv[2].split(",") if l]
rows = [r for r in map(json.loads, open(sys.argv[1])) if r.get("label") in want]
t = {}
for r in rows:
    t[(r["label"].rsplit("-", 1)[0], r["k"], r["bytes"], r["alg"])] = r["t_round_us"] / 1e6
for mpi in sorted({k[0].split("-")[0] for k in t}):
    print(f"\n{mpi}: seconds per round (slowest rank), lanes = {mpi}-default, no lanes = WSP_TRANSPORT=mpi")
    print(f"{'peers':>5} {'size':>8} {'alg':>10} {'lanes':>8} {'no lanes':>9} {'ratio':>6}")
    for (lab, k, b, alg), s in sorted(t.items()):
        if lab != f"{mpi}-default":
            continue
        base = t.get((f"{mpi}-nolanes", k, b, alg))
        print(f"{k:>5} {b:>8} {alg:>10} {s:8.3f} {base if base else float('nan'):9.3f} "
              f"{(base / s) if base else float('nan'):6.2f}")
    for (lab, k, b, alg), s in sorted(t.items()):
        if lab != f"{mpi}-default" or alg != "auto":
            continue
        best = min(((v, key) for key, v in t.items()
                    if key[0].startswith(f"{mpi}-nolanes") and key[1] == k and key[2] == b),
                   default=None)
        if best:
            print(f"{k} peers, {b} B: auto {s:.3f} s; best without lanes {best[0]:.3f} s "
                  f"({best[1][0]}, {best[1][3]}): {best[0] / s:.2f}x")
EOF
echo "# JSON lines appended to $json (labels end in -$stamp)"
