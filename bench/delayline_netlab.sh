#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# netlab's delay line: what it adds and what it costs. Runs the lab test
# (round trips at 1, 10 and 100 ms against the lab's own, the spread without
# jitter, the ceiling with iperf3 -P 8 at zero delay, a clamped window, one
# flow at 1% loss, twosite's WAN delay), then the line's CPU while it carries
# iperf3 -P 4 on a 2-host cluster at each RATE with --delay 10ms. Writes
# OUTDIR/delayline-DATE.txt. Needs root and iperf3; removes its labs on exit.
#   bench/delayline_netlab.sh [outdir] [rates]     (defaults: results 100mbit,1gbit)
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-results}
rates=${2:-100mbit,1gbit}
mkdir -p "$out"
log="$out/delayline-$(date +%F).txt"
name="bdl$$"
name=${name:0:8}
trap '"$root/scripts/netlab" down --name "$name" --scan >/dev/null 2>&1 || true' EXIT
{
  echo "# $(date -Is) $(git -C "$root" rev-parse --short HEAD) $(nproc) cores"
  python3 "$root/tests/lab/test_delay.py"
  for rate in ${rates//,/ }; do
    "$root/scripts/netlab" up cluster --name "$name" --owner-pid $$ --hosts 2 --link-rate "$rate" --delay 10ms >/dev/null
    st=/run/netlab/$name.json
    pid=$(python3 -c "import json; print(json.load(open('$st'))['delayline']['pid'])")
    h1=$(python3 -c "import json; print(json.load(open('$st'))['hosts'][1]['ip'])")
    ip netns exec "$name-h1" iperf3 -s -1 -D -p 5203
    sleep 0.5
    c0=$(awk '{print $14+$15}' "/proc/$pid/stat"); w0=$(date +%s.%N)
    ip netns exec "$name-h0" iperf3 -c "$h1" -p 5203 -P 4 -t 10 -J > "$out/.iperf.json"
    c1=$(awk '{print $14+$15}' "/proc/$pid/stat"); w1=$(date +%s.%N)
    python3 - "$out/.iperf.json" "$rate" "$c0" "$c1" "$w0" "$w1" "$(getconf CLK_TCK)" <<'PY'
import json, sys
f, rate, c0, c1, w0, w1, tck = sys.argv[1:]
e = json.load(open(f))["end"]["sum_received"]
cpu = (int(c1) - int(c0)) / int(tck)
wall = float(w1) - float(w0)
print("cpu: rate %s, delay 10ms, iperf3 -P 4: %.1f Mbit/s; the line used %.2f CPU-s in %.1f s"
      " (%.0f%% of a core), %.3f GB per CPU-second"
      % (rate, e["bits_per_second"] / 1e6, cpu, wall, 100 * cpu / wall, e["bytes"] / 1e9 / cpu))
PY
    rm -f "$out/.iperf.json"
    "$root/scripts/netlab" down --name "$name" >/dev/null
  done
} 2>&1 | tee "$log"
echo "wrote $log"
