"""wirespeed-report: tables and plots from the benchmarks' JSON lines.

    wirespeed-report coll results/coll.json --out coll.png --link-gbps 0.1
    wirespeed-report shuffle results/shuffle.json --out goodput.png
    wirespeed-report netmap map.json --out map.png
    wirespeed-report table results/coll.json --link-mbit 100

Each subcommand is one of the repository's report scripts (python/wsp_*.py, which wsp-bench
--plot and the bench/ scripts run too), installed with the package; `wirespeed-report
SUBCOMMAND --help` lists its options. The plots need matplotlib (pip install
'wirespeed[plot]').
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import List, Optional

# name: (script module, arguments it is given first, what it shows)
COMMANDS = {
    "coll": ("wsp_plot", ["--bench", "coll"],
             "busbw against message size, per collective and algorithm (wsp-bench coll)"),
    "shuffle": ("wsp_plot", ["--bench", "shuffle"],
                "goodput over time, per strategy (wsp-bench shuffle)"),
    "p2p": ("wsp_plot", ["--bench", "p2p"],
            "one message's rate against its size: MPI, striped, iperf3 (wsp-bench p2p)"),
    "table": ("wsp_table", [],
              "tables: auto against wirespeed's algorithms and against the MPI "
              "(wsp-bench coll)"),
    "aware": ("wsp_aware_table", [],
              "trees built from a network map beside binomial and auto (bench/aware_*.sh)"),
    "netmap": ("wsp_netmap_plot", [],
               "heat maps of a network map's latency and bandwidth (wsp-probe)"),
}


def _scripts_dir() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    installed = os.path.join(here, "_report")
    if os.path.exists(os.path.join(installed, "wsp_plot.py")):
        return installed
    return os.path.dirname(here)  # a source tree: python/


def usage() -> str:
    lines = ["usage: wirespeed-report SUBCOMMAND FILE... [options]", "",
             "Tables and plots from the JSON that wirespeed's benchmarks and wsp-probe write.", "",
             "subcommands:"]
    lines += [f"  {name:<8} {what}" for name, (_, _, what) in COMMANDS.items()]
    lines += ["", "wirespeed-report SUBCOMMAND --help lists a subcommand's options."]
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    """Runs one report subcommand; returns its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name = argv[0]
    if name not in COMMANDS:
        print(f"wirespeed-report: unknown subcommand {name!r} (one of "
              f"{', '.join(COMMANDS)})", file=sys.stderr)
        return 2
    module, first, _ = COMMANDS[name]
    scripts = _scripts_dir()
    if scripts not in sys.path:
        sys.path.insert(0, scripts)  # the scripts import each other by name
    script = importlib.import_module(module)
    saved = sys.argv
    sys.argv = [f"wirespeed-report {name}"] + first + argv[1:]
    try:
        rc = script.main()
    finally:
        sys.argv = saved
    return rc or 0


if __name__ == "__main__":
    sys.exit(main())
