#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The whole test suite: installs what is missing, builds wirespeed five ways
# (Open MPI, MPICH, Open MPI with AddressSanitizer + UBSan, SimGrid SMPI, and
# the parsers' fuzz targets with clang) and runs each build's tests with
# ctest. netlab tests run in the Open MPI build (they need root; without it
# they are reported as skipped, each skipped test with its reason).
#   scripts/test.sh [flavour ...]     (default: openmpi mpich asan simgrid fuzz)
# Ends with one line "total: N passed, N failed, N skipped"; exits non-zero
# if anything failed or if no test ran at all. In CI (WSP_CI=1, set by
# .ci/run) a skipped test counts as failed, and so does a run in which no
# netlab test passed: CI runs as root, and those tests are the only ones of
# the network-level claims.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
all=(openmpi mpich asan simgrid fuzz)
# Arguments are checked before anything is installed or built.
for f in "$@"; do
  if [ "$f" = --help ] || [ "$f" = -h ]; then
    echo "usage: scripts/test.sh [flavour ...]   (flavours: ${all[*]}; default: all of them)"
    echo "Builds each flavour into build/<flavour> and runs its tests with ctest"
    echo "(docs/internals.md lists them)."
    exit 0
  fi
  if [[ " ${all[*]} " != *" $f "* ]]; then
    echo "test.sh: unknown flavour '$f' (expected: ${all[*]}; --help for usage)" >&2
    exit 2
  fi
done
flavours=("$@")
((${#flavours[@]})) || flavours=("${all[@]}")
case "${WSP_CI:-0}" in
  0|1) ci=${WSP_CI:-0} ;;
  *) echo "test.sh: WSP_CI=\"$WSP_CI\": expected 0 or 1" >&2; exit 2 ;;
esac

"$root/scripts/deps.sh" || exit 1
pass=0 fail=0 skip=0 lab=0 broken=()
for f in "${flavours[@]}"; do
  echo "=== $f: build"
  if ! "$root/scripts/build.sh" "$f" >"$root/build-$f.log" 2>&1; then
    cat "$root/build-$f.log"
    echo "=== $f: BUILD FAILED"
    broken+=("$f(build)")
    fail=$((fail + 1))
    continue
  fi
  rm -f "$root/build-$f.log"
  echo "=== $f: tests"
  log=$(mktemp)
  # Two at a time: a test that launches MPI ranks claims both slots and
  # runs alone; single-process tests pair up (tests/CMakeLists.txt, end).
  (cd "$root/build/$f" && ctest -j2 --output-on-failure --timeout 900) 2>&1 | tee "$log"
  line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$log" | tail -1)
  if [ -z "$line" ]; then
    echo "=== $f: ctest gave no summary"
    broken+=("$f(ctest)")
    fail=$((fail + 1))
  else
    total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
    failed=$(sed -E 's/.*, ([0-9]+) tests failed.*/\1/' <<<"$line")
    # ctest counts a skipped test as passed and one not run (no executable)
    # as failed.
    skipped=$(grep -cE "\*\*\*Skipped" "$log" || true)
    lab=$((lab + $(grep -cE "Test +#[0-9]+: lab\.[^ ]+ .* Passed" "$log" || true)))
    pass=$((pass + total - failed - skipped))
    fail=$((fail + failed))
    ((failed == 0)) || broken+=("$f")
    if ((skipped)); then
      # Each skipped test with the reason it printed ("SKIP: ...").
      awk '/^[0-9]+\/[0-9]+ Test: /{t=$3} /^SKIP: /{print "skipped: " t ": " substr($0, 7)}' \
        "$root/build/$f/Testing/Temporary/LastTest.log" 2>/dev/null
      if ((ci)); then
        echo "=== $f: $skipped test(s) skipped in CI"
        broken+=("$f(skipped)")
        fail=$((fail + skipped))
      else
        skip=$((skip + skipped))
      fi
    fi
  fi
  rm -f "$log"
done
if ((ci && lab == 0)); then
  echo "=== no netlab test passed in CI (they need root and the Open MPI build)"
  broken+=("lab(none)")
  fail=$((fail + 1))
fi
echo
((${#broken[@]})) && echo "failing: ${broken[*]}"
echo "total: $pass passed, $fail failed, $skip skipped"
((fail == 0 && pass > 0))
