# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed-lab: netlab, the emulated cluster of network namespaces with shaped links.

The same commands as the repository's scripts/netlab (up, run, fault, calibrate, down, ...;
`wirespeed-lab --help`), from the copy of the netlab package installed with this package.
Building a lab needs root; docs/netlab.md is the reference.
"""
from __future__ import annotations

import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    """Runs one netlab command; returns its exit status."""
    try:
        from ._netlab.cli import main as netlab_main
    except ImportError:  # a source tree: the repository's lab/ beside python/
        import os
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "lab"))
        from netlab.cli import main as netlab_main  # type: ignore[no-redef]
    return netlab_main(argv, prog="wirespeed-lab")


if __name__ == "__main__":
    sys.exit(main())
