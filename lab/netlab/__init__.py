# SPDX-License-Identifier: BSD-3-Clause
"""netlab: an emulated cluster made of Linux network namespaces with shaped links.

Hosts are network namespaces; switches are Linux bridges living in their own namespaces;
every host NIC is a veth pair shaped with tc (tbf / htb + u32 or bpf) in both directions.
MPI programs are started with each namespace acting as one host (see `netlab run`).

Only the Python 3 standard library and iproute2 (ip, tc) are used.  See docs/netlab.md.
The command is scripts/netlab (or `python3 -m netlab` with lab/ on the path).

Modules, one concern each:
  base     errors and exit codes, running ip/tc/commands, ending processes
  params   what a lab is asked to be: profile defaults, rates, spec file, TCP congestion control
  state    what a lab owns: names and prefix, address plan, state file, allocation
  build    making and removing a lab: namespaces, veth, bridges, tc shaping per profile
  run      starting MPI jobs on the lab hosts (hostfile, ssh stand-in, MPI settings, counters)
  traffic  raw TCP measurements: iperf3 and netlab's own flow helper (`calibrate`)
  cli      the command line

Safety rules implemented here:
  * every namespace / interface carries the lab prefix "<name>-" (<= 15 chars for interfaces);
  * a state file /run/netlab/<name>.json is written BEFORE each object is created, so that
    `netlab down` removes exactly what exists, also after a crash;
  * addresses come only from 10.231.0.0/16, one /24 per lab instance (10.231.<index>.0/24);
  * hosts have no default route, the root namespace gets one address on the lab bridge and
    (for twosite) one route to the other site, and never forwards (its ip_forward is untouched);
  * traffic is only ever sent to addresses of the lab's own namespaces.
"""

import os as _os
import re as _re


def version():
    """wirespeed's version: from include/wirespeed.h when this package is the source tree's
    (lab/netlab), else that of the installed wirespeed package it was copied into, else
    "unknown" (a copy of netlab alone: --version must not stop the lab's commands)."""
    header = _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))), "include", "wirespeed.h")
    try:
        with open(header) as f:
            v = dict(_re.findall(r"^#define WSP_VERSION_(MAJOR|MINOR|PATCH) ([0-9]+)$", f.read(),
                                 _re.M))
        return "%s.%s.%s" % (v["MAJOR"], v["MINOR"], v["PATCH"])
    except (OSError, KeyError):
        from importlib.metadata import PackageNotFoundError, version as dist_version
        try:
            return dist_version("wirespeed")
        except PackageNotFoundError:
            return "unknown"
