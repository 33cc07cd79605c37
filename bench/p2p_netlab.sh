#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# wsp-bench p2p on netlab: one message between two hosts, MPI_Send against
# wsp_striped_send (k = 1..16 and auto) and iperf3 -P k on the same path.
# Needs root; every lab it makes is removed again on exit.
#   bench/p2p_netlab.sh [outdir]            (default: results)
# Parts (WSP_P2P_PARTS, default "sweep tuned slow cluster headline sealed cpu"):
#   sweep    twosite, 2 hosts (one per site), NIC and WAN 100mbit, per-flow
#            cap 20mbit: 10M and 100M, every k, auto, iperf3, both MPIs.
#   tuned    the same lab, each MPI under each of its p2p tunings in
#            bench/tunings (Open MPI: btl_tcp_links 8, its only setting for
#            several connections per pair; MPICH has none) beside auto.
#   slow     the same lab, one data lane of each striped communicator (4
#            lanes forced; auto) slowed to a quarter of the cap by its
#            flow's htb class in the router, after the set-up (wsp-bench
#            --hold prints the lanes' ports): the rate against the sum of
#            the data lanes' rates.
#   cluster  a cluster of 2 hosts at 100mbit (no per-flow cap): auto must
#            stay with MPI (within 2%).
#   headline the sweep's lab, 16M (WSP_HEADLINE_SIZES): auto beside
#            MPI_Send under each MPI, then each MPI again under each of its
#            p2p tunings (settings of the whole job, so a job each, with
#            auto timed beside it again).
#   sealed   the sweep's lab: auto with lanes in clear and sealed
#            (--encrypt 0,1) beside MPI_Send, 16M and 100M
#            (WSP_SEALED_SIZES), both MPIs.
#   cpu      2 hosts on one switch at 100gbit: netlab has no unshaped
#            profile, and a tbf at 100 Gbit/s never binds on a machine
#            whose cores move ~10 Gbit/s. Open MPI: MPI_Send, striped k = 1
#            and 4 in clear and sealed, iperf3 -P 1 and 4, 64M and 256M
#            (WSP_CPU_SIZES): rate and GB per CPU-second of both ends.
# The new parts (headline, sealed, cpu) write $out/p2p-netlab-PART.json,
# the others $out/p2p-netlab.json.
# Environment: WSP_MPIS ("openmpi mpich"), WSP_REPS (3), WSP_SIZES (10M,100M),
# WSP_LAB_NAME (the lab's netlab name; default wp2 and a number from the PID).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
parts=${WSP_P2P_PARTS:-sweep tuned slow cluster headline sealed cpu}
mpis=${WSP_MPIS:-openmpi mpich}
reps=${WSP_REPS:-3}
sizes=${WSP_SIZES:-10M,100M}
rate=100mbit wan=100mbit cap=20mbit
name=${WSP_LAB_NAME:-wp2$(( $$ % 1000 ))}
mkdir -p "$out"
json="$out/p2p-netlab.json"
"$root/scripts/deps.sh"
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
lab_down() { "$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true; }
trap lab_down EXIT
all_lanes=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,auto

run() { # MPI LABEL [netlab run options --] wsp-bench p2p args...
  local m=$1 label=$2
  shift 2
  echo "== $label"
  # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize (docs/netlab.md): netlab
  # ends such a job after wsp-bench's "finished" line; 124 is not an error.
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 --np 2 --time-limit 3600 \
    --done-line "# wsp-bench p2p: finished" --done-grace 30 "$@" || [ $? = 124 ]
}

# run_tuned SUFFIX SIZES JSON [wsp-bench args]: on the twosite lab, a job per MPI and per
# p2p tuning of bench/tunings (the settings hold for a whole job), auto beside MPI_Send.
run_tuned() {
  local suffix=$1 sz=$2 js=$3 m tlabel settings label
  shift 3
  for m in $mpis; do
    while IFS=: read -r tlabel settings; do
      [ -n "$tlabel" ] || continue
      # shellcheck disable=SC2086 # the settings are NAME VALUE words
      wsp_setting_args "$m" $settings
      label="netlab-twosite-W$wan-F$cap-$m-$tlabel$suffix"
      run "$m" "$label" "${setting_args[@]}" -- \
        "$root/build/$m/tools/wsp-bench" p2p --sizes "$sz" --lanes auto "$@" \
        --methods mpi,striped --reps "$reps" --link-rate "$wan" --label "$label" --json "$js"
    done < <(wsp_tunings "$m" p2p)
  done
}

twosite_up() {
  lab_down
  "$root/scripts/netlab" up twosite --name "$name" --owner-pid $$ --hosts 2 --link-rate "$rate" \
    --wan-rate "$wan" --flow-cap "$cap"
}

for part in $parts; do
  case $part in
  sweep)
    twosite_up
    for m in $mpis; do
      label="netlab-twosite-W$wan-F$cap-$m"
      run "$m" "$label" -- "$root/build/$m/tools/wsp-bench" p2p --sizes "$sizes" \
        --lanes "$all_lanes" --reps "$reps" --link-rate "$wan" --label "$label" --json "$json"
    done
    ;;
  tuned)
    twosite_up
    run_tuned "" "$sizes" "$json"
    ;;
  slow)
    twosite_up
    for m in $mpis; do
      label="netlab-twosite-W$wan-F$cap-$m-slowlane"
      log=$(mktemp)
      run "$m" "$label" -- "$root/build/$m/tools/wsp-bench" p2p \
        --sizes "$sizes" --lanes 4,auto --methods striped --reps "$reps" --hold 15 \
        --link-rate "$wan" --label "$label" --json "$json" > "$log" 2>&1 &
      pid=$!
      for _ in $(seq 600); do grep -q "holding" "$log" && break; sleep 0.1; done
      /usr/bin/python3 "$root/bench/p2p_slow_lane.py" --name "$name" --cap "$cap" \
        --wan "$wan" --factor 0.25 --log "$log" | tee -a "$out/p2p-slowlane-$m.txt"
      wait "$pid" || true
      cat "$log"
      rm -f "$log"
    done
    ;;
  cluster)
    lab_down
    "$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts 2 --link-rate "$rate"
    for m in $mpis; do
      label="netlab-cluster2-$rate-$m"
      run "$m" "$label" -- "$root/build/$m/tools/wsp-bench" p2p \
        --sizes 100K,1M,10M,100M --lanes 2,4,auto --reps "$reps" --link-rate "$rate" \
        --label "$label" --json "$json"
    done
    ;;
  headline)
    twosite_up
    pj="$out/p2p-netlab-headline.json"
    hs=${WSP_HEADLINE_SIZES:-16M}
    for m in $mpis; do
      label="netlab-twosite-W$wan-F$cap-$m-headline"
      run "$m" "$label" -- "$root/build/$m/tools/wsp-bench" p2p --sizes "$hs" --lanes auto \
        --encrypt 0 --methods mpi,striped --reps "$reps" --link-rate "$wan" --label "$label" \
        --json "$pj"
    done
    run_tuned -headline "$hs" "$pj" --encrypt 0
    ;;
  sealed)
    twosite_up
    for m in $mpis; do
      label="netlab-twosite-W$wan-F$cap-$m-sealed"
      run "$m" "$label" -- "$root/build/$m/tools/wsp-bench" p2p \
        --sizes "${WSP_SEALED_SIZES:-16M,100M}" --lanes auto --encrypt 0,1 \
        --methods mpi,striped --reps "$reps" --link-rate "$wan" --label "$label" \
        --json "$out/p2p-netlab-sealed.json"
    done
    ;;
  cpu)
    lab_down
    "$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts 2 --link-rate 100gbit
    label="netlab-cluster2-100gbit-openmpi-cpu"
    run openmpi "$label" -- "$root/build/openmpi/tools/wsp-bench" p2p \
      --sizes "${WSP_CPU_SIZES:-64M,256M}" --lanes 1,4 --encrypt 0,1 --reps "$reps" \
      --label "$label" --json "$out/p2p-netlab-cpu.json"
    ;;
  *) echo "p2p_netlab.sh: unknown part '$part'" >&2; exit 2 ;;
  esac
done
