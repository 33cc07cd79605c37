#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The netlab headline through Python (docs/results/python.md): a 16 MiB
# allreduce of doubles on a netlab cluster, one rank per host, through the
# wirespeed package (auto) against mpi4py's Allreduce, busbw / B; mpi4py
# under each MPI's default settings and under each hand tuning of the
# allreduce in bench/tunings (the list every script shares). All runs on
# one lab; the summary compares against the best mpi4py run of each MPI.
# Needs root; the lab is removed again on exit.
#   bench/python_netlab.sh [outdir] [hosts] [rate]    (defaults: results 4 100mbit)
# Environment: WSP_MPIS ("openmpi mpich"), WSP_BLOCKS (3), WSP_OMPI_TUNED and
# WSP_MPICH_TUNED (the tunings, one per line, "label: NAME VALUE ...", as in
# coll_tuned_netlab.sh; default: bench/tunings).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
hosts=${2:-4}
rate=${3:-100mbit}
case "$rate" in *mbit) ;; *) echo "python_netlab.sh: rate must be given in mbit (e.g. 100mbit), got '$rate'" >&2; exit 2 ;; esac
mpis=${WSP_MPIS:-openmpi mpich}
blocks=${WSP_BLOCKS:-3}
name=wpy$(( $$ % 10000 ))
mkdir -p "$out"
out=$(cd "$out" && pwd)
json="$out/python-netlab.json"
"$root/scripts/deps.sh"
for m in $mpis; do
  "$root/scripts/build.sh" "$m" >/dev/null
  "$root/tests/python/install.sh" "$root" "$out/py-venv-$m" "$m" cmake
done
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate"
stamp=$(date +%Y%m%d%H%M%S)

# run MPI LABEL [NAME VALUE ...]: one job of bench/python_layer.py with these settings.
run() {
  local m=$1 label="$1-$2-$stamp"
  shift 2
  wsp_setting_args "$m" "$@"
  echo "== $label $*"
  # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize (docs/netlab.md): the
  # job is ended 60 s after its "finished" line, which is not an error.
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 "${setting_args[@]}" \
    --time-limit 1800 --done-line "# python_layer: finished" --done-grace 60 -- \
    "$root/tests/shim/py_run.sh" "$out/py-venv-$m" - "$m" "$root/bench/python_layer.py" \
    --sizes 16M --blocks "$blocks" --budget 0.001 --json "$json" --label "$label" </dev/null ||
    [ $? -eq 124 ]
}
tuned_ompi=${WSP_OMPI_TUNED-$(wsp_tunings openmpi allreduce)}
tuned_mpich=${WSP_MPICH_TUNED-$(wsp_tunings mpich allreduce)}
for m in $mpis; do
  run "$m" default
  if [ "$m" = openmpi ]; then tunings=$tuned_ompi; else tunings=$tuned_mpich; fi
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    # shellcheck disable=SC2086  (the settings are words)
    run "$m" "tuned-${line%%:*}" ${line#*:}
  done <<<"$tunings"
done
/usr/bin/python3 - "$json" "$stamp" "${rate%mbit}" <<'PY'
import json, sys
path, stamp, mbit = sys.argv[1], sys.argv[2], float(sys.argv[3])
B = mbit * 1e6 / 8
rows = [json.loads(l) for l in open(path) if l.strip()]
rows = [r for r in rows if r.get("label", "").endswith(stamp) and r.get("what") == "allreduce"]
print(f"\n16 MiB allreduce, busbw / B (B = {mbit:g} Mbit/s; busbw = 2(p-1)/p x bytes / time)\n")
print("| run | wirespeed (auto: ran) | ctypes | mpi4py | wirespeed / mpi4py |")
print("|---|---:|---:|---:|---:|")
bb = {}
for r in rows:
    f = 2 * (r["p"] - 1) / r["p"] * r["bytes"] / B
    b = {k: f / v for k, v in r["seconds"].items()}
    run = r["label"][: -len(stamp) - 1]
    bb[run] = b
    print(f"| {run} | {b['wirespeed']:.3f} ({r['alg']}) | {b['ctypes']:.3f} | {b['mpi4py']:.3f} | "
          f"{b['wirespeed'] / b['mpi4py']:.2f}x |")
for m in ("openmpi", "mpich"):
    d = bb.get(f"{m}-default")
    if not d:
        continue
    best = max((k for k in bb if k.startswith(m + "-")), key=lambda k: bb[k]["mpi4py"])
    # Each ratio divides two figures of one job: in the tuned job the
    # MPI's settings apply to wirespeed too.
    t = bb[best]
    print(f"\n{m}: wirespeed {d['wirespeed']:.3f} of B (defaults); {d['wirespeed'] / d['mpi4py']:.2f}x "
          f"mpi4py at the defaults; mpi4py's best run {best[len(m) + 1:]}: {t['mpi4py']:.3f} of B, "
          f"wirespeed {t['wirespeed']:.3f} in the same job -> {t['wirespeed'] / t['mpi4py']:.2f}x")
PY
