# SPDX-License-Identifier: BSD-3-Clause
"""The one reader of the JSON-lines files that wsp-bench and the bench/ scripts write.

Each line is one JSON object (a record); blank lines are skipped. A line that is not JSON ends
the program with the file and line named, since a table or plot from half a file would mislead;
skip_bad=True skips it instead, for the logs of runs whose ranks a test killed, where the last
line of a rank may be cut short.
"""
import json
import sys
from typing import Iterable, List, Optional


def load(paths: Iterable[str], bench: Optional[str] = None, prog: str = "wsp_report",
         skip_bad: bool = False) -> List[dict]:
    """The records of every file in `paths`, in order; only those whose "bench" field is
    `bench` when it is given (and then only objects)."""
    rows = []
    for path in paths:
        try:
            f = open(path)
        except OSError as e:
            sys.exit(f"{prog}: {e}")
        with f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    if skip_bad:
                        continue
                    sys.exit(f"{prog}: {path}:{n}: not JSON: {e}")
                if bench is None or (isinstance(r, dict) and r.get("bench") == bench):
                    rows.append(r)
    return rows
