#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job installs only what it uses (issue: SimGrid, clang,
# gfortran and Slurm are the tests' alone): the sets scripts/demo.sh asks
# scripts/deps.sh for must not bring them, every set together must, and an
# unknown set is refused naming it. Installs nothing (--list).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
deps=$root/scripts/deps.sh
fail=0
# The sets on demo.sh's own call of deps.sh.
demo_sets=$(sed -n 's/^"\$root\/scripts\/deps.sh"\(.*\)$/\1/p' "$root/scripts/demo.sh")
[ -n "$demo_sets" ] || { echo "FAIL: demo.sh calls scripts/deps.sh without sets (every set)"; exit 1; }
demo=$("$deps" --list $demo_sets) || { echo "FAIL: deps.sh --list$demo_sets"; exit 1; }
every=$("$deps" --list) || { echo "FAIL: deps.sh --list"; exit 1; }
for p in libsimgrid-dev clang-14 gfortran mpich libmpich-dev clang-format-14 slurmctld slurmd \
         munge; do
  if grep -qx "$p" <<<"$demo"; then echo "FAIL: the main job installs $p"; fail=1; fi
  grep -qx "$p" <<<"$every" || { echo "FAIL: every set lacks $p"; fail=1; }
done
for p in openmpi-bin libopenmpi-dev cmake libjansson-dev iperf3 python3-matplotlib; do
  grep -qx "$p" <<<"$demo" || { echo "FAIL: the main job lacks $p"; fail=1; }
done
out=$("$deps" nosuchset 2>&1)
rc=$?
if [ "$rc" != 2 ] || ! grep -q "unknown set 'nosuchset'" <<<"$out"; then
  echo "FAIL: an unknown set gave status $rc: $out"
  fail=1
fi
((fail)) || echo "ok: the main job's sets ($demo_sets ) install $(wc -l <<<"$demo") packages of $(wc -l <<<"$every")"
exit $fail
