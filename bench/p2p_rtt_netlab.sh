#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Striped point-to-point on a real round trip (the second source document's
# experiment, issue 46): twosite, 2 hosts (one per site), NIC and WAN
# 100mbit and no per-flow cap (--flow-cap = the WAN rate), so that what
# holds one TCP flow back is TCP itself: the WAN's delay (each way; the
# round trip is twice it), its loss, and the hosts' TCP buffers, at the
# kernel's defaults or tuned (tcp_rmem and tcp_wmem up to 64 MiB, set in the
# two host namespaces). For each condition one job per MPI: wsp-bench p2p,
# MPI_Send, wsp_striped_send with k lanes and auto, and iperf3 -P k (one
# message of each size over fresh connections, or 10 s each), with
# WSP_LOG=info so that the log shows what auto measured and chose. Needs
# root; the lab is removed again on exit.
#   bench/p2p_rtt_netlab.sh [outdir]      (default: results)
# Writes OUTDIR/p2p-rtt-netlab.json (wsp-bench's JSON lines; labels
# netlab-twosite-rttR-lossL-BUFFERS-MPI) and OUTDIR/p2p-rtt-netlab.txt (the
# jobs' output), then prints bench/p2p_rtt_summary.py's table.
# Environment (comma lists): WSP_MPIS (openmpi), WSP_DELAYS (10ms,40ms,100ms),
# WSP_LOSSES (0,0.01%,0.1%), WSP_BUFFERS (default,tuned; warm: idle
# connections keep their window, tcp_slow_start_after_idle=0), WSP_SIZES
# (10M,100M), WSP_LOSS_SIZES (10M: sizes under loss, where one flow can take
# minutes), WSP_LANES (1,2,4,8,16,auto), WSP_REPS (1), WSP_LAB_NAME, and
# WSP_IPERF (bytes: iperf3 -n SIZE, the same bytes as a message; 10s: 10 s).
# Loss runs only with the default buffers unless WSP_LOSS_TUNED=1.
# WSP_TUNED=1: after each condition's job, one job per p2p tuning of the MPI
# in bench/tunings (Open MPI: btl_tcp_links 8; MPICH has none), MPI_Send
# and auto again in it (labels ...-MPI-tuned-NAME).
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '3,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
mpis=${WSP_MPIS:-openmpi}
delays=${WSP_DELAYS:-10ms,40ms,100ms}
losses=${WSP_LOSSES:-0,0.01%,0.1%}
buffers=${WSP_BUFFERS:-default,tuned}
sizes=${WSP_SIZES:-10M,100M}
loss_sizes=${WSP_LOSS_SIZES:-10M}
lanes=${WSP_LANES:-1,2,4,8,16,auto}
reps=${WSP_REPS:-1}
case "${WSP_IPERF:-bytes}" in
  bytes) iperf=(--iperf-bytes) ;;
  10s) iperf=(--seconds 10) ;;
  *) echo "p2p_rtt_netlab: WSP_IPERF=$WSP_IPERF: expected bytes or 10s" >&2; exit 2 ;;
esac
rate=100mbit
name=${WSP_LAB_NAME:-wrt$(( $$ % 1000 ))}
mkdir -p "$out"
json="$out/p2p-rtt-netlab.json"
txt="$out/p2p-rtt-netlab.txt"
"$root/scripts/deps.sh" core lab ${mpis//,/ }
for m in ${mpis//,/ }; do "$root/scripts/build.sh" "$m" >/dev/null; done
lab_down() { "$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true; }
trap lab_down EXIT

for buf in ${buffers//,/ }; do
  for d in ${delays//,/ }; do
    for loss in ${losses//,/ }; do
      if [ "$loss" != 0 ] && [ "$buf" != default ] && [ "${WSP_LOSS_TUNED:-0}" != 1 ]; then
        continue
      fi
      sz=$sizes
      [ "$loss" = 0 ] || sz=$loss_sizes
      lab_down
      args=(up twosite --owner-pid $$ --name "$name" --hosts 2 --link-rate "$rate" --wan-rate "$rate"
            --flow-cap "$rate" --wan-delay "$d")
      [ "$loss" = 0 ] || args+=(--wan-loss "$loss")
      "$root/scripts/netlab" "${args[@]}"
      case $buf in
        default) ;;
        tuned)
          # What a host tuned for long fat paths sets: autotuning up to 64 MiB.
          for h in h0 h1; do
            ip netns exec "$name-$h" sysctl -q -w net.ipv4.tcp_rmem="4096 131072 67108864" \
              net.ipv4.tcp_wmem="4096 65536 67108864"
          done ;;
        warm)
          # A connection keeps its window while idle (the kernel's default
          # shrinks it back to the initial window after a retransmission
          # timeout of idleness): every connection, MPI's and the lanes',
          # starts a message where the last one left it.
          for h in h0 h1; do
            ip netns exec "$name-$h" sysctl -q -w net.ipv4.tcp_slow_start_after_idle=0
          done ;;
        *) echo "p2p_rtt_netlab: unknown buffers '$buf' (default, tuned, warm)" >&2; exit 2 ;;
      esac
      "$root/scripts/netlab" calibrate --name "$name" --only rtt | tee -a "$txt"
      rtt_ms=$(( 2 * ${d%ms} ))
      for m in ${mpis//,/ }; do
        label="netlab-twosite-rtt${rtt_ms}ms-loss${loss%\%}-$buf-$m"
        echo "== $label" | tee -a "$txt"
        # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize (docs/netlab.md).
        "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 --np 2 --time-limit 3600 \
          --done-line "# wsp-bench p2p: finished" --done-grace 30 -- env WSP_LOG=info \
          "$root/build/$m/tools/wsp-bench" p2p --sizes "$sz" --lanes "$lanes" --reps "$reps" \
          "${iperf[@]}" --link-rate "$rate" --label "$label" --json "$json" 2>&1 |
          tee -a "$txt" || [ "${PIPESTATUS[0]}" = 124 ]
        [ "${WSP_TUNED:-0}" = 1 ] || continue
        while IFS= read -r line; do
          [ -n "$line" ] || continue
          read -r -a kv <<< "${line#*:}"
          wsp_setting_args "$m" "${kv[@]}"
          echo "== $label-tuned-${line%%:*}" | tee -a "$txt"
          "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 --np 2 --time-limit 3600 \
            "${setting_args[@]}" --done-line "# wsp-bench p2p: finished" --done-grace 30 -- \
            env WSP_LOG=info "$root/build/$m/tools/wsp-bench" p2p --sizes "$sz" --lanes auto \
            --methods mpi,striped --reps "$reps" --link-rate "$rate" \
            --label "$label-tuned-${line%%:*}" --json "$json" 2>&1 |
            tee -a "$txt" || [ "${PIPESTATUS[0]}" = 124 ]
        done <<< "$(wsp_tunings "$m" p2p)"
      done
    done
  done
done
python3 "$root/bench/p2p_rtt_summary.py" "$json"
