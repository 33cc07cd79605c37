#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds wirespeed five ways
# (Open MPI, MPICH, Open MPI with AddressSanitizer + UBSan, SimGrid SMPI, and
# the parsers' fuzz targets with clang) and runs each build's tests with
# ctest. netlab tests run in the Open MPI build (they need root; without it
# they are reported as skipped, with a reason).
#   scripts/test.sh [flavour ...]     (default: openmpi mpich asan simgrid fuzz)
# Ends with one line "total: N passed, N failed, N skipped"; exits non-zero
# if anything failed or if no test ran at all.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
flavours=("$@")
((${#flavours[@]})) || flavours=(openmpi mpich asan simgrid fuzz)

"$root/scripts/deps.sh" || exit 1
pass=0 fail=0 skip=0 broken=()
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
  (cd "$root/build/$f" && ctest --output-on-failure --timeout 900) 2>&1 | tee "$log"
  line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$log" | tail -1)
  if [ -z "$line" ]; then
    echo "=== $f: ctest gave no summary"
    broken+=("$f(ctest)")
    fail=$((fail + 1))
  else
    total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
    failed=$(sed -E 's/.*, ([0-9]+) tests failed.*/\1/' <<<"$line")
    skipped=$(grep -cE "\*\*\*Skipped|Not Run" "$log" || true)
    pass=$((pass + total - failed - skipped))
    fail=$((fail + failed))
    skip=$((skip + skipped))
    ((failed == 0)) || broken+=("$f")
  fi
  rm -f "$log"
done
echo
((${#broken[@]})) && echo "failing: ${broken[*]}"
echo "total: $pass passed, $fail failed, $skip skipped"
((fail == 0 && pass > 0))
