#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The multi-site collectives carry each byte across the WAN once per direction: on netlab's
twosite profile (2 hosts per site, NIC and WAN at 100 Mbit/s, no per-flow cap), wsp-bench runs
bcast (root on site A) and allreduce with each multi-site algorithm under Open MPI, once with 1
timed call and once with 5 (two connections between the sites), and the WAN's shaped-device counters (netlab run --json-counters,
devices wan-a-to-b and wan-b-to-a) of the second run less the first must be what the four
extra calls have to move, within TCP/IP and MPI framing:
    bcast (sites, far_first)        A->B: 4 M, B->A: acknowledgements only (< 5% of 4 M)
    allreduce (sites, two_tier)     A->B and B->A: 4 M each
with M = 4 MiB. Everything else the runs do (start-up, calibration, the checked call) is the
same in both and cancels. On this 2 + 2 layout a flat fallback moves the same bytes across the
WAN, so each run also reads the library's trace log (WSP_LOG=trace: one line per collective call
naming the algorithm it runs) and requires every rank to have run the requested algorithm on each
of its calls: the checked call and the timed ones. Runtime ~60 s.

    test_sites.py PATH/TO/wsp-bench
"""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labutil import cleanup, conclude, lab_name, machine_objects, netlab, require_lab  # noqa

HOSTS = 4
M = 4 << 20
EXTRA = 4           # calls in the long run beyond the short one
LOW, HIGH = 0.98, 1.12   # framing adds a few percent; a second crossing would double it
CASES = [("bcast", "sites", (1, 0)), ("bcast", "far_first", (1, 0)),
         ("allreduce", "sites", (1, 1)), ("allreduce", "two_tier", (1, 1))]


def wan_bytes(path):
    with open(path) as f:
        devs = json.load(f)["devices"]
    out = {}
    for d in devs:
        if d["role"] in ("wan-a-to-b", "wan-b-to-a"):
            out[d["role"]] = d["shaped"]
    return out["wan-a-to-b"], out["wan-b-to-a"]


def calls_run(stderr, coll, alg):
    """How many calls of `coll` each rank ran with `alg`, by the library's trace lines
    "[wsp trace rank R] <coll>: <alg>, ...". The algorithms inside a site run on the site's
    communicator and log their own names, never a multi-site one."""
    n = {}
    for m in re.finditer(r"^\[wsp trace rank (\d+)\] (\w+): (\w+), ", stderr, re.M):
        if m.group(2) == coll and m.group(3) == alg:
            r = int(m.group(1))
            n[r] = n.get(r, 0) + 1
    return n


def main(bench):
    require_lab(("mpirun",))
    name = lab_name("st")
    before = machine_objects()
    tmp = tempfile.mkdtemp(prefix="netlab-sites-")
    errors = []
    try:
        netlab("up", "twosite", "--name", name, "--hosts", str(HOSTS), "--link-rate", "100mbit",
               "--wan-rate", "100mbit", "--flow-cap", "100mbit")
        for coll, alg, want in CASES:
            got = []
            for iters in (1, 1 + EXTRA):
                counters = os.path.join(tmp, "%s-%s-%d.json" % (coll, alg, iters))
                p = netlab("run", "--name", name, "--mpi", "openmpi", "--ppn", "1",
                           "--time-limit", "200", "--json-counters", counters,
                           "--mpi-arg=-x", "--mpi-arg=WSP_SITES=ranks:0-1;2-3",
                           "--mpi-arg=-x", "--mpi-arg=WSP_WAN_CONNECTIONS=2",
                           "--mpi-arg=-x", "--mpi-arg=WSP_LOG=trace", "--",
                           bench, "coll", "--colls", coll, "--algs", alg, "--sizes", str(M),
                           "--iters", str(iters), "--reps", "1", "--warmup", "0", "--quiet",
                           timeout=220)
                got.append(wan_bytes(counters))
                # The checked call before timing and the timed ones (no warmup).
                ran = calls_run(p.stderr, coll, alg)
                if ran != {r: 1 + iters for r in range(HOSTS)}:
                    errors.append("%s/%s with %d timed call(s): calls that ran %s, by rank: %s "
                                  "(expected %d on each of %d ranks)" %
                                  (coll, alg, iters, alg, ran, 1 + iters, HOSTS))
            ab = got[1][0] - got[0][0]
            ba = got[1][1] - got[0][1]
            exp = EXTRA * M
            print("%s/%s: A->B %d bytes (%.3f of %d), B->A %d bytes (%.3f)" %
                  (coll, alg, ab, ab / exp, exp, ba, ba / exp), flush=True)
            for direction, moved, w in (("A->B", ab, want[0]), ("B->A", ba, want[1])):
                if w and not LOW * exp <= moved <= HIGH * exp:
                    errors.append("%s/%s %s: %d bytes, expected %d (x %.2f..%.2f)" %
                                  (coll, alg, direction, moved, exp, LOW, HIGH))
                if not w and moved > 0.05 * exp:
                    errors.append("%s/%s %s: %d bytes, expected only acknowledgements" %
                                  (coll, alg, direction, moved))
        netlab("down", "--name", name)
    finally:
        cleanup(name)
        shutil.rmtree(tmp, ignore_errors=True)
    return conclude(errors, before, name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
