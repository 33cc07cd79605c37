# SPDX-License-Identifier: BSD-3-Clause
"""Tables and plots from the JSON that wirespeed's benchmarks and wsp-probe write.

One package, run three ways with the same subcommands:

    python3 python/wsp_report SUBCOMMAND FILE... [options]     (a source tree; bench/ scripts)
    wirespeed-report SUBCOMMAND FILE... [options]              (the Python package's command)
    wsp-bench ... --plot PNG, wsp-probe ... --plot PNG          (the installed copy)

Every module reads its input through jsonl.load (the one JSON-lines reader) or, for a network
map, json. The plots need matplotlib; the tables do not.
"""
import importlib
import os
import sys
from typing import List, Optional

# name: (module, arguments it is given first, what it shows)
COMMANDS = {
    "coll": ("plot", ["--bench", "coll"],
             "busbw against message size, per collective and algorithm (wsp-bench coll)"),
    "shuffle": ("plot", ["--bench", "shuffle"],
                "goodput over time, per strategy (wsp-bench shuffle)"),
    "p2p": ("plot", ["--bench", "p2p"],
            "one message's rate against its size: MPI, striped, iperf3 (wsp-bench p2p)"),
    "plot": ("plot", [], "whichever of coll, shuffle and p2p the input holds (wsp-bench --plot)"),
    "table": ("table", [],
              "tables: auto against wirespeed's algorithms and against the MPI "
              "(wsp-bench coll)"),
    "tuned": ("tuned", [],
              "wirespeed beside the MPI at its defaults and each hand tuning, one job each "
              "(bench/cloud_netlab.sh)"),
    "aware": ("aware_table", [],
              "trees built from a network map beside binomial and auto (bench/aware_*.sh)"),
    "netmap": ("netmap_plot", [],
               "heat maps of a network map's latency and bandwidth (wsp-probe)"),
}


def usage(prog: str) -> str:
    lines = [f"usage: {prog} SUBCOMMAND FILE... [options]", "",
             "Tables and plots from the JSON that wirespeed's benchmarks and wsp-probe write.", "",
             "subcommands:"]
    lines += [f"  {name:<8} {what}" for name, (_, _, what) in COMMANDS.items()]
    lines += ["", f"{prog} SUBCOMMAND --help lists a subcommand's options (a value follows its",
              "option or '=': --out=x.png); --version prints the version."]
    return "\n".join(lines)


def _version() -> str:
    """netlab's reading of the version (the installed package's copy, else the source tree's)."""
    try:
        from wirespeed._netlab import version  # type: ignore[import-not-found]
    except ImportError:
        here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        sys.path.insert(0, os.path.join(here, "lab"))
        from netlab import version  # type: ignore[import-not-found,no-redef]
    return version()


def main(argv: Optional[List[str]] = None, prog: str = "wirespeed-report") -> int:
    """Runs one subcommand; returns its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--version" in argv:  # anywhere, as in every tool (docs/tools.md)
        print(f"{prog} (wirespeed) {_version()}")
        return 0
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(prog), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name = argv[0]
    if name not in COMMANDS:
        print(f"{prog}: unknown subcommand {name!r} (one of {', '.join(COMMANDS)})",
              file=sys.stderr)
        return 2
    module, first, _ = COMMANDS[name]
    mod = importlib.import_module(f"{__name__}.{module}")
    saved = sys.argv[0]
    sys.argv[0] = f"{prog} {name}"  # argparse's prog, in usage and errors
    try:
        return mod.main(first + argv[1:]) or 0
    finally:
        sys.argv[0] = saved
