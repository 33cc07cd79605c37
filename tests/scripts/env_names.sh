#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The list of WSP_* names that wsp-info --check knows (src/comm/env_names.h,
# printed by wsp-info --env-names) must be exactly the variables of
# docs/env.md's tables, and must hold every "WSP_..." string of the sources
# (src/, tools/; the enum values WSP_ERR_* and WSP_ALG_*, the macros WSP__*
# and the per-collective names that config.c builds with snprintf aside).
#   env_names.sh WSP-INFO
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
info=$1
fail=0
list=$("$info" --env-names | cut -f1 | sort -u) || { echo "FAIL: $info --env-names"; exit 1; }
# A table row's first cell: every `WSP_...` name in it.
docs=$(grep -E '^\| `WSP_' "$root/docs/env.md" | cut -d'|' -f2 | grep -oE 'WSP_[A-Z0-9_]+' |
       sort -u)
if [ "$list" != "$docs" ]; then
  echo "FAIL: src/comm/env_names.h and docs/env.md name different variables:"
  diff <(echo "$list") <(echo "$docs") | sed -n 's/^</  only in env_names.h:/p; s/^>/  only in docs\/env.md:/p'
  fail=1
fi
srcs=$(grep -rhoE '"WSP_[A-Z0-9_]+' "$root/src" "$root/tools" --include='*.c' --include='*.in' |
       tr -d '"' | grep -vE '^WSP_(ERR|ALG)_|^WSP__' | sort -u)
for n in $srcs; do
  grep -qx "$n" <<<"$list" || { echo "FAIL: the sources read $n, which env_names.h lacks"; fail=1; }
done
[ $fail = 0 ] && echo "ok: $(wc -l <<<"$list") names, the same in env_names.h and docs/env.md"
exit $fail
