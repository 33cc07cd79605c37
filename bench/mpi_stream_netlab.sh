#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/mpi_stream.c on a netlab cluster: how much of the NIC rate B an
# all-to-all stream of point-to-point messages gets through Open MPI, with no
# wirespeed code, beside raw TCP (netlab calibrate --only a2a). The evidence
# behind "Eager responses" in docs/results/shuffle.md: 100 KiB messages (the
# shuffle's responses) go by rendezvous under Open MPI's TCP defaults and
# reach less than 32 KiB ones or 100 KiB ones sent eagerly. Needs root; the
# lab is removed again on exit.
#   bench/mpi_stream_netlab.sh [outdir] [hosts] [rate] [duration]
#   (defaults: results 16 25mbit 30)
# Environment: WSP_STREAM_CASES, a list of "label:bytes:window:tuning", where
# tuning is the label of an Open MPI tuning in bench/tunings (the one list of
# hand tunings) or empty for the defaults; the default runs the five cases
# below.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
hosts=${2:-16}
rate=${3:-25mbit}
duration=${4:-30}
mbit=${rate%mbit}
if [ "$mbit" = "$rate" ] || ! [[ $mbit =~ ^[1-9][0-9]*$ ]]; then
  echo "mpi_stream_netlab.sh: rate must be whole mbit (e.g. 25mbit), got '$rate'" >&2; exit 2
fi
if ! [[ $duration =~ ^[1-9][0-9]*$ ]]; then
  echo "mpi_stream_netlab.sh: duration must be whole seconds, got '$duration'" >&2; exit 2
fi
if [ "$duration" -le 5 ]; then
  echo "mpi_stream_netlab.sh: duration must be above 5 s (the first 3 are left out)" >&2; exit 2
fi
cases=${WSP_STREAM_CASES:-"default-100K:102400:16: links2-100K:102400:16:links2 eager256K-100K:102400:16:eager256K default-32K:32768:32: links2-32K:32768:32:links2"}
for c in $cases; do
  IFS=: read -r label bytes window tuning <<<"$c"
  if [ -z "$label" ] || ! [[ $bytes =~ ^[1-9][0-9]*$ && $window =~ ^[1-9][0-9]*$ ]]; then
    echo "mpi_stream_netlab.sh: case '$c' in WSP_STREAM_CASES is not label:bytes:window:tuning" >&2
    exit 2
  fi
  if [ -n "$tuning" ] && ! wsp_tuning openmpi "$tuning" >/dev/null; then
    echo "mpi_stream_netlab.sh: case '$label' in WSP_STREAM_CASES names an unknown tuning" >&2
    exit 2
  fi
done
name=wms$(( $$ % 10000 ))
mkdir -p "$out" "$root/build/probes"
"$root/scripts/deps.sh"
mpicc -O2 -std=c11 -o "$root/build/probes/mpi_stream-openmpi" "$root/bench/mpi_stream.c"
trap '"$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true' EXIT
"$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate"
"$root/scripts/netlab" calibrate --name "$name" --only a2a --seconds 10 \
  --json "$out/mpi-stream-calibrate.json"
for c in $cases; do
  IFS=: read -r label bytes window tuning <<<"$c"
  setting_args=()
  # shellcheck disable=SC2046 # the settings are NAME VALUE words
  [ -z "$tuning" ] || wsp_setting_args openmpi $(wsp_tuning openmpi "$tuning")
  echo "== $label"
  "$root/scripts/netlab" run --name "$name" --time-limit $(( duration * 4 + 120 )) \
    "${setting_args[@]}" -- \
    "$root/build/probes/mpi_stream-openmpi" --bytes "$bytes" --window "$window" \
    --seconds "$duration" --link-mbit "$mbit" \
    --label "netlab-cluster${hosts}x1-$rate-openmpi-$label" --json "$out/mpi-stream.json"
done
