#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a command and checks both its exit status and its output. ctest
# cannot do both at once: a PASS_REGULAR_EXPRESSION replaces the exit
# status check, so a run that printed the right line but failed would pass.
#   expect.sh STATUS REGEX COMMAND [ARGS...]
# STATUS is the exit status the command must end with; REGEX (grep -E) must
# match a line of its standard output or standard error. REGEX may hold
# several patterns joined by " && ": each must match a line; a pattern
# written "not:PAT" must match no line, and "all:PAT" every line (so that
# a test can say what must not be printed, e.g. after --help).
# grep reads the output from a here-string, not a pipe: under pipefail, a
# grep -q that stops at its first match makes the writer of a pipe die of
# SIGPIPE (bash writes a line at a time), and the check failed at random.
set -uo pipefail
want=$1 regex=$2
shift 2
out=$("$@" 2>&1)
got=$?
printf '%s\n' "$out"
if [ "$got" != "$want" ]; then
  echo "FAIL: exit status $got, expected $want: $*"
  exit 1
fi
rest=$regex
while :; do
  pat=${rest%% && *}
  case "$pat" in
    not:*)
      if grep -Eq -- "${pat#not:}" <<<"$out"; then
        echo "FAIL: a line of the output matches /${pat#not:}/, which none may: $*"
        exit 1
      fi ;;
    all:*)
      if grep -Evq -- "${pat#all:}" <<<"$out"; then
        echo "FAIL: a line of the output does not match /${pat#all:}/: $*"
        exit 1
      fi ;;
    *)
      if ! grep -Eq -- "$pat" <<<"$out"; then
        echo "FAIL: no line of the output matches /$pat/: $*"
        exit 1
      fi ;;
  esac
  [ "$pat" = "$rest" ] && break
  rest=${rest#* && }
done
echo "ok: exit status $got and a line matching /$regex/"
