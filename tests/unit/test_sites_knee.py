#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of bench/sites_knee.py (the knee table of bench/sites_simgrid.sh); no MPI needed.

The expected values are worked out by hand here: the source's formula L + M/min(n.B, W) + 2M/B
for round numbers, the knee of a made-up sweep, and the rows a label list selects.

    python3 tests/unit/test_sites_knee.py [-v]        (ctest: unit.sites_knee)
"""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import sites_knee  # noqa: E402

STAMP = "20261126120000"
M = 1 << 20


def row(label, coll, alg, time_s, pred=None, n=4):
    return {"bench": "coll", "label": f"{label}-{STAMP}", "coll": coll, "bytes": M, "alg": alg,
            "ran": alg, "time_s": time_s, "predicted_s": pred, "wan_connections": n}


class TestKnee(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "s.json")

    def tearDown(self):
        self.tmp.cleanup()

    def run_tool(self, rows, labels, *extra):
        with open(self.path, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        out, err = io.StringIO(), io.StringIO()
        argv = [self.path, "--labels", ",".join(f"{l}-{STAMP}" for l in labels),
                "--nic-bw", "8Mbps", "--wan-bw", "32Mbps", "--wan-lat", "10ms", *extra]
        code = 0
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = sites_knee.main(argv)
            except SystemExit as e:
                code = e.code
        return code, out.getvalue(), err.getvalue()

    def test_formula(self):
        # B = 1 MB/s, W = 4 MB/s, M = 1 MB, L = 0.01 s: n = 1 gives 0.01 + 1 + 2,
        # n = 2 gives 0.01 + 0.5 + 2, and from n = 4 on the WAN caps it at 0.01 + 0.25 + 2.
        B, W, L, Mb = 1e6, 4e6, 0.01, 1e6
        self.assertAlmostEqual(sites_knee.formula(Mb, 1, B, W, L), 3.01)
        self.assertAlmostEqual(sites_knee.formula(Mb, 2, B, W, L), 2.51)
        self.assertAlmostEqual(sites_knee.formula(Mb, 4, B, W, L), 2.26)
        self.assertAlmostEqual(sites_knee.formula(Mb, 16, B, W, L), 2.26)

    def test_units(self):
        self.assertEqual(sites_knee.rate("1Gbps"), 125e6)
        self.assertEqual(sites_knee.rate("8Mbps"), 1e6)
        self.assertAlmostEqual(sites_knee.seconds("10ms"), 0.01)
        self.assertAlmostEqual(sites_knee.seconds("50us"), 50e-6)

    def test_knee_and_rows(self):
        # 8 Mbit/s = 1 MB/s; M = 1 MiB. Times fall until n = 3 and then stay within 5%
        # of the best (n = 5): the knee is 3.
        times = {1: 4.0, 2: 3.0, 3: 2.60, 4: 2.55, 5: 2.50, 6: 2.52}
        rows = [row(f"x-n{n}", "bcast", "sites", t, pred=t / 2) for n, t in times.items()]
        rows.append(row("x-model", "bcast", "sites", 2.5))
        rows.append(row("x-model", "bcast", "far_first", 5.0))
        rows.append(row("other", "bcast", "sites", 99.0))  # a label not asked for
        code, out, _ = self.run_tool(rows, [f"x-n{n}" for n in times] + ["x-model"])
        self.assertEqual(code, 0)
        self.assertIn("sites: knee at n = 3", out)
        lines = [l.split() for l in out.splitlines()]
        n3 = next(l for l in lines if l[:2] == ["3", "2600.0"])
        # formula: 0.01 + M/min(3 MB/s, 4 MB/s) + 2M/(1 MB/s), M = 1 MiB.
        f = 0.01 + M / 3e6 + 2 * M / 1e6
        self.assertAlmostEqual(float(n3[2]), round(f * 1e3, 1), places=1)
        self.assertEqual(n3[5], "2.00")  # the time over the prediction
        far = next(l for l in lines if "far_first" in l)
        self.assertEqual(far[0], "model")
        self.assertEqual(far[-1], "2.00")  # far-first's time over sites'
        self.assertNotIn("99000.0", out)

    def test_no_rows(self):
        code, _, _ = self.run_tool([row("x-n1", "bcast", "sites", 1.0)], ["y"])
        self.assertIn("no rows", str(code))

    def test_bad_rate(self):
        with redirect_stderr(io.StringIO()) as err, self.assertRaises(SystemExit) as e:
            sites_knee.main([self.path, "--labels", "a", "--nic-bw", "fast", "--wan-bw",
                             "1Gbps", "--wan-lat", "1ms"])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("'fast' is not a rate", err.getvalue())


if __name__ == "__main__":
    unittest.main()
