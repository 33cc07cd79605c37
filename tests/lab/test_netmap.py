#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The network map's probe recovers netlab's hetero profile: on 8 hosts at B = 100 Mbit/s whose
pairs are shaped to 1, 0.5, 0.25 or 0.1 of B (seed 1), wsp-probe under Open MPI (one rank per
host) measures every pair's bandwidth within 15% of its shaped rate, and finds the eager limit
of Open MPI's TCP transport (btl_tcp_eager_limit, 65536 bytes by default, less a header).
Runtime ~20 s.

    test_netmap.py PATH/TO/wsp-probe
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labutil import cleanup, conclude, lab_name, machine_objects, netlab, require_lab  # noqa

HOSTS = 8
RATE_MBIT = 100
TOLERANCE = 0.15
EAGER = 65536


def main(probe):
    require_lab(("mpirun",))
    name = lab_name("nm")
    before = machine_objects()
    tmp = tempfile.mkdtemp(prefix="netlab-netmap-")
    errors = []
    try:
        netlab("up", "hetero", "--name", name, "--hosts", str(HOSTS), "--link-rate",
               "%dmbit" % RATE_MBIT, "--seed", "1")
        with open("/run/netlab/%s.json" % name) as f:
            matrix = json.load(f)["matrix"]
        out = os.path.join(tmp, "netmap.json")
        r = netlab("run", "--name", name, "--mpi", "openmpi", "--ppn", "1", "--time-limit", "300",
                   "--", probe, "--reps", "3", "--out", out, timeout=320)
        print(r.stdout)
        with open(out) as f:
            m = json.load(f)
        worst = 0.0
        for pair in m["pairs"]:
            a, b = pair["a"], pair["b"]
            want = RATE_MBIT * 1e6 / 8 * matrix[a][b]
            got = 1 / pair["inv_bandwidth_s_per_byte"]
            err = abs(got / want - 1)
            worst = max(worst, err)
            if err > TOLERANCE:
                errors.append("hosts %d and %d: %.1f Mbit/s, shaped to %.1f" %
                              (a, b, got * 8e-6, want * 8e-6))
        eager = m["eager_limit"]["inter_node"]
        if not EAGER - 256 <= eager <= EAGER:
            errors.append("eager limit between hosts %d, Open MPI's btl_tcp_eager_limit %d" %
                          (eager, EAGER))
        print("netmap: %d pairs, worst bandwidth error %.1f%%, eager %d bytes" %
              (len(m["pairs"]), 100 * worst, eager))
        netlab("down", "--name", name)
    finally:
        cleanup(name)
        shutil.rmtree(tmp, ignore_errors=True)
    return conclude(errors, before, name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
