#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The shared library exports exactly the functions that wirespeed.h
# declares: the names after WSP_API in the header against the dynamic
# symbols the library defines (nm -D). Anything else, internal functions
# and tables included, must stay hidden; every declared function must be
# there.
#   exports.sh LIBRARY HEADER
set -euo pipefail
lib=$1 header=$2
declared=$(grep -E '^WSP_API ' "$header" | sed -E 's/^WSP_API [^(]*[ *](wsp_[a-z0-9_]+)\(.*/\1/' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^_' | sort -u)
nd=$(printf '%s\n' "$declared" | grep -c . || true)
ne=$(printf '%s\n' "$exported" | grep -c . || true)
if [ "$nd" -lt 40 ]; then
  echo "FAIL: only $nd declarations found in $header; the pattern no longer reads it"
  exit 1
fi
extra=$(comm -13 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
if [ -n "$extra" ]; then echo "FAIL: exported but not declared in wirespeed.h:"; echo "$extra"; fi
if [ -n "$missing" ]; then echo "FAIL: declared in wirespeed.h but not exported:"; echo "$missing"; fi
[ -z "$extra$missing" ] || exit 1
echo "ok: $ne exported symbols, the $nd functions wirespeed.h declares"
