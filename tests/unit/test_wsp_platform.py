#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of the SimGrid platform generator (lab/simgrid/wsp_platform.py); no SimGrid needed.

The expected values are written out here: the XML of the cluster and twosite profiles as the
generator wrote it before the racks profile existed (they must not change: results were
measured on them; twosite's sites gained FATPIPE backbones on 2026-12-01, on purpose), host and link counts, uplink rates worked out by hand (H x bw / factor),
route latencies summed by hand, and the latencies a seed gives (the generator uses only
random.random(), whose sequence Python keeps across versions).

    python3 tests/unit/test_wsp_platform.py [-v]        (ctest: unit.wsp_platform)
"""
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr, redirect_stdout

sys.dont_write_bytecode = True      # no __pycache__ in the source tree
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "lab", "simgrid", "wsp_platform.py")
sys.path.insert(0, os.path.dirname(SCRIPT))

import wsp_platform  # noqa: E402

HEAD = ("<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n')


class Gen(unittest.TestCase):
    """Runs the generator in-process into a private directory."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wsp-platform-unit-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def gen(self, *args, describe=True):
        """(XML text, hostfile lines, describe dict or None) of one run."""
        xml, hosts, desc = (os.path.join(self.tmp, n) for n in ("p.xml", "h.txt", "d.json"))
        argv = list(args) + ["-o", xml, "--hostfile", hosts]
        if describe:
            argv += ["--describe", desc]
        self.assertEqual(wsp_platform.main(argv), 0)
        with open(xml) as f:
            text = f.read()
        with open(hosts) as f:
            names = f.read().splitlines()
        d = None
        if describe:
            with open(desc) as f:
                d = json.load(f)
        return text, names, d

    def refused(self, *args):
        """The error message of a run that must exit 2 having written nothing."""
        xml = os.path.join(self.tmp, "refused.xml")
        if os.path.exists(xml):
            os.remove(xml)
        err = io.StringIO()
        with redirect_stderr(err), self.assertRaises(SystemExit) as cm:
            wsp_platform.main(list(args) + ["-o", xml])
        self.assertEqual(cm.exception.code, 2, err.getvalue())
        self.assertFalse(os.path.exists(xml), "a refused run wrote the platform")
        return err.getvalue()


def tree(text):
    return ET.fromstring(text.encode())


def links(root):
    """{link id: (bandwidth attribute, latency attribute)} of every <link>."""
    return {e.get("id"): (e.get("bandwidth"), e.get("latency")) for e in root.iter("link")}


def zone_routes(root):
    """{(src, dst): [link ids]} of every <zoneRoute>."""
    return {(e.get("src"), e.get("dst")): [c.get("id") for c in e.iter("link_ctn")]
            for e in root.iter("zoneRoute")}


def us(attr):
    """'12.345us' -> seconds."""
    assert attr.endswith("us"), attr
    return float(attr[:-2]) * 1e-6


class TestUnchangedProfiles(Gen):
    """cluster and twosite without the new options: the XML written before racks existed,
    but for twosite's non-blocking backbones (FATPIPE since 2026-12-01)."""

    def test_cluster(self):
        text, names, _ = self.gen("cluster", "--hosts", "4", "--bw", "100Mbps", "--lat", "20us",
                                  describe=False)
        self.assertEqual(text, HEAD +
                         '  <cluster id="c0" prefix="h" suffix="" radical="0-3" speed="1Gf" '
                         'bw="12500000Bps" lat="20.000us" bb_bw="50000000Bps" bb_lat="0us" '
                         'router_id="c0-router"/>\n</platform>\n')
        self.assertEqual(names, ["h0", "h1", "h2", "h3"])

    def test_cluster_defaults(self):
        text, names, _ = self.gen("cluster", describe=False)
        self.assertEqual(text, HEAD +
                         '  <cluster id="c0" prefix="h" suffix="" radical="0-63" speed="1Gf" '
                         'bw="125000000Bps" lat="50.000us" bb_bw="8000000000Bps" bb_lat="0us" '
                         'router_id="c0-router"/>\n</platform>\n')
        self.assertEqual(len(names), 64)

    def test_twosite(self):
        text, names, _ = self.gen("twosite", "--hosts", "5", "--wan-bw", "10Gbps",
                                  "--wan-lat", "2ms", describe=False)
        self.assertEqual(text, HEAD +
                         '  <zone id="world" routing="Full">\n'
                         '    <cluster id="c0" prefix="h" suffix="" radical="0-1" speed="1Gf" '
                         'bw="125000000Bps" lat="50.000us" bb_bw="250000000Bps" bb_lat="0us" '
                         'bb_sharing_policy="FATPIPE" router_id="c0-router"/>\n'
                         '    <cluster id="c1" prefix="h" suffix="" radical="2-4" speed="1Gf" '
                         'bw="125000000Bps" lat="50.000us" bb_bw="375000000Bps" bb_lat="0us" '
                         'bb_sharing_policy="FATPIPE" router_id="c1-router"/>\n'
                         '    <link id="wan" bandwidth="1250000000Bps" latency="2000.000us"/>\n'
                         '    <zoneRoute src="c0" dst="c1" gw_src="c0-router" gw_dst="c1-router">'
                         '<link_ctn id="wan"/></zoneRoute>\n'
                         '  </zone>\n</platform>\n')
        self.assertEqual(names, ["h0", "h1", "h2", "h3", "h4"])

    def test_seed_and_describe_change_nothing(self):
        plain, _, _ = self.gen("twosite", "--hosts", "6", describe=False)
        seeded, _, d = self.gen("twosite", "--hosts", "6", "--seed", "9", "--lat-spread", "1")
        self.assertEqual(plain, seeded)
        self.assertEqual([h["lat_s"] for h in d["hosts"]], [50e-6] * 6)
        self.assertEqual([h["rack"] for h in d["hosts"]], ["c0"] * 3 + ["c1"] * 3)
        self.assertEqual(d["wan"], {"bw_Bps": 125000000, "lat_s": 5e-3, "duplex": "shared"})

    def test_twosite_split_duplex(self):
        """--wan-duplex split: one link per direction, each route through its own."""
        text, _, d = self.gen("twosite", "--hosts", "4", "--wan-bw", "10Gbps",
                              "--wan-duplex", "split")
        root = ET.fromstring(text.split("\n", 2)[2])
        wan = root.find("zone/link")
        self.assertEqual(wan.get("sharing_policy"), "SPLITDUPLEX")
        self.assertEqual(wan.get("bandwidth"), "1250000000Bps")
        routes = {(r.get("src"), r.get("dst")): r for r in root.iter("zoneRoute")}
        self.assertEqual(set(routes), {("c0", "c1"), ("c1", "c0")})
        for (src, dst), way in ((("c0", "c1"), "UP"), (("c1", "c0"), "DOWN")):
            r = routes[(src, dst)]
            self.assertEqual(r.get("symmetrical"), "NO")
            self.assertEqual([(c.get("id"), c.get("direction")) for c in r], [("wan", way)])
        self.assertEqual(d["wan"]["duplex"], "split")

    def test_cluster_still_ignores_wan_options(self):
        a, _, _ = self.gen("cluster", "--hosts", "3", describe=False)
        b, _, _ = self.gen("cluster", "--hosts", "3", "--wan-bw", "5Gbps", describe=False)
        self.assertEqual(a, b)


class TestRacks(Gen):
    def test_structure(self):
        text, names, d = self.gen("racks", "--racks", "3", "--hosts-per-rack", "4",
                                  "--bw", "1Gbps", "--lat", "10us", "--uplink-lat", "200us")
        root = tree(text)
        self.assertEqual(root.tag, "platform")
        hosts = [e.get("id") for e in root.iter("host")]
        self.assertEqual(hosts, [f"h{i}" for i in range(12)])
        self.assertEqual(names, hosts)
        lk = links(root)
        # a NIC's up and down link per host, an uplink's up and down link per rack
        self.assertEqual(len(lk), 2 * 12 + 2 * 3)
        for i in range(12):
            self.assertEqual(lk[f"h{i}-up"], ("125000000Bps", "10.000us"))
            self.assertEqual(lk[f"h{i}-down"], ("125000000Bps", "10.000us"))
        # default oversubscription 4: 4 hosts x 1 Gbit/s / 4 = 1 Gbit/s = 125000000 B/s
        for r in range(3):
            self.assertEqual(lk[f"rack{r}-up"], ("125000000Bps", "200.000us"))
            self.assertEqual(lk[f"rack{r}-down"], ("125000000Bps", "200.000us"))
        racks = [z for z in root.iter("zone") if z.get("routing") == "Cluster"]
        self.assertEqual([z.get("id") for z in racks], ["rack0", "rack1", "rack2"])
        self.assertEqual([[h.get("id") for h in z.iter("host")] for z in racks],
                         [["h0", "h1", "h2", "h3"], ["h4", "h5", "h6", "h7"],
                          ["h8", "h9", "h10", "h11"]])
        # each host's NIC is its own up and down link
        h5 = [e for e in root.iter("host_link") if e.get("id") == "h5"]
        self.assertEqual([(e.get("up"), e.get("down")) for e in h5], [("h5-up", "h5-down")])
        self.assertEqual(len(list(root.iter("host_link"))), 12)

    def test_routes_between_racks_cross_both_uplinks(self):
        text, _, _ = self.gen("racks", "--racks", "3", "--hosts-per-rack", "2")
        root = tree(text)
        routes = zone_routes(root)
        self.assertEqual(routes, {
            ("rack0", "rack1"): ["rack0-up", "rack1-down"],
            ("rack0", "rack2"): ["rack0-up", "rack2-down"],
            ("rack1", "rack0"): ["rack1-up", "rack0-down"],
            ("rack1", "rack2"): ["rack1-up", "rack2-down"],
            ("rack2", "rack0"): ["rack2-up", "rack0-down"],
            ("rack2", "rack1"): ["rack2-up", "rack1-down"]})
        for e in root.iter("zoneRoute"):
            # written both ways: SimGrid must not reverse a route onto the wrong direction
            self.assertEqual(e.get("symmetrical"), "NO")
            self.assertEqual(e.get("gw_src"), e.get("src") + "-router")
            self.assertEqual(e.get("gw_dst"), e.get("dst") + "-router")

    def test_uplink_rate(self):
        # 8 hosts x 100 Mbit/s / 2.5 = 320 Mbit/s = 40000000 B/s
        text, _, d = self.gen("racks", "--racks", "2", "--hosts-per-rack", "8",
                              "--bw", "100Mbps", "--oversubscription", "2.5")
        self.assertEqual(links(tree(text))["rack1-down"], ("40000000Bps", "100.000us"))
        self.assertEqual(d["racks"][1]["uplink_bw_Bps"], 40000000)
        self.assertEqual(d["racks"][1]["uplink_lat_s"], 100e-6)
        text, _, _ = self.gen("racks", "--racks", "2", "--hosts-per-rack", "8",
                              "--uplink-bw", "2Gbps")
        self.assertEqual(links(tree(text))["rack0-up"], ("250000000Bps", "100.000us"))

    def test_defaults(self):
        text, names, d = self.gen("racks")
        self.assertEqual(len(names), 64)
        self.assertEqual([r["id"] for r in d["racks"]], ["rack0", "rack1", "rack2", "rack3"])
        self.assertEqual(d["racks"][2]["hosts"], [f"h{i}" for i in range(32, 48)])
        # 16 x 1 Gbit/s / 4 = 4 Gbit/s = 500000000 B/s, 100 us
        self.assertEqual(links(tree(text))["rack3-up"], ("500000000Bps", "100.000us"))

    def test_one_rack(self):
        text, names, _ = self.gen("racks", "--racks", "1", "--hosts-per-rack", "3")
        self.assertEqual(names, ["h0", "h1", "h2"])
        self.assertEqual(zone_routes(tree(text)), {})

    def test_path(self):
        _, _, d = self.gen("racks", "--racks", "2", "--hosts-per-rack", "2", "--lat", "50us",
                           "--uplink-lat", "100us", "--uplink-bw", "500Mbps")
        lat, bw = wsp_platform.path(d, "h0", "h1")
        self.assertAlmostEqual(lat, 100e-6, delta=1e-12)      # 50 + 50
        self.assertEqual(bw, 125000000)
        lat, bw = wsp_platform.path(d, "h1", "h2")
        self.assertAlmostEqual(lat, 300e-6, delta=1e-12)      # 50 + 100 + 100 + 50
        self.assertEqual(bw, 62500000)                        # the 500 Mbit/s uplinks
        with self.assertRaisesRegex(ValueError, "dst: no host 'h9'"):
            wsp_platform.path(d, "h0", "h9")


class TestHeterogeneity(Gen):
    ARGS = ("racks", "--racks", "2", "--hosts-per-rack", "3", "--lat-spread", "3",
            "--slow-hosts", "1", "--slow-bw", "100Mbps", "--seed", "7")

    def test_seed_values(self):
        # log-uniform in [50 us, 150 us], whole nanoseconds, from seed 7; h0 is the slow one
        text, _, d = self.gen(*self.ARGS)
        self.assertEqual([(h["name"], h["lat_s"], h["bw_Bps"], h["slow"]) for h in d["hosts"]], [
            ("h0", 71.364e-6, 12500000, True), ("h1", 59.012e-6, 125000000, False),
            ("h2", 102.222e-6, 125000000, False), ("h3", 54.142e-6, 125000000, False),
            ("h4", 90.085e-6, 125000000, False), ("h5", 74.722e-6, 125000000, False)])
        lk = links(tree(text))
        self.assertEqual(lk["h0-down"], ("12500000Bps", "71.364us"))
        self.assertEqual(lk["h2-up"], ("125000000Bps", "102.222us"))

    def test_deterministic(self):
        a = self.gen(*self.ARGS)
        b = self.gen(*self.ARGS)
        self.assertEqual(a, b)
        other = list(self.ARGS)
        other[-1] = "8"
        c = self.gen(*other)
        self.assertNotEqual(a[0], c[0])
        self.assertNotEqual([h["lat_s"] for h in a[2]["hosts"]],
                            [h["lat_s"] for h in c[2]["hosts"]])

    def test_spread_bounds(self):
        for seed in ("1", "2", "3"):
            text, _, d = self.gen("racks", "--racks", "4", "--hosts-per-rack", "32",
                                  "--lat", "20us", "--lat-spread", "5", "--seed", seed)
            lats = [h["lat_s"] for h in d["hosts"]]
            self.assertEqual(len(lats), 128)
            self.assertTrue(all(20e-6 <= x <= 100e-6 for x in lats), (seed, min(lats), max(lats)))
            # 128 draws spread over the range, not piled at one end
            self.assertLess(min(lats), 25e-6)
            self.assertGreater(max(lats), 80e-6)
            self.assertGreater(len(set(lats)), 100)
            # what the XML says is what --describe says, host by host
            lk = links(tree(text))
            for h in d["hosts"]:
                for side in ("up", "down"):
                    bw, lat = lk[f"{h['name']}-{side}"]
                    self.assertEqual(bw, f"{h['bw_Bps']}Bps")
                    self.assertAlmostEqual(us(lat), h["lat_s"], delta=1e-15)
            # uplinks keep their one latency
            self.assertEqual(lk["rack2-up"][1], "100.000us")

    def test_slow_hosts(self):
        sets = []
        for seed in ("1", "2", "3", "4"):
            _, _, d = self.gen("racks", "--racks", "4", "--hosts-per-rack", "8",
                               "--slow-hosts", "3", "--slow-bw", "10Mbps", "--seed", seed)
            slow = sorted(h["name"] for h in d["hosts"] if h["slow"])
            self.assertEqual(len(slow), 3)
            self.assertEqual(sorted(h["name"] for h in d["hosts"] if h["bw_Bps"] == 1250000), slow)
            self.assertEqual(sum(h["bw_Bps"] == 125000000 for h in d["hosts"]), 29)
            sets.append(slow)
        self.assertGreater(len({tuple(s) for s in sets}), 1, sets)

    def test_slow_hosts_do_not_move_latencies(self):
        _, _, a = self.gen("racks", "--racks", "2", "--hosts-per-rack", "4", "--lat-spread", "2")
        _, _, b = self.gen("racks", "--racks", "2", "--hosts-per-rack", "4", "--lat-spread", "2",
                           "--slow-hosts", "2", "--slow-bw", "1Mbps")
        self.assertEqual([h["lat_s"] for h in a["hosts"]], [h["lat_s"] for h in b["hosts"]])

    def test_cluster_heterogeneous(self):
        text, names, d = self.gen("cluster", "--hosts", "5", "--lat-spread", "2",
                                  "--slow-hosts", "5", "--slow-bw", "8Mbps")
        root = tree(text)
        self.assertEqual([z.get("id") for z in root.iter("zone")], ["c0"])
        self.assertEqual(list(root.iter("cluster")), [])
        self.assertEqual(len(links(root)), 10)
        self.assertEqual({bw for bw, _ in links(root).values()}, {"1000000Bps"})
        self.assertEqual(names, [f"h{i}" for i in range(5)])
        self.assertTrue(all(50e-6 <= h["lat_s"] <= 100e-6 for h in d["hosts"]))

    def test_twosite_heterogeneous(self):
        text, _, d = self.gen("twosite", "--hosts", "5", "--lat-spread", "4", "--wan-lat", "1ms")
        root = tree(text)
        self.assertEqual([z.get("id") for z in root.iter("zone")], ["world", "c0", "c1"])
        self.assertEqual(zone_routes(root), {("c0", "c1"): ["wan"]})
        self.assertEqual(len(links(root)), 2 * 5 + 1)
        self.assertEqual([h["rack"] for h in d["hosts"]], ["c0", "c0", "c1", "c1", "c1"])
        lat, _ = wsp_platform.path(d, "h1", "h3")
        want = d["hosts"][1]["lat_s"] + 1e-3 + d["hosts"][3]["lat_s"]
        self.assertAlmostEqual(lat, want, delta=1e-12)


class TestBadArguments(Gen):
    CASES = [
        (["racks", "--racks", "0"], "--racks 0: must be in [1, 256]"),
        (["racks", "--racks", "257"], "--racks 257: must be in [1, 256]"),
        (["racks", "--racks", "two"], "argument --racks: 'two' is not an integer"),
        (["racks", "--hosts-per-rack", "0"], "--hosts-per-rack 0: must be in [1, 100000]"),
        (["racks", "--racks", "200", "--hosts-per-rack", "600"],
         "--racks 200 x --hosts-per-rack 600: 120000 hosts, more than 100000"),
        (["racks", "--hosts", "8"], "--hosts: not an option of racks"),
        (["racks", "--wan-lat", "1ms"], "--wan-lat: not an option of racks"),
        (["racks", "--uplink-bw", "1Gbps", "--oversubscription", "2"],
         "--uplink-bw and --oversubscription: give one of them"),
        (["racks", "--oversubscription", "0"], "--oversubscription 0: must be positive"),
        (["racks", "--oversubscription", "nan"],
         "argument --oversubscription: 'nan' is not a number"),
        (["racks", "--uplink-bw", "fast"], "argument --uplink-bw: 'fast' is not a rate"),
        (["racks", "--uplink-lat", "1h"], "argument --uplink-lat: '1h' is not a latency"),
        (["cluster", "--racks", "2"], "--racks: only the racks profile has racks"),
        (["twosite", "--uplink-lat", "5us"], "--uplink-lat: only the racks profile has racks"),
        (["cluster", "--oversubscription", "3"], "--oversubscription: only the racks profile"),
        (["cluster", "--lat-spread", "0.5"], "--lat-spread 0.5: must be at least 1"),
        (["racks", "--lat-spread", "inf"], "argument --lat-spread: 'inf' is not a number"),
        (["cluster", "--hosts", "4", "--slow-hosts", "5", "--slow-bw", "1Mbps"],
         "--slow-hosts 5: must be in [0, 4]"),
        (["racks", "--slow-hosts", "-1"], "--slow-hosts -1: must be in [0, 64]"),
        (["racks", "--slow-hosts", "2"], "--slow-hosts 2: needs --slow-bw"),
        (["racks", "--slow-bw", "1Mbps"], "--slow-bw: given without --slow-hosts"),
        (["racks", "--slow-hosts", "1", "--slow-bw", "0Mbps"],
         "argument --slow-bw: '0Mbps': rate must be positive"),
        (["racks", "--seed", "-3"], "--seed -3: must not be negative"),
        (["racks", "--seed", "x"], "argument --seed: 'x' is not an integer"),
        (["stars"], "argument profile: invalid choice: 'stars'"),
        (["cluster", "--hosts", "0"], "--hosts 0: must be in [1, 100000]"),
        (["twosite", "--hosts", "1"], "--hosts: twosite needs at least 2 hosts"),
        (["cluster", "--wan-duplex", "split"], "--wan-duplex: only the twosite profile"),
        (["racks", "--wan-duplex", "split"], "--wan-duplex: not an option of racks"),
        (["twosite", "--wan-duplex", "half"], "argument --wan-duplex: invalid choice: 'half'"),
    ]

    def test_refused_naming_the_option(self):
        for argv, msg in self.CASES:
            with self.subTest(argv=argv):
                self.assertIn(msg, self.refused(*argv))

    def test_command_line(self):
        """The script itself: exit status 2 and the message on stderr; 0 and files when good."""
        r = subprocess.run([sys.executable, SCRIPT, "racks", "--racks", "0", "-o",
                            os.path.join(self.tmp, "x.xml")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--racks 0: must be in [1, 256]", r.stderr)
        r = subprocess.run([sys.executable, SCRIPT, "racks", "--racks", "2", "--hosts-per-rack",
                            "2", "-o", os.path.join(self.tmp, "x.xml"), "--describe", "-"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        self.assertEqual([h["rack"] for h in d["hosts"]], ["rack0", "rack0", "rack1", "rack1"])
        with open(os.path.join(self.tmp, "x.xml")) as f:
            self.assertEqual(len(tree(f.read()).findall(".//host")), 4)


if __name__ == "__main__":
    unittest.main()
