#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs one fuzz target on a copy of its seed corpus for a while.
#   run.sh TARGET SEED_DIR SECONDS
# The seeds are copied to a temporary directory, so the inputs the run
# finds never change the repository; a crashing input is kept in the
# current directory (crash-*) and printed in hex. Prints libFuzzer's final
# stats (executions, coverage); exits non-zero on any finding.
set -uo pipefail
if [ $# -ne 3 ] || [ ! -x "$1" ] || [ ! -d "$2" ]; then
  echo "usage: run.sh TARGET SEED_DIR SECONDS" >&2
  exit 2
fi
target=$1 seeds=$2 seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$seeds/." "$work/"
"$target" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 "$work" 2>&1 | grep -v "^#[0-9]*.*\(NEW\|REDUCE\|pulse\)"
rc=${PIPESTATUS[0]}
for f in crash-* leak-* timeout-* oom-*; do
  [ -e "$f" ] || continue
  echo "finding: $f"
  od -A d -c "$f" | head -20
done
exit "$rc"
