#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Slow one data lane of each striped communicator on a netlab twosite lab.

Run while wsp-bench p2p holds after its set-up (bench/p2p_netlab.sh): its
log names, per communicator, the sender's ports of the data lanes a message
uses ("# lane ports of ..."). For each, one lane whose htb leaf in the
router (site A to B) no other lane uses gets its ceiling lowered to
--factor of the per-flow cap. Prints, per communicator, the sum of its data
lanes' rates: each distinct leaf carries the cap (the slowed one its
share), the WAN bounds the total, and TCP's goodput is at most 1448/1514
of the shaped rate.
"""
import argparse
import collections
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab"))
from netlab import build, params  # noqa: E402

GOODPUT = 1448 / 1514


def connections(ns):
    out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tnH", "state", "established"],
                         check=True, capture_output=True, text=True).stdout
    conns = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 4:
            continue
        local, peer = f[-2], f[-1]
        laddr, lport = local.rsplit(":", 1)
        paddr, pport = peer.rsplit(":", 1)
        conns.append((laddr, int(lport), paddr, int(pport)))
    return conns


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--name", required=True, help="the lab")
    ap.add_argument("--cap", required=True, help="the per-flow cap F (tc rate)")
    ap.add_argument("--wan", required=True, help="the WAN rate W (tc rate)")
    ap.add_argument("--factor", type=float, default=0.25, help="slowed lane's share of F")
    ap.add_argument("--log", required=True, help="wsp-bench p2p's output (its lane ports)")
    a = ap.parse_args()
    cap = params.parse_rate(a.cap)
    wan = params.parse_rate(a.wan)
    h0, rt = a.name + "-h0", a.name + "-rt"
    groups = []
    with open(a.log) as f:
        for line in f:
            if line.startswith("# lane ports of "):
                what, rest = line[len("# lane ports of "):].split(":", 1)
                data = rest.split("data", 1)[1].strip()
                groups.append((what, [int(x) for x in data.split(",") if x]))
    if not groups:
        sys.exit("p2p_slow_lane: no '# lane ports' line in %s" % a.log)
    dport = {c[1]: c[3] for c in connections(h0)}
    used = collections.Counter(build.flow_leaf(c[1], c[3]) for c in connections(h0))
    slow = int(cap * a.factor)
    leaf_rate = max(100000, wan // (build.FLOW_LEAVES * 2))
    burst = build._burst(slow, 4096)
    for what, ports in groups:
        lanes = [(p, dport[p]) for p in ports if p in dport]
        pick = next((c for c in lanes if used[build.flow_leaf(*c)] == 1), None)
        if pick is None:
            print("%s: %d data lanes, every leaf shared; none slowed" % (what, len(lanes)))
            continue
        cls = build.flow_leaf(*pick)
        subprocess.run(["ip", "netns", "exec", rt, "tc", "class", "change", "dev", "eth1",
                        "parent", "1:1", "classid", "1:%x" % cls, "htb", "rate",
                        "%dbit" % leaf_rate, "ceil", "%dbit" % slow, "burst", str(burst),
                        "cburst", str(burst), "quantum", "1514"], check=True)
        leaves = collections.Counter(build.flow_leaf(*c) for c in lanes)
        total = sum(slow if lf == cls else cap for lf in leaves)
        total = min(total, wan) * GOODPUT
        print("%s: %d data lanes on %d leaves; lane %d->%d (leaf 1:%x) slowed to %.1f "
              "Mbit/s; sum of the lanes' rates %.2f Mbit/s"
              % (what, len(lanes), len(leaves), pick[0], pick[1], cls, slow / 1e6,
                 total / 1e6))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
