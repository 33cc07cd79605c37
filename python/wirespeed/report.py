# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed-report: tables and plots from the benchmarks' JSON lines.

    wirespeed-report coll results/coll.json --out coll.png --link-gbps 0.1
    wirespeed-report shuffle results/shuffle.json --out goodput.png
    wirespeed-report netmap map.json --out map.png
    wirespeed-report table results/coll.json --link-mbit 100

The subcommands are those of the repository's report package (python/wsp_report, which wsp-bench
--plot and the bench/ scripts run too), installed with this package as wirespeed._report;
`wirespeed-report SUBCOMMAND --help` lists a subcommand's options. The plots need matplotlib
(pip install 'wirespeed[plot]').
"""
from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import List, Optional


def _report() -> ModuleType:
    """The installed copy, else the source tree's python/wsp_report."""
    try:
        return importlib.import_module(f"{__package__}._report")
    except ImportError:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
        if here not in sys.path:
            sys.path.insert(0, here)
        return importlib.import_module("wsp_report")


def main(argv: Optional[List[str]] = None) -> int:
    """Runs one report subcommand; returns its exit status."""
    return _report().main(argv, prog="wirespeed-report")


if __name__ == "__main__":
    sys.exit(main())
