#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A wsp-bench run's JSON lines, read back as their consumers read them: every
# record has the fields all subcommands share, and (for coll) the report
# package python/wsp_report turns them into its table.
#   json_lines.sh PYTHON SOURCE_DIR JSON_FILE SUBCOMMAND COMMAND [ARGS...]
# COMMAND must write its JSON lines to JSON_FILE (removed first).
set -euo pipefail
py=$1 src=$2 json=$3 sub=$4
shift 4
rm -f "$json"
"$@"
"$py" - "$json" "$sub" <<'PY'
import json, sys
path, sub = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(path) if l.strip()]
if not rows:
    sys.exit(f"FAIL: {path} holds no JSON lines")
for n, r in enumerate(rows, 1):
    missing = [k for k in ("bench", "label", "mpi", "p", "wirespeed") if k not in r]
    if missing or r["bench"] != sub:
        sys.exit(f"FAIL: line {n}: missing {missing} or bench {r.get('bench')!r} != {sub!r}")
print(f"ok: {len(rows)} {sub} records with the common fields")
PY
if [ "$sub" = coll ]; then
  table=$("$py" "$src/python/wsp_report" table "$json")
  printf '%s\n' "$table"
  # A here-string, not a pipe: under pipefail a grep -q that stops early
  # kills the pipe's writer (expect.sh says more).
  grep -Eq '^\| 4K \| [0-9]' <<<"$table" ||
    { echo "FAIL: python/wsp_report table made no 4K row"; exit 1; }
fi
