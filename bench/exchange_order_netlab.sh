#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/exchange_order.c on a netlab cluster under Open MPI and MPICH: one
# large pairwise exchange per distance, the receive posted first against the
# send posted first, as a fraction of the NIC rate B. Plain MPI, no
# wirespeed: the evidence behind "Exchanges ran at about half speed" in
# docs/results/coll.md. Needs root; the lab is removed again on exit.
#   bench/exchange_order_netlab.sh [outdir] [hosts] [rate]
#   (defaults: results 8 100mbit; hosts must be a power of two)
# Environment: WSP_MPIS ("openmpi mpich"), WSP_BYTES (16777216), WSP_REPS (3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
hosts=${2:-8}
rate=${3:-100mbit}
case "$rate" in
  *mbit) mbit=${rate%mbit} ;;
  *) echo "exchange_order_netlab.sh: rate must be given in mbit (e.g. 100mbit), got '$rate'" >&2; exit 2 ;;
esac
name=weo$(( $$ % 10000 ))
mkdir -p "$out" "$root/build/probes"
"$root/scripts/deps.sh"
mpis=${WSP_MPIS:-openmpi mpich}
for m in $mpis; do
  case "$m" in
    openmpi) cc=mpicc ;;
    mpich) cc=mpicc.mpich ;;
    *) echo "exchange_order_netlab.sh: unknown MPI '$m' in WSP_MPIS (openmpi, mpich)" >&2; exit 2 ;;
  esac
  "$cc" -O2 -std=c11 -o "$root/build/probes/exchange_order-$m" "$root/bench/exchange_order.c"
done
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate"
for m in $mpis; do
  label="netlab-cluster${hosts}x1-${rate}-$m"
  echo "== $label"
  # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize after the results are
  # written (docs/netlab.md): the timeout ends such a job; 124 is not an error.
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 --time-limit 900 -- \
    "$root/build/probes/exchange_order-$m" --bytes "${WSP_BYTES:-16777216}" \
    --reps "${WSP_REPS:-3}" --link-mbit "$mbit" --label "$label" \
    --json "$out/exchange-order.json" || [ $? = 124 ]
done
