# SPDX-License-Identifier: BSD-3-Clause
"""`python3 -m netlab ...` (with lab/ on the path): the same as scripts/netlab."""
import sys

from .cli import main

sys.exit(main())
