#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job: installs what is missing, builds wirespeed, and shows what it
# is for. As root it builds a small netlab cluster (4 hosts, one rank each,
# NIC 100 Mbit/s, Open MPI over TCP through the shaped links) and measures,
# side by side in one run, wirespeed against the MPI's own way of doing the
# same: allreduce and bcast of 16 MiB (busbw / B; against the MPI at its
# defaults and tuned by hand, bench/tunings), the sparse exchange, and a
# 20-second shuffle beside synchronous rounds; it ends with a summary table
# and writes results/demo-netlab.png. The lab is removed on exit, also after
# a failure or Ctrl-C. Without root (or where namespaces do not work) it runs
# the sparse exchange on loopback instead, as before.
#   scripts/demo.sh [--loopback] [--np N] [wsp-bench sparse options]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/netlab_args.sh"   # wsp_tuning_best, wsp_setting_args

usage() {
  cat <<'EOF'
usage: scripts/demo.sh [--loopback] [--np N] [wsp-bench sparse options]

Installs what is missing (scripts/deps.sh), builds wirespeed with Open MPI
(scripts/build.sh openmpi), then:

  as root: a netlab cluster of 4 hosts, one rank each, NIC B = 100 Mbit/s;
    raw TCP ring check (iperf3), then wirespeed beside the MPI's own call:
      allreduce, bcast 16 MiB    wsp-bench coll: auto vs MPI_Allreduce/MPI_Bcast,
                                 at Open MPI's defaults and, one more job each,
                                 under its best hand tuning (bench/tunings)
      sparse exchange 64 KiB     wsp-bench sparse: auto vs MPI_Alltoall+Alltoallv
      shuffle, 20 s each         wsp-bench shuffle: adaptive vs synchronous rounds
    a summary table (ratio wirespeed / MPI) and results/demo-netlab.png
    (shuffle goodput over time); JSON lines in results/demo-netlab-*.json.
    Takes about three minutes. The lab is removed on exit, whatever happens.

  without root, or with --loopback: wsp-bench sparse on loopback, N ranks
    (--np, default 16), NBX, PEX, alltoallv and auto side by side; further
    options go to wsp-bench sparse (see its --help); JSON lines in
    results/sparse-loopback.json.
EOF
}

loopback=0
np=16
np_given=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --loopback) loopback=1; shift ;;
    --np) [ $# -ge 2 ] || { echo "demo: --np needs a number" >&2; exit 2; }
          np=$2; np_given=1; shift 2 ;;
    *) break ;;                           # the rest goes to wsp-bench sparse
  esac
done
case "$np" in ''|*[!0-9]*|0) echo "demo: --np '$np' is not a positive number" >&2; exit 2 ;; esac

why=
if [ "$loopback" = 0 ] && [ "$(id -u)" != 0 ]; then
  why="not root, so no netlab cluster (network namespaces need root)"
fi
if [ "$loopback" = 0 ] && [ -z "$why" ] && { [ "$np_given" = 1 ] || [ $# -gt 0 ]; }; then
  given=$( ( [ "$np_given" = 1 ] && printf -- '--np %s ' "$np"; printf '%s ' "$@" ) )
  echo "demo: '${given% }': --np and wsp-bench options apply to the loopback run only;" \
       "add --loopback" >&2
  exit 2
fi

"$root/scripts/deps.sh" core openmpi lab plot
"$root/scripts/build.sh" openmpi >/dev/null
bench=$root/build/openmpi/tools/wsp-bench
netlab=$root/scripts/netlab
out=$root/results
mkdir -p "$out"

if [ "$loopback" = 0 ] && [ -z "$why" ]; then
  if ! msg=$("$netlab" doctor 2>&1); then
    why="this machine cannot host a netlab lab (${msg##*error: })"
  fi
fi

if [ "$loopback" = 1 ] || [ -n "$why" ]; then
  [ -n "$why" ] && echo "demo: $why: running the sparse exchange on loopback instead"
  json="$out/sparse-loopback.json"
  echo "demo: wsp-bench sparse on loopback, $np ranks (Open MPI); JSON lines in $json"
  exec mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np "$np" \
    "$bench" sparse --json "$json" --label loopback "$@"
fi

# ---------------------------------------------------------------- netlab
hosts=4
rate=100mbit
name=wd$(( $$ % 100000 ))
label="netlab-cluster${hosts}x1-${rate}-openmpi"
coll_json=$out/demo-netlab-coll.json
sparse_json=$out/demo-netlab-sparse.json
shuffle_json=$out/demo-netlab-shuffle.json
cal_json=$out/demo-netlab-calibrate.json
png=$out/demo-netlab.png
rm -f "$coll_json" "$sparse_json" "$shuffle_json" "$cal_json" "$png"  # this demo's own outputs

lab_down() { "$netlab" down --name "$name" >/dev/null 2>&1 || true; }
trap lab_down EXIT
trap 'echo "demo: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

t0=$SECONDS
"$netlab" up cluster --name "$name" --owner-pid $$ --hosts "$hosts" --link-rate "$rate"
echo
echo "== raw TCP: every host sends to its right neighbour at once (iperf3), fraction of B"
"$netlab" calibrate --name "$name" --only ring --seconds 2 --json "$cal_json"

echo
echo "== allreduce, bcast 16 MiB: wirespeed (auto) and the MPI's own call (mpi)"
"$netlab" run --name "$name" --time-limit 300 -- \
  "$bench" coll --colls allreduce,bcast --sizes 16M --algs auto,mpi \
  --reps 2 --iters 1 --warmup 0 --label "$label" --json "$coll_json"

# The same against the MPI tuned by hand: per collective, one job under the
# tuning bench/tunings marks best for it on this lab's shape, auto beside the
# MPI's call in that job (the settings apply to both).
for coll in allreduce bcast; do
  tuned=$(wsp_tuning_best openmpi "$coll@${hosts}x1")
  [ -n "$tuned" ] || continue
  # shellcheck disable=SC2086  (the settings are words)
  wsp_setting_args openmpi ${tuned#*: }
  echo
  echo "== $coll 16 MiB, Open MPI tuned by hand (${tuned%%:*}: ${tuned#*: })"
  "$netlab" run --name "$name" --time-limit 300 "${setting_args[@]}" -- \
    "$bench" coll --colls "$coll" --sizes 16M --algs auto,mpi \
    --reps 2 --iters 1 --warmup 0 --label "$label-tuned-${tuned%%:*}" --json "$coll_json"
done

echo
echo "== sparse exchange, 64 KiB to 1 or 2 of the 3 other ranks: auto against alltoallv"
echo "   (MPI_Alltoall of the counts + MPI_Alltoallv), NBX and PEX"
"$netlab" run --name "$name" --time-limit 300 -- \
  "$bench" sparse --sizes 64K --densities 1/p,0.5 --iters 20 --reps 3 \
  --label "$label" --json "$sparse_json"

echo
echo "== shuffle, 20 s each: wirespeed's paced engine (adaptive) beside synchronous rounds (s1)"
# The responses (100 KiB) must go eagerly: over Open MPI's TCP eager limit
# (64 KiB) each waits for a rendezvous answer queued behind the requester's
# own data, which holds every strategy below the link (bench/shuffle_netlab.sh).
"$netlab" run --name "$name" --time-limit 300 \
  --mpi-arg=--mca --mpi-arg=btl_tcp_eager_limit --mpi-arg=262144 \
  --mpi-arg=--mca --mpi-arg=btl_tcp_max_send_size --mpi-arg=262144 -- \
  "$bench" shuffle --strategies s1,adaptive --seconds 20 --link-rate "$rate" --quiet \
  --label "$label" --json "$shuffle_json"

lab_down
trap - EXIT
echo
plot_rc=0
/usr/bin/python3 "$root/python/wsp_report" shuffle "$shuffle_json" --out "$png" \
  --title "shuffle, netlab $hosts hosts x $rate: wirespeed (adaptive) vs synchronous rounds (s1)" \
  || { plot_rc=$?; echo "demo: the plot failed (exit $plot_rc)" >&2; }

python3 - "$rate" "$cal_json" "$coll_json" "$sparse_json" "$shuffle_json" <<'EOF'
import json, sys

rate, cal, coll, sparse, shuffle = sys.argv[1:]
B = float(rate[:-4]) * 1e6                      # bit/s ("100mbit")


def rows(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


ring = json.load(open(cal))["results"][0]
out = [("what", "measure", "wirespeed", "MPI", "wirespeed/MPI")]
# Each ratio divides two figures of one job: auto and the MPI's call at the
# MPI's defaults, then auto and the MPI's call under the hand tuning.
c = {(r["coll"], r["alg"], "-tuned-" in r["label"]): r for r in rows(coll)}
for name, call in (("allreduce", "MPI_Allreduce"), ("bcast", "MPI_Bcast")):
    for tuned in (False, True):
        if (name, "auto", tuned) not in c:
            continue
        a, m = c[(name, "auto", tuned)], c[(name, "mpi", tuned)]
        fa, fm = a["busbw_GBps"] * 8e9 / B, m["busbw_GBps"] * 8e9 / B
        what = "%s 16 MiB" % name
        if tuned:
            what += ", MPI tuned (%s)" % a["label"].split("-tuned-", 1)[1]
        out.append((what, "busbw / B", "%.2f %s" % (fa, a.get("chosen") or ""),
                    "%.2f %s" % (fm, call), "%.2f" % (fa / fm)))
s = {(r["k"], r["bytes"], r["alg"]): r for r in rows(sparse)}
for k, size in sorted({(k, b) for k, b, _ in s}):
    a, m = s[(k, size, "auto")], s[(k, size, "alltoallv")]
    out.append(("sparse %dK to %d peer%s" % (size // 1024, k, "s" if k > 1 else ""),
                "ms per round", "%.1f %s" % (a["t_round_us"] / 1e3, a["chosen"]),
                "%.1f Alltoall(v)" % (m["t_round_us"] / 1e3),
                "%.2f" % (m["t_round_us"] / a["t_round_us"])))
h = {r["strategy"]: r for r in rows(shuffle) if r.get("kind") == "summary"}
a, m = h["adaptive"], h["s1"]
out.append(("shuffle 20 s", "goodput / B", "%.2f adaptive" % a["frac_B_mean"],
            "%.2f sync rounds" % m["frac_B_mean"], "%.2f" % (a["frac_B_mean"] / m["frac_B_mean"])))
w = [max(len(r[i]) for r in out) for i in range(5)]
print("== summary: %d hosts x 1 rank, NIC B = %g Mbit/s, Open MPI; raw TCP ring %.2f B per host"
      % (len(ring["mbps"]), B / 1e6, ring["mean"]))
for r in out:
    print("  ".join(x.ljust(w[i]) for i, x in enumerate(r)).rstrip())
print("wirespeed/MPI > 1: wirespeed is better (for times: MPI time / wirespeed time)")
EOF
echo "plot: $png; JSON lines: $out/demo-netlab-*.json; $((SECONDS - t0)) s on the lab"
exit "$plot_rc"
