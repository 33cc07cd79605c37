# SPDX-License-Identifier: BSD-3-Clause
"""`python3 python/wsp_report SUBCOMMAND ...` (the directory run as a program) and
`python3 -m wsp_report SUBCOMMAND ...`."""
import os
import sys

if not __package__:
    # Run as a directory: its parent goes on the path so that the package imports itself
    # (and, being a source tree, gets no __pycache__).
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from wsp_report import main
else:
    from . import main

sys.exit(main(prog="wsp_report" if not __package__ else "python3 -m wsp_report"))
