#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of the netlab package (lab/netlab) that need neither root nor namespaces.

The expected values are written out here from docs/netlab.md, the launcher settings of
docs/results/machines.md and the tc arithmetic (2 ms of tokens, at least 8 KiB), not taken
from the code. The builders run against a fake command runner that records every ip/tc call instead of making
it, so the exact commands a lab would be built with are checked without building it.

    python3 tests/unit/test_netlab.py [-v]        (ctest: unit.netlab)
"""
import argparse
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

sys.dont_write_bytecode = True      # no __pycache__ in the source tree
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "lab"))

from netlab import base, build, cli, owner, params, run, state, traffic  # noqa: E402
from netlab.base import EXIT_ENV, EXIT_USAGE, LabError  # noqa: E402

LAUNCHER = os.path.join(ROOT, "scripts", "netlab")


class Recorder:
    """Stands in for subprocess.run inside netlab.base: records argv (a tc batch file is
    recorded by its lines) and answers every command with success and empty output."""

    def __init__(self):
        self.calls = []

    def __call__(self, argv, **kw):
        argv = list(argv)
        if "-batch" in argv:
            k = argv.index("-batch") + 1
            with open(argv[k]) as f:
                argv[k] = f.read().splitlines()
        self.calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")


class StateDirCase(unittest.TestCase):
    """A private STATE_DIR for each test, removed afterwards."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="netlab-unit-")
        p = mock.patch.object(state, "STATE_DIR", self.tmp)
        p.start()
        self.addCleanup(p.stop)
        self.addCleanup(shutil.rmtree, self.tmp, True)


def lab_state(name, index, profile, p):
    st = state.new_state(name, index, profile, p)
    return st


def errmsg(fn, *a, **kw):
    """(code, message) of the LabError fn raises."""
    try:
        fn(*a, **kw)
    except LabError as e:
        return e.code, str(e)
    raise AssertionError("%s%r raised no LabError" % (fn.__name__, a))


# ----------------------------------------------------------------------------- rates

class TestRates(unittest.TestCase):
    def test_parse(self):
        cases = {"100mbit": 100000000, "1gbit": 1000000000, "500kbit": 500000,
                 "2500000bit": 2500000, "12mbps": 96000000, "1.5gbit": 1500000000,
                 " 25mbit ": 25000000, "25MBit": 25000000, "100000": 100000,
                 "1tbit": 10 ** 12, "20kbps": 160000}
        for text, bps in cases.items():
            self.assertEqual(params.parse_rate(text), bps, text)
        self.assertEqual(params.parse_rate(3000000), 3000000)

    def test_parse_errors(self):
        for text, what in (("fast", "cannot parse rate 'fast'"),
                           ("10furlong", "unknown rate unit in '10furlong'"),
                           ("50kbit", "rate '50kbit' is below 100kbit"),
                           ("", "cannot parse rate ''"), ("-5mbit", "cannot parse rate")):
            code, msg = errmsg(params.parse_rate, text)
            self.assertEqual(code, EXIT_USAGE, text)
            self.assertIn(what, msg)

    def test_format(self):
        cases = {100000000: "100mbit", 1000000000: "1gbit", 1500000000: "1500mbit",
                 2500000: "2500kbit", 123456: "123456bit", 25000000: "25mbit"}
        for bps, text in cases.items():
            self.assertEqual(params.fmt_rate(bps), text)


# ----------------------------------------------------------------------------- names, addresses

class TestNames(unittest.TestCase):
    def test_good_names(self):
        for n in ("a", "hn1", "hndemo", "abcdefgh", "wl254"):
            self.assertEqual(state.check_name(n), n)

    def test_bad_names(self):
        for n in ("", "1ab", "Hn1", "abcdefghi", "a-b", "../x", "a b", None):
            code, msg = errmsg(state.check_name, n)
            self.assertEqual(code, EXIT_USAGE)
            self.assertIn("lab name must match", msg)

    def test_cli_name_option(self):
        ns = argparse.Namespace(name="../etc")
        code, msg = errmsg(cli._name_arg, ns)
        self.assertEqual(code, EXIT_USAGE)
        self.assertTrue(msg.startswith("--name: "), msg)

    def test_interface_names_fit(self):
        # the longest interface a lab makes: 8-character name + "-" + "h249" (13 <= 15)
        st = lab_state("abcdefgh", 3, "cluster", {"hosts": 250, "rate": 10 ** 8,
                                                  "tcp_cc": "default"})
        rec = Recorder()
        tmp = tempfile.mkdtemp(prefix="netlab-unit-")
        try:
            with mock.patch.object(base.subprocess, "run", rec), \
                 mock.patch.object(state, "STATE_DIR", tmp):
                build.build_cluster(build.Builder(st))
        finally:
            shutil.rmtree(tmp, True)
        names = set()
        for c in rec.calls:
            if "link" in c and "add" in c:
                i = c.index("add")
                names.add(c[i + 1])
                if "name" in c:
                    names.add(c[c.index("name") + 1])
        self.assertIn("abcdefgh-h249", names)
        self.assertEqual(max(len(n) for n in names), 13)


class TestAddressPlan(unittest.TestCase):
    def test_cluster(self):
        p = state.address_plan("cluster", 7, 3)
        self.assertEqual(p["subnet"], "10.231.7.0/24")
        self.assertEqual(p["root"], {"ip": "10.231.7.254", "plen": 24, "routes": []})
        self.assertEqual([(h["ip"], h["plen"], h["routes"]) for h in p["hosts"]],
                         [("10.231.7.1", 24, []), ("10.231.7.2", 24, []),
                          ("10.231.7.3", 24, [])])
        self.assertNotIn("router", p)

    def test_hetero_like_cluster(self):
        p = state.address_plan("hetero", 200, 2)
        self.assertEqual(p["root"]["ip"], "10.231.200.254")
        self.assertEqual([h["ip"] for h in p["hosts"]], ["10.231.200.1", "10.231.200.2"])

    def test_twosite(self):
        p = state.address_plan("twosite", 12, 5)    # site A: 3 hosts, site B: 2
        a, b = "10.231.12.0/25", "10.231.12.128/25"
        self.assertEqual(p["router"], {"ip_a": "10.231.12.126", "ip_b": "10.231.12.254",
                                       "net_a": a, "net_b": b})
        # the root namespace sits in site A, with the one route to site B via the router
        self.assertEqual(p["root"], {"ip": "10.231.12.125", "plen": 25,
                                     "routes": [(b, "10.231.12.126")]})
        self.assertEqual([(h["ip"], h["plen"], h["site"], h["routes"]) for h in p["hosts"]],
                         [("10.231.12.1", 25, 0, [(b, "10.231.12.126")]),
                          ("10.231.12.2", 25, 0, [(b, "10.231.12.126")]),
                          ("10.231.12.3", 25, 0, [(b, "10.231.12.126")]),
                          ("10.231.12.129", 25, 1, [(a, "10.231.12.254")]),
                          ("10.231.12.130", 25, 1, [(a, "10.231.12.254")])])

    def test_largest_labs_stay_in_their_block(self):
        for prof, n, last in (("cluster", 250, "10.231.5.250"), ("hetero", 250, "10.231.5.250"),
                              ("twosite", 248, "10.231.5.252")):
            p = state.address_plan(prof, 5, n)
            ips = [h["ip"] for h in p["hosts"]]
            self.assertEqual(ips[-1], last)
            reserved = {p["root"]["ip"]} | set((p.get("router") or {}).get(k)
                                               for k in ("ip_a", "ip_b"))
            self.assertEqual(len(set(ips)), n, prof)
            self.assertFalse(reserved & set(ips), prof)
            if prof == "twosite":
                self.assertEqual(ips[123], "10.231.5.124")   # last of site A, below .125
                self.assertEqual(ips[124], "10.231.5.129")

    def test_host_ranges(self):
        for prof, bad, msg in (("cluster", 0, "cluster: --hosts must be 1..250"),
                               ("cluster", 251, "cluster: --hosts must be 1..250"),
                               ("twosite", 1, "twosite: --hosts must be 2..248"),
                               ("twosite", 249, "twosite: --hosts must be 2..248"),
                               ("hetero", 1, "hetero: --hosts must be 2..250"),
                               ("cloud", 251, "cloud: --hosts must be 2..250")):
            code, m = errmsg(state.address_plan, prof, 3, bad)
            self.assertEqual((code, m), (EXIT_USAGE, msg))

    def test_index_range(self):
        self.assertIn("outside 1..254", errmsg(state.address_plan, "cluster", 255, 2)[1])


class TestStateFile(StateDirCase):
    def test_pick_lab(self):
        code, msg = errmsg(state.pick_lab, None)
        self.assertIn("no lab is up", msg)
        st = lab_state("hna", 4, "cluster", {"hosts": 2})
        state.save_state(st)
        self.assertEqual(state.pick_lab(None)["name"], "hna")
        self.assertEqual(state.load_state("hna")["subnet"], "10.231.4.0/24")
        state.save_state(lab_state("hnb", 5, "cluster", {"hosts": 2}))
        code, msg = errmsg(state.pick_lab, None)
        self.assertEqual(code, EXIT_USAGE)
        self.assertEqual(msg, "several labs are up (hna, hnb): give --name")
        self.assertIn("no lab named 'hnc'", errmsg(state.pick_lab, "hnc")[1])
        self.assertEqual(os.path.basename(state.state_path("hna")), "hna.json")


# ----------------------------------------------------------------------------- parameters

def up_args(*argv):
    return cli.parser().parse_args(["up"] + list(argv))


def merge(*argv, environ=None):
    return params.merge_params(up_args(*argv), environ=environ or {},
                               tcp_cc_check=lambda cc: cc)


class TestParams(unittest.TestCase):
    def test_defaults(self):
        self.assertEqual(merge("cluster"),
                         ("cluster", {"hosts": 8, "rate": 100000000, "tcp_cc": "cubic"}, None))
        prof, p, _ = merge("twosite", "--flow-cap", "10mbit", "--hosts", "4")
        self.assertEqual(p, {"hosts": 4, "rate": 100000000, "wan_rate": 100000000,
                             "flow_cap": 10000000, "tcp_cc": "cubic"})
        prof, p, _ = merge("hetero")
        self.assertEqual((p["seed"], p["classes"], p["weights"]),
                         (1, "1,0.5,0.25,0.1", "0.4,0.3,0.2,0.1"))

    def test_spec_file_and_override(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"profile": "twosite", "hosts": 4, "flow-cap": "10mbit", "name": "hns"}, f)
        self.addCleanup(os.unlink, f.name)
        prof, p, name = merge("--spec", f.name, "--hosts", "6")
        self.assertEqual((prof, p["hosts"], p["flow_cap"], name), ("twosite", 6, 10000000, "hns"))

    def test_tcp_cc_environment(self):
        self.assertEqual(merge("cluster", environ={"NETLAB_TCP_CC": "reno"})[1]["tcp_cc"], "reno")
        self.assertEqual(merge("cluster", "--tcp-cc", "bbr",
                               environ={"NETLAB_TCP_CC": "reno"})[1]["tcp_cc"], "bbr")

    def test_bad_arguments(self):
        cases = [(["cluster", "--link-rate", "fast"], "--link-rate: cannot parse rate 'fast'"),
                 (["cluster", "--rate", "fast"], "--link-rate: cannot parse rate 'fast'"),
                 (["twosite", "--wan-rate", "10kbit"], "--wan-rate: rate '10kbit' is below"),
                 (["twosite", "--flow-cap", "200mbit"],
                  "twosite: --flow-cap must not exceed --wan-rate"),
                 (["cloud", "--flow-cap", "200mbit"], "cloud: --flow-cap must not exceed --link-rate"),
                 ([], "profile must be one of cluster, twosite, cloud, hetero (got None)"),
                 (["hetero", "--classes", "1,x"], "hetero: --classes: '1,x' is not a comma list"),
                 (["hetero", "--classes", "1,0.5", "--weights", "1"],
                  "--classes (fractions of B in (0,1]) and --weights must have the same length"),
                 (["hetero", "--classes", "1.5", "--weights", "1"], "fractions of B in (0,1]"),
                 (["hetero", "--classes", "1,0.5", "--weights", "0,0"],
                  "hetero: --weights must be >= 0 and not all 0"),
                 (["--spec", "/nonexistent/lab.json"], "--spec: cannot read /nonexistent/lab.json")]
        for argv, want in cases:
            code, msg = errmsg(merge, *argv)
            self.assertEqual(code, EXIT_USAGE, argv)
            self.assertIn(want, msg, argv)

    def test_bad_spec(self):
        for content, want in (('{"profile": "cluster", "bogus": 1}',
                               "spec key 'bogus' is not an option of profile cluster"),
                              ("[1, 2]", "spec file must hold a JSON object"),
                              ("{not json", "is not JSON"),
                              ('{"profile": "cluster", "hosts": "many"}',
                               "--hosts: 'many' is not a whole number")):
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                f.write(content)
            self.addCleanup(os.unlink, f.name)
            code, msg = errmsg(merge, "--spec", f.name)
            self.assertEqual(code, EXIT_USAGE, content)
            self.assertIn(want, msg)

    def test_unknown_tcp_cc(self):
        code, msg = errmsg(params.check_tcp_cc, "nosuchcc")
        self.assertEqual(code, EXIT_USAGE)
        self.assertIn("--tcp-cc: 'nosuchcc' is not a TCP congestion control", msg)
        self.assertEqual(params.check_tcp_cc("default"), "default")


class TestDelayOptions(unittest.TestCase):
    """--delay, --jitter, --loss and twosite's --wan-*: tc-style times, loss as a share or a
    percentage, absent unless given (a lab without them is built as before)."""

    def test_times_and_losses(self):
        for text, ns in (("10ms", 10**7), ("500us", 5 * 10**5), ("1.5ms", 1500000), ("2s", 2 * 10**9),
                         ("0", 0), ("0ms", 0), ("250ns", 250)):
            self.assertEqual(params.parse_duration(text), ns, text)
        for text, p in (("0.1%", 0.001), ("1%", 0.01), ("0.001", 0.001), ("0", 0.0)):
            self.assertAlmostEqual(params.parse_loss(text), p, msg=text)
        for ns, text in ((10**7, "10ms"), (5 * 10**5, "500us"), (1500000, "1.5ms"), (0, "0")):
            self.assertEqual(params.fmt_duration(ns), text)

    def test_given_or_absent(self):
        self.assertNotIn("delay", merge("cluster")[1])
        _, p, _ = merge("cluster", "--delay", "10ms", "--loss", "0.1%")
        self.assertEqual((p["delay"], p["loss"]), (10**7, 0.001))
        self.assertNotIn("jitter", p)
        self.assertEqual(params.delay_line_ports(p), (True, False))
        _, p, _ = merge("twosite", "--wan-delay", "40ms", "--wan-loss", "0.01%")
        self.assertEqual((p["wan_delay"], p["wan_loss"]), (4 * 10**7, 0.0001))
        self.assertEqual(params.delay_line_ports(p), (False, True))

    def test_bad_values_name_the_option(self):
        cases = [(["cluster", "--delay", "10"], "--delay: cannot parse time '10'"),
                 (["cluster", "--delay", "11s"], "--delay: time '11s' is above 10s"),
                 (["cluster", "--jitter=-1ms"], "--jitter: cannot parse time '-1ms'"),
                 (["cluster", "--loss", "100%"], "--loss: loss '100%' is not in [0, 1)"),
                 (["cluster", "--loss", "lots"], "--loss: cannot parse loss 'lots'"),
                 (["cluster", "--wan-delay", "10ms"],
                  "--wan-delay is an option of the twosite profile only")]
        for argv, want in cases:
            code, msg = errmsg(merge, *argv)
            self.assertEqual(code, EXIT_USAGE, argv)
            self.assertIn(want, msg, argv)


class TestOwner(unittest.TestCase):
    """--owner-pid and NETLAB_OWNER_PID: a running process other than init or the kernel,
    refused naming where it came from before anything is created."""

    def refused(self, text, source, words):
        with self.assertRaises(LabError) as cm:
            owner.parse_owner(text, source)
        self.assertEqual(cm.exception.code, EXIT_USAGE)
        self.assertIn(source, str(cm.exception))
        self.assertIn(words, str(cm.exception))

    def test_refused(self):
        self.refused("abc", "--owner-pid", "is not a process id")
        self.refused("", "NETLAB_OWNER_PID", "is not a process id")
        self.refused("12.5", "--owner-pid", "is not a process id")
        for pid in ("1", "0", "-7"):
            self.refused(pid, "--owner-pid", "cannot own a lab")
        self.refused("999999999", "NETLAB_OWNER_PID", "no process 999999999")

    def test_running(self):
        got = owner.parse_owner(str(os.getpid()), "--owner-pid")
        self.assertEqual(got["pid"], os.getpid())
        self.assertEqual(got["start"], owner.start_time(os.getpid()))
        self.assertTrue(owner.alive(got))
        # A later process given the same pid is not the owner: its start time differs.
        self.assertFalse(owner.alive({"pid": os.getpid(), "start": got["start"] + 1}))


class TestHeteroMatrix(unittest.TestCase):
    CLASSES, WEIGHTS = [1, 0.5, 0.25, 0.1], [0.4, 0.3, 0.2, 0.1]

    def test_seed1_as_measured(self):
        # docs/results/netlab.md, hetero 8 hosts seed 1: `calibrate` measured one pair per
        # class, the first in row order: h0->h1 class 1, h0->h2 0.25, h0->h5 0.5, h2->h7 0.1
        m = params.hetero_matrix(8, 1, self.CLASSES, self.WEIGHTS)
        self.assertEqual((m[0][1], m[0][2], m[0][5], m[2][7]), (1, 0.25, 0.5, 0.1))
        self.assertTrue(set(m[0][3:5]) <= {1, 0.25})            # 0.5 first at h0->h5
        firsts = {}
        for i in range(8):
            for j in range(8):
                if i != j:
                    firsts.setdefault(m[i][j], (i, j))
        self.assertEqual(firsts, {1: (0, 1), 0.25: (0, 2), 0.5: (0, 5), 0.1: (2, 7)})

    def test_shape(self):
        m = params.hetero_matrix(6, 9, self.CLASSES, self.WEIGHTS)
        for i in range(6):
            self.assertEqual(m[i][i], 1.0)
            for j in range(6):
                self.assertEqual(m[i][j], m[j][i])
                self.assertIn(m[i][j], self.CLASSES)
        self.assertEqual(m, params.hetero_matrix(6, 9, self.CLASSES, self.WEIGHTS))
        self.assertNotEqual(m, params.hetero_matrix(6, 10, self.CLASSES, self.WEIGHTS))
        only = params.hetero_matrix(5, 3, [1, 0.5], [0, 1])     # weight 0: never drawn
        self.assertEqual({only[i][j] for i in range(5) for j in range(5) if i != j}, {0.5})


# ----------------------------------------------------------------------------- shaping, builders

class TestShaping(unittest.TestCase):
    def test_tbf(self):
        self.assertEqual(build.tbf_args("eth0", 100000000),
                         ["qdisc", "replace", "dev", "eth0", "root", "handle", "1:", "tbf",
                          "rate", "100mbit", "burst", "25000", "latency", "10ms"])
        self.assertEqual(build.tbf_args("x", 25000000)[9:12], ["25mbit", "burst", "8192"])

    def test_flowcap(self):
        lines = build.flowcap_lines("eth1", 100000000, 20000000)
        self.assertEqual(len(lines), 3 + 1024 + 1)
        self.assertEqual(lines[:4], [
            "qdisc replace dev eth1 root handle 1: htb default 2",
            "class add dev eth1 parent 1: classid 1:1 htb rate 100000000bit ceil 100000000bit "
            "burst 25000 cburst 25000",
            "class add dev eth1 parent 1:1 classid 1:2 htb rate 100000bit ceil 100000000bit "
            "quantum 1514",
            "class add dev eth1 parent 1:1 classid 1:1000 htb rate 100000bit ceil 20000000bit "
            "burst 5000 cburst 5000 quantum 1514"])
        leaves = [l.split(" classid ")[1].split()[0] for l in lines[3:-1]]
        self.assertEqual(leaves, ["1:%x" % c for c in range(0x1000, 0x1400)])
        self.assertEqual(lines[-1], "filter add dev eth1 parent 1: prio 1 protocol ip bpf "
                         "bytecode '%s'" % build.flowcap_bpf())

    @staticmethod
    def run_cbpf(bytecode, pkt):
        """A classic BPF interpreter for the instructions the classifier may use (written
        from the instruction set, not from build.py), so that the bytecode itself is tested."""
        n, *ins = bytecode.split(",")
        ins = [tuple(int(x) for x in i.split()) for i in ins]
        assert int(n) == len(ins)
        a = x = pc = 0
        mem = [0] * 16

        def load(off, size):
            if off + size > len(pkt):
                raise IndexError
            return int.from_bytes(pkt[off:off + size], "big")
        for _ in range(len(ins)):
            code, jt, jf, k = ins[pc]
            pc += 1
            cls, size = code & 0x07, code & 0x18
            width = {0x00: 4, 0x08: 2, 0x10: 1}.get(size)
            if code in (0x20, 0x28, 0x30):      # ld{,h,b} [k]
                a = load(k, width)
            elif code in (0x40, 0x48, 0x50):    # ld{,h,b} [x+k]
                a = load(x + k, width)
            elif code == 0xb1:                  # ldxb 4*([k]&0xf)
                x = 4 * (load(k, 1) & 0xf)
            elif code == 0x02:
                mem[k] = a
            elif code == 0x61:
                x = mem[k]
            elif cls == 0x04:                   # ALU
                op, src = code & 0xf0, (x if code & 0x08 else k)
                a = {0x00: a + src, 0x50: a & src, 0x70: a >> src}[op] & 0xffffffff
            elif code == 0x15:
                pc += jt if a == k else jf
            elif code == 0x45:
                pc += jt if a & k else jf
            elif code == 0x16:
                return a
            elif code == 0x06:
                return k
            else:
                raise AssertionError("instruction %#x not in the interpreter" % code)
        raise AssertionError("the program ran off its end")

    @staticmethod
    def packet(proto=6, sport=0, dport=0, ihl=5, frag=0, ethertype=0x0800):
        eth = bytes(12) + ethertype.to_bytes(2, "big")
        ip = bytes([0x40 | ihl, 0]) + (0).to_bytes(2, "big") + bytes(2) + \
            frag.to_bytes(2, "big") + bytes([64, proto]) + bytes(10) + bytes(4 * (ihl - 5))
        return eth + ip + sport.to_bytes(2, "big") + dport.to_bytes(2, "big") + bytes(16)

    def test_flowcap_classifier(self):
        prog = build.flowcap_bpf()
        for sport, dport, ihl in [(49204, 43017, 5), (43017, 49204, 5), (1, 2, 5),
                                  (65535, 65535, 5), (35354, 51167, 8), (0, 0, 15)]:
            want = (1 << 16) | (0x1000 + ((sport + dport) // 2) % 1024)
            self.assertEqual(self.run_cbpf(prog, self.packet(6, sport, dport, ihl)), want)
            self.assertEqual(build.flow_leaf(sport, dport), want & 0xffff)
        # not TCP, a later fragment, not IPv4: no match (htb's default class)
        self.assertEqual(self.run_cbpf(prog, self.packet(17, 5000, 5001)), 0)
        self.assertEqual(self.run_cbpf(prog, self.packet(1)), 0)
        self.assertEqual(self.run_cbpf(prog, self.packet(6, 5000, 5001, frag=0x0010)), 0)
        self.assertEqual(self.run_cbpf(prog, self.packet(6, 5000, 5001, frag=0x4000)),
                         (1 << 16) | (0x1000 + 5000 % 1024))
        self.assertEqual(self.run_cbpf(prog, self.packet(6, 5000, 5001, ethertype=0x0806)), 0)

    def test_flowcap_lanes_get_a_leaf_each(self):
        # The ports Linux gave 17 connections of one host to one listener (49975) on a cloud
        # lab (docs/results/data/cloud-leaves-2026-12-02.txt, lab co, h0): even, 2-16 apart.
        # The low 5 bits of each port put them on 9 leaves; the sum of the ports on 17.
        ports = [47414, 47418, 47430, 47446, 47462, 47466, 47482, 47494, 47502, 47510, 47526,
                 47528, 47530, 47544, 47554, 47566, 47582]
        for listener in (49975, 49976, 1024):
            for p in (ports, [p + 1 for p in ports]):
                self.assertEqual(len({build.flow_leaf(s, listener) for s in p}), len(p))
                self.assertEqual(len({build.flow_leaf(listener, s) for s in p}), len(p))
        self.assertEqual(len({(p % 32, 49975 % 32) for p in ports}), 9)
        # any 1024 connections of one parity within 2048 ports: distinct leaves
        self.assertEqual(len({build.flow_leaf(s, 80) for s in range(30000, 32048, 2)}), 1024)

    def test_pairs(self):
        self.assertEqual(build.pairs_lines("eth0", 100000000,
                                           [("10.231.3.2", 50000000), ("10.231.3.3", 10000000)]),
                         ["qdisc replace dev eth0 root handle 1: htb default 2",
                          "class add dev eth0 parent 1: classid 1:1 htb rate 100000000bit ceil "
                          "100000000bit burst 25000 cburst 25000",
                          "class add dev eth0 parent 1:1 classid 1:2 htb rate 12500000bit ceil "
                          "100000000bit quantum 1514",
                          "class add dev eth0 parent 1:1 classid 1:10 htb rate 12500000bit ceil "
                          "50000000bit burst 12500 cburst 12500 quantum 1514",
                          "filter add dev eth0 parent 1: prio 1 protocol ip u32 match ip dst "
                          "10.231.3.2/32 flowid 1:10",
                          "class add dev eth0 parent 1:1 classid 1:11 htb rate 10000000bit ceil "
                          "10000000bit burst 4096 cburst 4096 quantum 1514",
                          "filter add dev eth0 parent 1: prio 1 protocol ip u32 match ip dst "
                          "10.231.3.3/32 flowid 1:11"])


class TestBuilders(StateDirCase):
    def build(self, profile, name, index, p):
        st = lab_state(name, index, profile, p)
        rec = Recorder()
        with mock.patch.object(base.subprocess, "run", rec):
            build.BUILDERS[profile](build.Builder(st))
        return st, rec.calls

    def test_delayed_hosts_and_wan(self):
        """A delayed host's switch port is not a bridge port: the delay line joins it to a TAP
        that is; the host's egress direction carries the delay, the way back none; offloads
        are off on every device whose frames reach the line. twosite's WAN leg into site B
        carries the WAN's settings both ways."""
        with mock.patch.object(build.delayline, "shutil") as sh:
            sh.which.return_value = "/usr/sbin/ethtool"
            st, calls = self.build("cluster", "hnu", 9, {"hosts": 1, "rate": 25000000,
                                                         "tcp_cc": "cubic", "delay": 10**7,
                                                         "loss": 0.001})
        self.assertNotIn(["ip", "-n", "hnu-sw0", "link", "set", "hnu-h0", "master", "hnu-br0",
                          "up"], calls)
        off = ["-K", "eth0", "tx", "off", "tso", "off", "gso", "off"]
        self.assertIn(["ip", "netns", "exec", "hnu-h0", "ethtool"] + off, calls)
        self.assertIn(["ethtool", "-K", "hnu-r", "tx", "off", "tso", "off", "gso", "off"], calls)
        b = build.Builder(st)
        b.delay_hosts = True
        with mock.patch.object(base.subprocess, "run", Recorder()), \
                mock.patch.object(build.delayline, "shutil") as sh:
            sh.which.return_value = "/usr/sbin/ethtool"
            st2 = lab_state("hnv", 10, "twosite", {"hosts": 2, "rate": 25000000,
                                                   "wan_rate": 10**8, "flow_cap": 2 * 10**7,
                                                   "tcp_cc": "cubic", "delay": 10**6,
                                                   "wan_delay": 4 * 10**7, "wan_jitter": 10**6})
            b2 = build.Builder(st2)
            build.BUILDERS["twosite"](b2)
        ports = {p["dev"]: p for p in b2.ports}
        self.assertEqual(sorted(ports), ["hnv-h0", "hnv-h1", "hnv-rb"])
        self.assertEqual((ports["hnv-h0"]["tap"], ports["hnv-h0"]["out"], ports["hnv-h0"]["back"]),
                         ("hnv-t0", "1000000/0/0", "0/0/0"))
        self.assertEqual((ports["hnv-rb"]["ns"], ports["hnv-rb"]["br"], ports["hnv-rb"]["out"],
                          ports["hnv-rb"]["back"]),
                         ("hnv-sw1", "hnv-br1", "40000000/1000000/0", "40000000/1000000/0"))

    def test_cluster_one_host(self):
        st, calls = self.build("cluster", "hnu", 9, {"hosts": 1, "rate": 25000000,
                                                     "tcp_cc": "cubic"})
        sysctl = ["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                  "net.ipv6.conf.default.disable_ipv6=1"]
        tbf = ["root", "handle", "1:", "tbf", "rate", "25mbit", "burst", "8192", "latency", "10ms"]
        self.assertEqual(calls, [
            ["ip", "netns", "add", "hnu-sw0"],
            ["ip", "netns", "exec", "hnu-sw0"] + sysctl,
            ["ip", "-n", "hnu-sw0", "link", "set", "lo", "up"],
            ["ip", "-n", "hnu-sw0", "link", "add", "hnu-br0", "type", "bridge", "stp_state", "0",
             "forward_delay", "0"],
            ["ip", "-n", "hnu-sw0", "link", "set", "hnu-br0", "up"],
            ["ip", "link", "add", "hnu-r", "type", "veth", "peer", "name", "hnu-rs", "netns",
             "hnu-sw0"],
            ["ip", "-n", "hnu-sw0", "link", "set", "hnu-rs", "master", "hnu-br0", "up"],
            ["ip", "addr", "add", "10.231.9.254/24", "dev", "hnu-r"],
            ["ip", "link", "set", "hnu-r", "up"],
            ["ip", "netns", "add", "hnu-h0"],
            ["ip", "netns", "exec", "hnu-h0"] + sysctl,
            ["ip", "-n", "hnu-h0", "link", "set", "lo", "up"],
            ["ip", "link", "add", "eth0", "netns", "hnu-h0", "type", "veth", "peer", "name",
             "hnu-h0", "netns", "hnu-sw0"],
            ["ip", "-n", "hnu-sw0", "link", "set", "hnu-h0", "master", "hnu-br0", "up"],
            ["ip", "-n", "hnu-h0", "addr", "add", "10.231.9.1/24", "dev", "eth0"],
            ["ip", "-n", "hnu-h0", "link", "set", "eth0", "up"],
            ["ip", "-n", "hnu-h0", "route", "replace", "10.231.9.0/24", "dev", "eth0", "proto",
             "kernel", "scope", "link", "src", "10.231.9.1", "congctl", "cubic"],
            ["ip", "-n", "hnu-h0", "route", "replace", "local", "10.231.9.1", "dev", "eth0",
             "table", "local", "proto", "kernel", "scope", "host", "src", "10.231.9.1",
             "congctl", "cubic"],
            ["tc", "-n", "hnu-h0", "qdisc", "replace", "dev", "eth0"] + tbf,
            ["tc", "-n", "hnu-sw0", "qdisc", "replace", "dev", "hnu-h0"] + tbf])
        self.assertEqual(st["created"], {"netns": ["hnu-sw0", "hnu-h0"], "links": ["hnu-r"]})
        self.assertEqual(st["hosts"], [{"name": "h0", "ns": "hnu-h0", "ip": "10.231.9.1",
                                        "swdev": "hnu-h0", "sw_ns": "hnu-sw0"}])
        self.assertEqual((st["root_ip"], st["root_dev"]), ("10.231.9.254", "hnu-r"))
        self.assertEqual([(s["ns"], s["dev"], s["role"]) for s in st["shaped"]],
                         [("hnu-h0", "eth0", "host-egress"), ("hnu-sw0", "hnu-h0", "host-ingress")])
        # the state file on disk records the same as the builder's state
        with open(os.path.join(self.tmp, "hnu.json")) as f:
            self.assertEqual(json.load(f)["created"], st["created"])

    def test_twosite_routes_and_safety(self):
        st, calls = self.build("twosite", "hnt", 4, {"hosts": 2, "rate": 10 ** 8,
                                                     "wan_rate": 10 ** 8, "flow_cap": 2 * 10 ** 7,
                                                     "tcp_cc": "default"})
        self.assertIn(["ip", "route", "add", "10.231.4.128/25", "via", "10.231.4.126", "dev",
                       "hnt-r"], calls)
        self.assertIn(["ip", "-n", "hnt-h0", "route", "add", "10.231.4.128/25", "via",
                       "10.231.4.126", "dev", "eth0"], calls)
        self.assertIn(["ip", "-n", "hnt-h1", "route", "add", "10.231.4.0/25", "via",
                       "10.231.4.254", "dev", "eth0"], calls)
        self.assertEqual([h.get("site") for h in st["hosts"]], [0, 1])
        # forwarding is switched on in the router namespace, nowhere else
        fwd = [c for c in calls if any("ip_forward" in x for x in c)]
        self.assertEqual(fwd, [["ip", "netns", "exec", "hnt-rt", "sysctl", "-q", "-w",
                                "net.ipv4.ip_forward=1"]])
        # root-namespace objects: only the lab's <name>-r port, its address and one route
        root = [c for c in calls if c[:2] in (["ip", "link"], ["ip", "addr"], ["ip", "route"])
                and not (c[2] == "add" and c[4] == "netns")]      # veths made in lab namespaces
        self.assertEqual([c[:4] for c in root], [["ip", "link", "add", "hnt-r"],
                                                 ["ip", "addr", "add", "10.231.4.125/25"],
                                                 ["ip", "link", "set", "hnt-r"],
                                                 ["ip", "route", "add", "10.231.4.128/25"]])
        wan = [c for c in calls if c[:2] == ["tc", "-n"] and "-batch" in c]
        self.assertEqual([(c[2], c[4][0]) for c in wan],
                         [("hnt-rt", "qdisc replace dev eth1 root handle 1: htb default 2"),
                          ("hnt-rt", "qdisc replace dev eth0 root handle 1: htb default 2")])

    def test_cloud_caps_every_flow_leaving_a_host(self):
        st, calls = self.build("cloud", "hnc", 8, {"hosts": 2, "rate": 10 ** 8,
                                                   "flow_cap": 2 * 10 ** 7, "tcp_cc": "default"})
        self.assertNotIn("router", st)
        batches = [c for c in calls if c[:2] == ["tc", "-n"] and "-batch" in c]
        # one per-flow htb per host's egress, parent at B, leaves with ceil F; ingress is tbf
        self.assertEqual([c[2] for c in batches], ["hnc-h0", "hnc-h1"])
        for c in batches:
            self.assertIn("class add dev eth0 parent 1: classid 1:1 htb rate 100000000bit "
                          "ceil 100000000bit burst 25000 cburst 25000", c[4])
            leaves = [l for l in c[4] if "classid 1:1" in l and "parent 1:1 " in l]
            self.assertEqual(len(leaves), build.FLOW_LEAVES)
            self.assertTrue(all(" ceil 20000000bit " in l for l in leaves))
        self.assertEqual([(s["ns"], s["kind"], s["role"], s.get("flow_cap")) for s in st["shaped"]],
                         [("hnc-h0", "htb-flowcap", "host-egress", 2 * 10 ** 7),
                          ("hnc-sw0", "tbf", "host-ingress", None),
                          ("hnc-h1", "htb-flowcap", "host-egress", 2 * 10 ** 7),
                          ("hnc-sw0", "tbf", "host-ingress", None)])

    def test_hetero_egress_follows_matrix(self):
        st, calls = self.build("hetero", "hnh", 6, {"hosts": 3, "rate": 30000000, "seed": 7,
                                                    "classes": "1,0.3", "weights": "1,1",
                                                    "tcp_cc": "default"})
        m = st["matrix"]
        for i in range(3):
            batch = [c for c in calls if c[:3] == ["tc", "-n", "hnh-h%d" % i]][0][4]
            ceil = {}
            for line in batch:
                if "match ip dst" in line:
                    dst, cid = line.split("match ip dst ")[1].split(" flowid ")
                    ceil[dst] = cid
            want = {"10.231.6.%d/32" % (j + 1): int(30000000 * m[i][j])
                    for j in range(3) if j != i}
            got = {}
            for dst, cid in ceil.items():
                cls = [l for l in batch if "classid %s htb" % cid in l][0]
                got[dst] = int(cls.split(" ceil ")[1].split("bit")[0])
            self.assertEqual(got, want)

    def test_fail_hook_stops_before_the_namespace(self):
        st = lab_state("hnf", 3, "cluster", {"hosts": 4, "rate": 10 ** 8, "tcp_cc": "default"})
        rec = Recorder()
        with mock.patch.object(base.subprocess, "run", rec), \
             mock.patch.dict(os.environ, {"NETLAB_TEST_FAIL_AFTER": "2"}):
            code, msg = errmsg(build.build_cluster, build.Builder(st))
        self.assertIn("NETLAB_TEST_FAIL_AFTER=2", msg)
        self.assertEqual(st["created"]["netns"], ["hnf-sw0", "hnf-h0"])


# ----------------------------------------------------------------------------- MPI command lines

HOSTS = [{"name": "h%d" % i, "ns": "hnx-h%d" % i, "ip": "10.231.7.%d" % (i + 1)}
         for i in range(4)]


def run_state():
    st = lab_state("hnx", 7, "cluster", {"hosts": 4})
    st.update(status="up", root_ip="10.231.7.254", hosts=HOSTS)
    return st


class TestMpiCommand(unittest.TestCase):
    def test_openmpi(self):
        cmd, env, hf = run.mpi_command(run_state(), "openmpi", 6, 2, HOSTS[:3],
                                       ["/bin/prog", "a"], ["--mca", "btl_tcp_links", "2"],
                                       "/HF", "/SI")
        self.assertEqual(cmd, ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to",
                               "none", "-np", "6", "--hostfile", "/HF", "--map-by", "slot",
                               "--mca", "plm_rsh_agent", "/SI", "--mca", "plm_rsh_no_tree_spawn",
                               "1", "--mca", "btl", "tcp,self,vader", "--mca",
                               "btl_tcp_if_include", "eth0", "--mca", "oob_tcp_if_include",
                               "10.231.7.0/24", "--mca", "btl_tcp_links", "2", "/bin/prog", "a"])
        self.assertEqual(env, {"PMIX_MCA_gds": "hash",
                               "OMPI_MCA_btl_base_warn_component_unused": "0"})
        self.assertEqual(hf, "hnx-h0 slots=2\nhnx-h1 slots=2\nhnx-h2 slots=2\n")

    def test_mpich(self):
        cmd, env, hf = run.mpi_command(run_state(), "mpich", 4, 1, HOSTS, ["/bin/prog"],
                                       ["-genv", "UCX_RNDV_THRESH", "262144"], "/HF", "/SI",
                                       "/usr/bin/mpiexec.mpich")
        self.assertEqual(cmd, ["/usr/bin/mpiexec.mpich", "-launcher", "ssh", "-launcher-exec",
                               "/SI", "-localhost", "10.231.7.254", "-f", "/HF", "-n", "4",
                               "-genv", "UCX_RNDV_THRESH", "262144", "/bin/prog"])
        self.assertEqual(env, {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "eth0"})
        self.assertEqual(hf, "hnx-h0:1\nhnx-h1:1\nhnx-h2:1\nhnx-h3:1\n")

    def test_unknown_mpi(self):
        code, msg = errmsg(run.mpi_command, run_state(), "lam", 1, 1, HOSTS, ["x"], [], "h", "s")
        self.assertEqual((code, msg), (EXIT_USAGE, "--mpi must be one of openmpi, mpich "
                                                   "(got 'lam')"))

    def test_place_ranks(self):
        self.assertEqual(run.place_ranks(4, 2), (4, 8))
        self.assertEqual(run.place_ranks(4, 2, np_=3), (2, 3))
        self.assertEqual(run.place_ranks(4, 2, hosts=2), (2, 4))
        self.assertEqual(run.place_ranks(4, 1, hosts=3, np_=2), (3, 2))
        for a, want in (((4, 2, None, 9), "need 5 hosts at --ppn 2, lab has 4"),
                        ((4, 2, 2, 5), "--np 5 does not fit 2 hosts x --ppn 2"),
                        ((4, 1, 5, None), "need 5 hosts at --ppn 1, lab has 4"),
                        ((4, 0, None, None), "--ppn must be at least 1 (got 0)"),
                        ((4, 1, None, -1), "--np must be at least 1 (got -1)"),
                        ((4, 1, -2, None), "--hosts must be at least 1 (got -2)")):
            self.assertEqual(errmsg(run.place_ranks, *a), (EXIT_USAGE, want))

    def test_run_arguments(self):
        def args(*argv):
            return cli.parser().parse_args(["run"] + list(argv))
        self.assertEqual(run.check_run_args(args("--", "prog", "-x")), ["prog", "-x"])
        for argv, want in ((["--"], "no program given"),
                           (["--time-limit", "0", "--", "p"], "--time-limit must be > 0 seconds"),
                           (["--timeout", "0", "--", "p"], "--time-limit must be > 0 seconds"),
                           (["--done-grace", "-1", "--", "p"], "--done-grace must be >= 0"),
                           (["--done-line", "", "--", "p"], "--done-line must not be empty"),
                           (["--expect-bytes", "-5", "--", "p"], "--expect-bytes must be >= 0")):
            code, msg = errmsg(run.check_run_args, args(*argv))
            self.assertEqual(code, EXIT_USAGE, argv)
            self.assertIn(want, msg)

    def test_build_mpi_command_writes_its_files(self):
        tmp = tempfile.mkdtemp(prefix="netlab-unit-")
        self.addCleanup(shutil.rmtree, tmp, True)
        st = run_state()
        with mock.patch.object(state, "STATE_DIR", tmp), \
             mock.patch.object(run, "runtime_dir", lambda n: os.path.join(tmp, n)), \
             mock.patch.object(run.shutil, "which", lambda t: "/opt/bin/" + t):
            cmd, env, hf = run.build_mpi_command(st, "mpich", 2, 1, HOSTS[:2], ["p"], [])
        self.assertEqual(hf, os.path.join(tmp, "hnx", "hostfile.mpich.%d" % os.getpid()))
        with open(hf) as f:
            self.assertEqual(f.read(), "hnx-h0:1\nhnx-h1:1\n")
        self.assertEqual(cmd[:5], ["/opt/bin/mpiexec.mpich", "-launcher", "ssh",
                                   "-launcher-exec", os.path.join(tmp, "hnx", "ssh-standin")])
        self.assertEqual((env["UCX_TLS"], env["UCX_NET_DEVICES"]), ("tcp,self", "eth0"))
        self.assertEqual(env.get("PATH"), os.environ.get("PATH"))  # the caller's environment


class TestStandin(unittest.TestCase):
    """The ssh stand-in, run with a fake `ip` first on PATH that prints its arguments."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="netlab-unit-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        with open(os.path.join(self.tmp, "ip"), "w") as f:
            f.write('#!/bin/sh\nfor a in "$@"; do printf "[%s]" "$a"; done\necho\n')
        os.chmod(os.path.join(self.tmp, "ip"), 0o755)
        self.script = os.path.join(self.tmp, "ssh-standin")
        with open(self.script, "w") as f:
            f.write(run.standin_text(run_state()))
        os.chmod(self.script, 0o755)

    def call(self, *argv):
        env = dict(os.environ, PATH=self.tmp + os.pathsep + os.environ.get("PATH", ""))
        return subprocess.run([self.script] + list(argv), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=30)

    def test_runs_in_the_host_namespace(self):
        # Hydra puts ssh-style flags (-x, -p 22) before the host name
        p = self.call("-x", "-p", "22", "root@hnx-h2", "echo", "hi")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(),
                         "[netns][exec][hnx-h2][unshare][--uts][sh][-c]"
                         "[hostname \"$NETLAB_HOST\" && exec sh -c \"$0\"][echo hi]")

    def test_refuses_other_hosts(self):
        for host in ("otherhost", "hnx-h", "hnx-h4"):
            p = self.call(host, "true")
            self.assertEqual(p.returncode, 255)
            self.assertIn("'%s' is not a host of lab hnx" % host, p.stderr)
        p = self.call("-x")
        self.assertEqual((p.returncode, p.stderr.strip()), (255, "netlab stand-in: no host given"))


# ----------------------------------------------------------------------------- command line

class TestCommandLine(unittest.TestCase):
    def main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            try:
                rc = cli.main(list(argv))
            except SystemExit as e:     # argparse errors and --help
                rc = e.code
        return rc, out.getvalue(), err.getvalue()

    def test_not_root(self):
        with mock.patch.object(base.os, "geteuid", lambda: 1000):
            for argv in (["status"], ["up", "cluster"], ["down", "--all"], ["doctor"]):
                rc, out, err = self.main(*argv)
                self.assertEqual(rc, EXIT_ENV, argv)
                self.assertIn("netlab: error: must run as root", err)

    def test_usage(self):
        self.assertEqual(self.main()[0], EXIT_USAGE)
        rc, out, err = self.main("up", "--hosts", "x")
        self.assertEqual(rc, 2)
        self.assertIn("argument --hosts: invalid int value: 'x'", err)
        rc, out, err = self.main("run", "--mpi", "lam")
        self.assertEqual(rc, 2)
        self.assertIn("argument --mpi: invalid choice: 'lam'", err)

    def test_help_everywhere(self):
        for cmd in ("up", "down", "status", "run", "calibrate", "doctor"):
            rc, out, err = self.main(cmd, "--help")
            self.assertEqual(rc, 0, cmd)
            self.assertIn("usage: netlab " + cmd, out)
        rc, out, err = self.main("--help")
        self.assertNotIn("_flow", out)              # internal helper stays out of the list
        rc, out, err = self.main("bogus")           # ... and out of an error's list
        self.assertEqual(rc, 2)
        self.assertNotIn("_flow", err)

    def test_conventions(self):
        """docs/tools.md: --version anywhere before "--", --name=value, old names that warn."""
        for argv in (["--version"], ["up", "--version"], ["run", "--np", "2", "--version"]):
            rc, out, err = self.main(*argv)
            self.assertEqual((rc, err), (0, ""), argv)
            self.assertRegex(out, r"^netlab \(wirespeed\) \S+\n$")
        a = cli.parser().parse_args(["run", "--time-limit=7", "--", "prog", "--version"])
        self.assertEqual((a.timeout, a.program), (7.0, ["--", "prog", "--version"]))
        err = io.StringIO()
        with redirect_stderr(err):
            a = cli.parser().parse_args(["run", "--timeout", "9", "--timeout=8"])
            b = cli.parser().parse_args(["up", "cluster", "--rate=5mbit"])
            c = cli.parser().parse_args(["fault", "rate", "h1", "--rate", "5mbit"])
        self.assertEqual((a.timeout, b.rate, c.rate), (8.0, "5mbit", "5mbit"))
        self.assertEqual(err.getvalue().count("netlab: warning: --timeout is deprecated, use "
                                              "--time-limit\n"), 1)
        self.assertEqual(err.getvalue().count("--rate is deprecated, use --link-rate"), 2)
        self.assertEqual(cli.parser().parse_args(["run"]).timeout, 600)
        tmp = tempfile.mkdtemp(prefix="netlab-unit-")
        self.addCleanup(shutil.rmtree, tmp, True)
        f = os.path.join(tmp, "out.json")
        base.json_out(f, {"a": 1})
        base.json_out(f, {"b": [2]})
        self.assertEqual([json.loads(x) for x in open(f)], [{"a": 1}, {"b": [2]}])  # appended
        self.assertEqual(cli.parser().parse_args(["status", "--json"]).json, "")  # old form

    def test_calibrate_arguments(self):
        def args(*argv):
            return cli.parser().parse_args(["calibrate"] + list(argv))
        self.assertEqual(traffic.check_calibrate_args(args("--only", "ring,a2a")), {"ring", "a2a"})
        self.assertIsNone(traffic.check_calibrate_args(args()))
        for argv, want in ((["--only", "ring,bogus"], "--only: unknown test 'bogus'"),
                           (["--seconds", "0"], "--seconds must be at least 1 (got 0)"),
                           (["--streams", "0"], "--streams must be at least 1 (got 0)")):
            self.assertEqual(errmsg(traffic.check_calibrate_args, args(*argv))[0], EXIT_USAGE)
            self.assertIn(want, errmsg(traffic.check_calibrate_args, args(*argv))[1])

    def test_launcher(self):
        p = subprocess.run([sys.executable, LAUNCHER, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        for cmd in ("up", "down", "status", "run", "calibrate", "doctor"):
            self.assertIn("    %s" % cmd, p.stdout)
        p = subprocess.run([LAUNCHER, "up", "--link-rate"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("argument --link-rate: expected one argument", p.stderr)

    def test_flow_helper_on_loopback(self):
        """The all-to-all helper exactly as `calibrate` starts it inside a host namespace
        (traffic.run_flows), run here without the namespace on 127.0.0.1: it must connect,
        move bytes and report them as JSON."""
        started = []

        class FakePopen:
            def __init__(self, argv, **kw):
                started.append((argv, kw.get("env")))

            def communicate(self, timeout=None):
                return '{"rx_bps": 1, "tx_bps": 1, "failed": []}\n', ""

            def poll(self):
                return 0
        with mock.patch.object(traffic.subprocess, "Popen", FakePopen):
            res = traffic.run_flows(run_state(), {"hnx-h0": ["10.231.7.2"]}, 3)
        self.assertEqual(res, {"hnx-h0": {"rx_bps": 1, "tx_bps": 1, "failed": []}})
        (argv, env), = started
        self.assertEqual(argv[:8], ["ip", "netns", "exec", "hnx-h0", sys.executable, "-m",
                                    "netlab", "_flow"])
        opts = dict(zip(argv[8::2], argv[9::2]))
        self.assertEqual({k: v for k, v in opts.items() if k != "--start"},
                         {"--port": "5301", "--dests": "10.231.7.2", "--warmup": "1.0",
                          "--seconds": "3"})
        self.assertEqual(env["PYTHONPATH"].split(os.pathsep)[0], os.path.join(ROOT, "lab"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        opts.update({"--port": str(port), "--dests": "127.0.0.1", "--warmup": "0.2",
                     "--seconds": "0.3", "--start": repr(time.time())})
        p = subprocess.run(argv[4:8] + [x for kv in opts.items() for x in kv],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           timeout=60, cwd=self.tmpdir())
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(r["failed"], [])
        self.assertGreater(r["rx_bps"], 0)
        self.assertGreater(r["tx_bps"], 0)

    def tmpdir(self):
        d = tempfile.mkdtemp(prefix="netlab-unit-")
        self.addCleanup(shutil.rmtree, d, True)
        return d


if __name__ == "__main__":
    unittest.main()
