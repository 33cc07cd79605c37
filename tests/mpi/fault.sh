#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs an MPI job in which one rank dies or stops (test_fault), and checks
# what its survivors report and that nothing of the job is left running.
#   fault.sh SURVIVORS LAUNCHER [ARGS...]
# The job runs in a session of its own (setsid), with a hard limit of
# FAULT_LIMIT seconds (default 120). It passes when SURVIVORS lines
# "VERDICT rank R ok" were printed and none "FAILED". Afterwards every
# process still in the job's session (a stopped rank the launcher did not
# take down, say) is killed, and the test fails if there was any 10 s after
# the launcher ended: only processes of that session are touched.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: fault.sh SURVIVORS LAUNCHER [ARGS...]" >&2
  exit 2
fi
want=$1
shift
limit=${FAULT_LIMIT:-120}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
setsid "$@" >"$out" 2>&1 &
job=$!
# setsid forks when the caller leads a process group; the session is
# named by the process that leads it, found through the job's pid.
sleep 0.2
sid=$(ps -o sid= -p "$job" 2>/dev/null | tr -d ' ')
start=$SECONDS
while kill -0 "$job" 2>/dev/null && [ $((SECONDS - start)) -lt "$limit" ]; do sleep 0.5; done
timed_out=0
if kill -0 "$job" 2>/dev/null; then
  timed_out=1
fi
left=""
if [ -n "$sid" ] && [ "$sid" != "0" ]; then
  # The launcher may exit while the ranks it killed are still going away.
  for _ in $(seq 20); do
    left=$(pgrep -s "$sid" 2>/dev/null | tr '\n' ' ')
    [ -n "$left" ] && [ "$timed_out" = 0 ] || break
    sleep 0.5
  done
  [ -z "$left" ] || kill -CONT $left 2>/dev/null
  [ -z "$left" ] || kill -KILL $left 2>/dev/null
fi
wait "$job" 2>/dev/null
cat "$out"
ok=$(grep -c '^VERDICT rank [0-9]* ok$' "$out")
bad=$(grep -c '^VERDICT rank [0-9]* FAILED$' "$out")
fail=0
if [ "$timed_out" = 1 ]; then
  echo "FAIL: the job was still running after ${limit} s"
  fail=1
fi
if [ -n "$left" ]; then
  echo "FAIL: processes of the job were left running: $left"
  fail=1
fi
if [ "$ok" != "$want" ] || [ "$bad" != 0 ]; then
  echo "FAIL: $ok survivors reported in time and $bad did not; expected $want"
  fail=1
fi
[ "$fail" = 0 ] && echo "ok: $ok survivors returned an error in time; nothing left running"
exit "$fail"
