#!/usr/bin/env python3
"""Slow one lane of each striped communicator on a netlab twosite lab.

Run while wsp-bench p2p holds after its set-up (bench/p2p_netlab.sh). The
lanes are the TCP connections from host 0 to host 1 that share a listening
port, four or more of them (MPI's own connections are fewer). For each such
group, one lane whose htb leaf in the router (site A to B) no other lane
uses gets its ceiling lowered to --factor of the per-flow cap. Prints, per
group, the sum of its lanes' rates: each distinct leaf carries the cap (the
slowed one its share), the WAN bounds the total, and TCP's goodput is at
most 1448/1514 of the shaped rate.
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


def leaf(sport, dport):
    nb = build.FLOW_BUCKETS
    return 0x1000 + (sport % nb) * nb + (dport % nb)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--name", required=True, help="the lab")
    ap.add_argument("--cap", required=True, help="the per-flow cap F (tc rate)")
    ap.add_argument("--wan", required=True, help="the WAN rate W (tc rate)")
    ap.add_argument("--factor", type=float, default=0.25, help="slowed lane's share of F")
    a = ap.parse_args()
    cap = params.parse_rate(a.cap)
    wan = params.parse_rate(a.wan)
    h0, rt = a.name + "-h0", a.name + "-rt"
    conns = connections(h0)
    groups = collections.defaultdict(list)
    for c in conns:
        groups[(c[2], c[3])].append(c)
    lanes = {k: sorted(v, key=lambda c: c[1]) for k, v in groups.items() if len(v) >= 4}
    if not lanes:
        sys.exit("p2p_slow_lane: no group of 4 or more connections from %s" % h0)
    used = collections.Counter(leaf(c[1], c[3]) for g in lanes.values() for c in g)
    slow = int(cap * a.factor)
    leaf_rate = max(100000, wan // (build.FLOW_BUCKETS ** 2 * 2))
    burst = build._burst(slow, 4096)
    for (addr, port), g in sorted(lanes.items()):
        pick = next((c for c in g if used[leaf(c[1], c[3])] == 1), None)
        if pick is None:
            print("group %s:%d: %d lanes, every leaf shared; none slowed" % (addr, port, len(g)))
            continue
        cls = leaf(pick[1], pick[3])
        subprocess.run(["ip", "netns", "exec", rt, "tc", "class", "change", "dev", "eth1",
                        "parent", "1:1", "classid", "1:%x" % cls, "htb", "rate",
                        "%dbit" % leaf_rate, "ceil", "%dbit" % slow, "burst", str(burst),
                        "cburst", str(burst), "quantum", "1514"], check=True)
        leaves = collections.Counter(leaf(c[1], c[3]) for c in g)
        total = sum(slow if lf == cls else cap for lf in leaves)
        total = min(total, wan) * GOODPUT
        print("group %s:%d: %d lanes on %d leaves; lane %d->%d (leaf 1:%x) slowed to %.1f "
              "Mbit/s; sum of the lanes' rates %.2f Mbit/s"
              % (addr, port, len(g), len(leaves), pick[1], pick[3], cls, slow / 1e6,
                 total / 1e6))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
