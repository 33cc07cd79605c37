#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The multi-site collectives on netlab's twosite profile: 2 sites of 4 hosts
# (one rank each), NIC B = 25mbit, WAN W = 100mbit, first without a per-flow
# cap on the WAN (F = W), then with F = B/2. wsp-bench coll --sites runs
# bcast and allreduce with the multi-site algorithms, the baselines
# far_first and two_tier, auto and the MPI's own call (MPI_COMM_WORLD), and
# then the MPI's call tuned by hand (one job per setting of bench/tunings).
# A summary per run: each algorithm's busbw / B, sites(_chain) against the
# baselines, and the measured time against the model's prediction.
# Needs root; every lab it makes is removed again on exit.
#   bench/sites_netlab.sh [outdir]            (default: results)
# Environment:
#   WSP_SITES_PARTS ("nocap cap"; "lanes": with the cap and n = 4, sites
#   over the model's lanes, then with WSP_WAN_LANES=1; "sweep": no cap,
#   sites and sites_chain at each n of WSP_SWEEP ("1 2 3 4"; n is
#   WSP_WAN_CONNECTIONS, at most a site's 4 ranks), then
#   bench/sites_knee.py's table of the knee in n), WSP_MPIS ("openmpi
#   mpich"), WSP_SIZES (1M,4M,16M), WSP_REPS (1),
#   WSP_TUNED (1: add the hand-tuned MPI runs at the largest size: the
#   tunings of bench/tunings for "sites"),
#   WSP_ALGS (sites,sites_chain,far_first,two_tier,scatter_ring,rabenseifner,
#   auto,mpi: scatter_ring and rabenseifner are the flat van de Geijn bcast
#   and Rabenseifner allreduce),
#   WSP_WAN_DELAY (none; e.g. 10ms: the WAN's delay each way, through
#   netlab's delay line, as the third source document measured; the labels
#   then carry it, e.g. nocap-d10ms-openmpi).
# The summary also gives the source's own throughput measure: size x nodes /
# time for bcast, size x nodes^2 / time for allreduce (MB/s, 1 MB = 1e6 B).
# In the tuning lists, a NAME starting with WSP_ is an environment variable
# of wirespeed's, not a setting of the MPI's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"
out=${1:-$root/results}
parts=${WSP_SITES_PARTS:-nocap cap}
mpis=${WSP_MPIS:-openmpi mpich}
sizes=${WSP_SIZES:-1M,4M,16M}
reps=${WSP_REPS:-1}
algs=${WSP_ALGS:-sites,sites_chain,far_first,two_tier,scatter_ring,rabenseifner,auto,mpi}
wan_delay=${WSP_WAN_DELAY:-}
case $wan_delay in
  ''|*[0-9]ms|*[0-9]us|*[0-9]s) ;;
  *) echo "sites_netlab.sh: WSP_WAN_DELAY must be a time such as 10ms, not '$wan_delay'" >&2
     exit 2 ;;
esac
dtag=${wan_delay:+-d$wan_delay}
rate=25mbit wan=100mbit
name=wsi$(( $$ % 1000 ))
sites="ranks:0-3;4-7"
largest=${sizes##*,}
case $sizes in
  ''|*[!0-9KMGkmgiB,]*)
    echo "sites_netlab.sh: WSP_SIZES must be sizes separated by commas (e.g. 16M,64M), not '$sizes'" >&2
    exit 2 ;;
esac
mkdir -p "$out"
json="$out/sites-netlab.json"
"$root/scripts/deps.sh"
for m in $mpis; do "$root/scripts/build.sh" "$m" >/dev/null; done
lab_down() { "$root/scripts/netlab" down --name "$name" >/dev/null 2>&1 || true; }
trap lab_down EXIT
stamp=$(date +%Y%m%d%H%M%S)
labels=

# run MPI LABEL ALGS SIZES [NAME VALUE ...]: one wsp-bench coll job.
run() {
  local m=$1 label="$2-$stamp" a=$3 sz=$4
  shift 4
  wsp_setting_args "$m" WSP_SITES "$sites" "$@"
  local args=("${setting_args[@]}")
  labels="$labels$label,"
  echo "== $label"
  # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize after the results are
  # written (docs/netlab.md): netlab ends such a job after wsp-bench's
  # "finished" line, and its exit code 124 is not an error here.
  "$root/scripts/netlab" run --name "$name" --mpi "$m" --ppn 1 "${args[@]}" --time-limit 5400 \
    --done-line "# wsp-bench coll: finished" --done-grace 60 -- \
    "$root/build/$m/tools/wsp-bench" coll --sites --colls bcast,allreduce --sizes "$sz" \
    --algs "$a" --reps "$reps" --iters 1 --warmup 0 --label "$label" --json "$json" \
    </dev/null || [ $? = 124 ]
}

for part in $parts; do
  case $part in
  nocap|sweep) cap=$wan ;;
  cap|lanes) cap=12500kbit ;;
  *) echo "sites_netlab.sh: unknown part '$part' (nocap, cap, lanes, sweep)" >&2; exit 2 ;;
  esac
  lab_down
  "$root/scripts/netlab" up twosite --name "$name" --owner-pid $$ --hosts 8 --link-rate "$rate" --wan-rate "$wan" \
    --flow-cap "$cap" ${wan_delay:+--wan-delay "$wan_delay"}
  for m in $mpis; do
    if [ "$part" = lanes ]; then
      # sites over the model's lanes, then with one MPI message per
      # crossing; both with n = 4 (one connection per rank of a site), so
      # that the calibration's n does not differ between the two jobs.
      run "$m" "$part$dtag-$m-model" sites "$sizes" WSP_WAN_CONNECTIONS 4
      run "$m" "$part$dtag-$m-one" sites "$sizes" WSP_WAN_CONNECTIONS 4 WSP_WAN_LANES 1
      continue
    fi
    if [ "$part" = sweep ]; then
      sweep_labels=
      for n in ${WSP_SWEEP:-1 2 3 4}; do
        run "$m" "$part$dtag-$m-n$n" sites,sites_chain "$sizes" WSP_WAN_CONNECTIONS "$n"
        sweep_labels="$sweep_labels$part$dtag-$m-n$n-$stamp,"
      done
      python3 "$root/bench/sites_knee.py" "$json" --labels "${sweep_labels%,}" \
        --nic-bw "${rate%mbit}Mbps" --wan-bw "${wan%mbit}Mbps" --wan-lat "${wan_delay:-0ms}"
      continue
    fi
    run "$m" "$part$dtag-$m" "$algs" "$sizes"
    [ "${WSP_TUNED:-1}" = 1 ] || continue
    list=$(wsp_tunings "$m" sites)
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      read -r -a kv <<< "${line#*:}"
      run "$m" "$part$dtag-$m-tuned-${line%%:*}" mpi "$largest" "${kv[@]}"
    done <<< "$list"
  done
done

/usr/bin/python3 - "$json" "${rate%mbit}" "$labels" "$stamp" <<'PY'
import json, sys
path, mbit, labels, stamp = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
want = [l for l in labels.split(",") if l]
B = mbit * 1e6 / 8
rows = {}
for line in open(path):
    r = json.loads(line)
    if r.get("bench") == "coll" and r["label"] in want:
        rows[(r["label"], r["coll"], r["size"], r["alg"])] = r
def short(l):
    return l[:-len(stamp) - 1]
def words(l):
    """A label's words, the part and its delay (nocap-d10ms) kept together."""
    w = short(l).split("-")
    if len(w) > 2 and w[1][:1] == "d" and w[1][1:2].isdigit():
        w = [w[0] + "-" + w[1]] + w[2:]
    return w
print("\n| run | collective | size | algorithm (ran) | time s | busbw / B | source's MB/s | model s | time / model |")
print("|---|---|---|---|---:|---:|---:|---:|---:|")
for k in sorted(rows, key=lambda k: (want.index(k[0]), k[1], k[2], k[3])):
    r = rows[k]
    pred = r.get("predicted_s")
    # The third source document's measure: bytes x nodes / time for bcast, x nodes^2 for
    # allreduce.
    src = k[2] * r["p"] ** (1 if k[1] == "bcast" else 2) / r["time_s"] / 1e6
    print(f"| {short(k[0])} | {k[1]} | {k[2] >> 20} MiB | {k[3]} ({r['ran']}) | {r['time_s']:.2f} "
          f"| {r['busbw_GBps'] * 1e9 / B:.3f} | {src:.1f} | {pred if pred is None else round(pred, 2)} "
          f"| {'-' if not pred else round(r['time_s'] / pred, 2)} |")
print("\nsummary (ratios of times in one job; tuned MPI calls ran in jobs of their own):")
for l in want:
    if not l.startswith("lanes-") or "-model-" not in l:
        continue
    mpi = words(l)[1]
    for (lab, coll, size, alg), lanes in sorted(rows.items()):
        one = rows.get((l.replace("-model-", "-one-"), coll, size, alg))
        if lab == l and one:
            print(f"  lanes {mpi} {coll} {size >> 20} MiB: {alg} over {lanes.get('wan_lanes')} lanes "
                  f"{lanes['time_s']:.2f} s, over one MPI message {one['time_s']:.2f} s: "
                  f"{one['time_s'] / lanes['time_s']:.2f}x (two jobs, n = 4)")
for l in want:
    if "-tuned-" in l:
        continue
    part, mpi = words(l)[:2]
    for coll, base, mine in (("bcast", "far_first", ("sites", "sites_chain", "auto")),
                             ("allreduce", "two_tier", ("sites", "auto"))):
        for size in sorted({k[2] for k in rows if k[0] == l and k[1] == coll}):
            b, m = rows.get((l, coll, size, base)), rows.get((l, coll, size, "mpi"))
            if not b:
                continue
            tuned = [(r, short(k[0])) for k, r in rows.items() if k[1] == coll and k[2] == size
                     and k[0].startswith(f"{part}-{mpi}-tuned-")]
            for a in mine:
                r = rows.get((l, coll, size, a))
                if not r:
                    continue
                s = (f"  {part} {mpi} {coll} {size >> 20} MiB: {a} ({r['ran']}) {r['time_s']:.2f} s, "
                     f"{b['time_s'] / r['time_s']:.2f}x {base}")
                if m:
                    s += f", {m['time_s'] / r['time_s']:.2f}x MPI default"
                if tuned:
                    best, bl = min(tuned, key=lambda t: t[0]["time_s"])
                    s += f", {best['time_s'] / r['time_s']:.2f}x best tuned MPI ({bl.split('-tuned-')[1]})"
                print(s)
PY
echo "# JSON lines appended to $json (labels end in -$stamp)"
