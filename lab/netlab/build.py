# SPDX-License-Identifier: BSD-3-Clause
"""Making and removing a lab: namespaces, veth pairs, bridges, routes and the tc shaping of
each profile (cluster, twosite, hetero, cloud). Every object is recorded in the state file before it
is created; teardown removes exactly what the state file lists."""

import contextlib
import ipaddress
import os
import shutil
import signal

from .base import (EXIT_ENV, LabError, ip, kill_ns_pids, list_links, list_netns, nsexec,
                   run_cmd, tc, tc_batch)
from . import delay as delayline
from .params import delay_line_ports, fmt_rate, hetero_classes, hetero_matrix
from .state import address_plan, runtime_dir, save_state, state_lock, state_path

# tbf's queue bound: the longest a packet may wait in a shaped NIC's queue before it is dropped.
TBF_LATENCY = "10ms"


def _burst(bps, floor):
    """2 ms worth of tokens at bps, at least floor bytes (a full frame fits either way)."""
    return max(floor, int(bps / 8 * 0.002))


def tbf_args(dev, bps):
    """`tc qdisc` arguments of a NIC shaped to bps."""
    return ["qdisc", "replace", "dev", dev, "root", "handle", "1:", "tbf",
            "rate", fmt_rate(bps), "burst", str(_burst(bps, 8192)), "latency", TBF_LATENCY]


# A TCP flow's leaf among the FLOW_LEAVES of a per-flow cap: its two ports summed, halved and
# taken modulo the leaves. One host's connections to one listening port differ only in their own
# port; sockets that connect() without binding first got ports of one parity a few apart here, and
# such ports land in distinct leaves while they differ modulo 2 x FLOW_LEAVES. The low bits of each
# port, which this replaced, left half the buckets unused and put lanes of one pair in one leaf
# (docs/results/netlab.md, "The per-flow cap's leaves").
FLOW_LEAVES = 1024
FLOW_LEAF_BASE = 0x1000


def flow_leaf(sport, dport):
    """The htb leaf (minor class id) that flowcap_lines' classifier gives a TCP flow."""
    return FLOW_LEAF_BASE + ((sport + dport) >> 1) % FLOW_LEAVES


def flowcap_bpf():
    """Classic BPF (tc's `bytecode` form) of the per-flow classifier: for an IPv4 TCP packet
    that is not a later fragment, return class 1:flow_leaf(sport, dport); else 0 (no match:
    htb's default class). tc runs it with the packet from its Ethernet header on."""
    none = 16
    prog = [(0x28, 0, 0, 12),                 # ldh [12]: ethertype
            (0x15, 0, none - 2, 0x0800),      # jeq IPv4
            (0x30, 0, 0, 23),                 # ldb [23]: IP protocol
            (0x15, 0, none - 4, 6),           # jeq TCP
            (0x28, 0, 0, 20),                 # ldh [20]: flags and fragment offset
            (0x45, none - 6, 0, 0x1fff),      # jset: a later fragment has no ports
            (0xb1, 0, 0, 14),                 # ldxb 4*([14]&0xf): IP header length
            (0x48, 0, 0, 14),                 # ldh [x+14]: source port
            (0x02, 0, 0, 0),                  # st M[0]
            (0x48, 0, 0, 16),                 # ldh [x+16]: destination port
            (0x61, 0, 0, 0),                  # ldx M[0]
            (0x0c, 0, 0, 0),                  # add x
            (0x74, 0, 0, 1),                  # rsh #1
            (0x54, 0, 0, FLOW_LEAVES - 1),    # and: modulo the leaves
            (0x04, 0, 0, (1 << 16) | FLOW_LEAF_BASE),  # add: class 1:base
            (0x16, 0, 0, 0),                  # ret a
            (0x06, 0, 0, 0)]                  # none: ret #0
    assert len(prog) == none + 1 and FLOW_LEAVES & (FLOW_LEAVES - 1) == 0
    return "%d,%s" % (len(prog), ",".join("%d %d %d %d" % i for i in prog))


def flowcap_lines(dev, wan_bps, flow_bps):
    """tc batch of a link whose TCP flows are capped (a twosite WAN direction, a cloud host's
    egress): htb parent class W; FLOW_LEAVES leaf classes with ceil F, one per TCP flow as
    flow_leaf picks it (a classic BPF classifier, flowcap_bpf). Leaves have a small assured
    rate so that the parent (W) really bounds the aggregate; each borrows up to F. Traffic
    other than TCP goes to a default class (up to W)."""
    leaf_rate = max(100000, wan_bps // (FLOW_LEAVES * 2))
    burst = _burst(wan_bps, 8192)
    fburst = _burst(flow_bps, 4096)
    lines = ["qdisc replace dev %s root handle 1: htb default 2" % dev,
             "class add dev %s parent 1: classid 1:1 htb rate %dbit ceil %dbit burst %d "
             "cburst %d" % (dev, wan_bps, wan_bps, burst, burst),
             # unclassified traffic (ARP, ICMP, non-TCP): shares the WAN, no per-flow cap
             "class add dev %s parent 1:1 classid 1:2 htb rate %dbit ceil %dbit quantum 1514"
             % (dev, leaf_rate, wan_bps)]
    for k in range(FLOW_LEAVES):
        lines.append("class add dev %s parent 1:1 classid 1:%x htb rate %dbit ceil %dbit "
                     "burst %d cburst %d quantum 1514"
                     % (dev, FLOW_LEAF_BASE + k, leaf_rate, flow_bps, fburst, fburst))
    lines.append("filter add dev %s parent 1: prio 1 protocol ip bpf bytecode '%s'"
                 % (dev, flowcap_bpf()))
    return lines


def pairs_lines(dev, nic_bps, dests):
    """tc batch of a hetero host's egress: htb parent = NIC rate, one leaf per destination IP
    (u32 match on the destination) with ceil = that pair's rate. dests: [(ip, bit/s)]."""
    n = max(1, len(dests))
    leaf_rate = max(100000, nic_bps // (n * 4))
    burst = _burst(nic_bps, 8192)
    lines = ["qdisc replace dev %s root handle 1: htb default 2" % dev,
             "class add dev %s parent 1: classid 1:1 htb rate %dbit ceil %dbit burst %d cburst %d"
             % (dev, nic_bps, nic_bps, burst, burst),
             "class add dev %s parent 1:1 classid 1:2 htb rate %dbit ceil %dbit quantum 1514"
             % (dev, leaf_rate, nic_bps)]
    for k, (dst_ip, bps) in enumerate(dests):
        cid = 0x10 + k
        fb = _burst(bps, 4096)
        lines.append("class add dev %s parent 1:1 classid 1:%x htb rate %dbit ceil %dbit "
                     "burst %d cburst %d quantum 1514"
                     % (dev, cid, min(leaf_rate, bps), bps, fb, fb))
        lines.append("filter add dev %s parent 1: prio 1 protocol ip u32 "
                     "match ip dst %s/32 flowid 1:%x" % (dev, dst_ip, cid))
    return lines


class Builder:
    def __init__(self, st):
        self.st = st
        self.pre = st["prefix"]
        self.delay_hosts, self.delay_wan = delay_line_ports(st["params"])
        self.ports = []     # links through the delay line, joined to it by finish()

    def add_ns(self, short):
        ns = self.pre + short
        # test hooks: simulate a crash (SIGKILL, nothing cleaned up) or an error (rollback)
        # once this many namespaces exist
        k = len(self.st["created"]["netns"])
        if os.environ.get("NETLAB_TEST_CRASH_AFTER") == str(k):
            os.kill(os.getpid(), signal.SIGKILL)
        if os.environ.get("NETLAB_TEST_FAIL_AFTER") == str(k):
            raise LabError("NETLAB_TEST_FAIL_AFTER=%d reached (test hook)" % k)
        self.st["created"]["netns"].append(ns)
        save_state(self.st)                         # record intent before acting
        run_cmd(["ip", "netns", "add", ns])
        # no IPv6 inside the lab: no router solicitations, no link-local chatter
        nsexec(ns, ["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                    "net.ipv6.conf.default.disable_ipv6=1"], check=False)
        ip(ns, "link", "set", "lo", "up")
        return ns

    def add_root_veth(self, short, peer_ns, peer_name):
        dev = self.pre + short
        assert len(dev) <= 15
        self.st["created"]["links"].append(dev)
        save_state(self.st)
        run_cmd(["ip", "link", "add", dev, "type", "veth", "peer", "name", peer_name,
                 "netns", peer_ns])
        try:
            with open("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % dev, "w") as f:
                f.write("1")
        except OSError:
            pass
        return dev

    def veth(self, ns_a, name_a, ns_b, name_b):
        assert len(name_a) <= 15 and len(name_b) <= 15
        run_cmd(["ip", "link", "add", name_a, "netns", ns_a, "type", "veth",
                 "peer", "name", name_b, "netns", ns_b])

    def bridge(self, ns, br):
        ip(ns, "link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0")
        ip(ns, "link", "set", br, "up")

    def shape_tbf(self, ns, dev, bps, role, host=None):
        tc(ns, *tbf_args(dev, bps))
        self.st["shaped"].append({"ns": ns, "dev": dev, "kind": "tbf", "rate": bps,
                                  "role": role, "host": host})

    def shape_flowcap(self, ns, dev, wan_bps, flow_bps, role, host=None):
        tc_batch(ns, flowcap_lines(dev, wan_bps, flow_bps))
        self.st["shaped"].append({"ns": ns, "dev": dev, "kind": "htb-flowcap", "rate": wan_bps,
                                  "flow_cap": flow_bps, "flow_classes": FLOW_LEAVES,
                                  "role": role, "host": host})

    def shape_pairs(self, ns, dev, nic_bps, dests, role, host):
        tc_batch(ns, pairs_lines(dev, nic_bps, dests))
        self.st["shaped"].append({"ns": ns, "dev": dev, "kind": "htb-pairs", "rate": nic_bps,
                                  "role": role, "host": host})

    def add_host(self, i, sw_ns, br, hp, egress=None):
        """Host namespace h<i> with eth0 <-> <pre>h<i> on bridge br in sw_ns; hp is the host's
        entry of the address plan."""
        addr, plen, routes = hp["ip"], hp["plen"], hp["routes"]
        ns = self.add_ns("h%d" % i)
        swdev = "%sh%d" % (self.pre, i)
        self.veth(ns, "eth0", sw_ns, swdev)
        if self.delay_hosts:
            # The host's port reaches the bridge through the delay line: the host's egress
            # pays the delay, jitter and loss, so a round trip between two hosts pays 2 x delay.
            p = self.st["params"]
            self.ports.append({"ns": sw_ns, "dev": swdev, "tap": "%st%d" % (self.pre, i),
                               "br": br, "back": delayline.direction(),
                               "out": delayline.direction(p.get("delay", 0),
                                                          p.get("jitter", 0),
                                                          p.get("loss", 0.0))})
            delayline.offloads_off(ns, "eth0")
        else:
            ip(sw_ns, "link", "set", swdev, "master", br, "up")
        ip(ns, "addr", "add", "%s/%d" % (addr, plen), "dev", "eth0")
        ip(ns, "link", "set", "eth0", "up")
        cc = self.st["params"].get("tcp_cc", "default")
        congctl = [] if cc == "default" else ["congctl", cc]
        if congctl:
            # the routes the kernel made for the address: the subnet's and the host's own
            prefix = ipaddress.ip_interface("%s/%d" % (addr, plen)).network.with_prefixlen
            ip(ns, "route", "replace", prefix, "dev", "eth0", "proto", "kernel", "scope", "link",
               "src", addr, *congctl)
            ip(ns, "route", "replace", "local", addr, "dev", "eth0", "table", "local", "proto",
               "kernel", "scope", "host", "src", addr, *congctl)
        for net, via in routes:
            ip(ns, "route", "add", net, "via", via, "dev", "eth0", *congctl)
        h = {"name": "h%d" % i, "ns": ns, "ip": addr, "swdev": swdev, "sw_ns": sw_ns}
        if hp.get("site") is not None:
            h["site"] = hp["site"]
        self.st["hosts"].append(h)
        rate = self.st["params"]["rate"]
        if egress is None:
            self.shape_tbf(ns, "eth0", rate, "host-egress", h["name"])
        else:
            egress(ns, "eth0", h)
        self.shape_tbf(sw_ns, swdev, rate, "host-ingress", h["name"])
        save_state(self.st)
        return h

    def root_port(self, sw_ns, br, rp):
        """The root namespace's one port on the lab: <pre>r, with the plan's address/routes."""
        rdev = self.add_root_veth("r", sw_ns, self.pre + "rs")
        ip(sw_ns, "link", "set", self.pre + "rs", "master", br, "up")
        ip(None, "addr", "add", "%s/%d" % (rp["ip"], rp["plen"]), "dev", rdev)
        ip(None, "link", "set", rdev, "up")
        for net, via in rp["routes"]:
            ip(None, "route", "add", net, "via", via, "dev", rdev)
        self.st["root_ip"] = rp["ip"]
        self.st["root_dev"] = rdev
        if self.delay_hosts or self.delay_wan:
            delayline.offloads_off(None, rdev)
        save_state(self.st)

    def finish(self):
        """Starts the delay line when the lab has links through it."""
        if self.ports:
            rd = runtime_dir(self.st["name"])
            os.makedirs(rd, exist_ok=True)
            delayline.start(self.st, self.ports, os.path.join(rd, "delayline.log"))
            save_state(self.st)


def build_cluster(b):
    st = b.st
    plan = address_plan("cluster", st["index"], st["params"]["hosts"])
    sw = b.add_ns("sw0")
    br = b.pre + "br0"
    b.bridge(sw, br)
    b.root_port(sw, br, plan["root"])
    for i, hp in enumerate(plan["hosts"]):
        b.add_host(i, sw, br, hp)


def build_twosite(b):
    st = b.st
    p = st["params"]
    plan = address_plan("twosite", st["index"], p["hosts"])
    r = plan["router"]
    sw0 = b.add_ns("sw0")
    sw1 = b.add_ns("sw1")
    br0, br1 = b.pre + "br0", b.pre + "br1"
    b.bridge(sw0, br0)
    b.bridge(sw1, br1)
    rt = b.add_ns("rt")
    b.veth(rt, "eth0", sw0, b.pre + "ra")
    b.veth(rt, "eth1", sw1, b.pre + "rb")
    ip(sw0, "link", "set", b.pre + "ra", "master", br0, "up")
    if b.delay_wan:
        # The router's leg into site B reaches its bridge through the delay line: the WAN's
        # delay, jitter and loss, in both directions.
        wan = delayline.direction(p.get("wan_delay", 0), p.get("wan_jitter", 0),
                                  p.get("wan_loss", 0.0))
        b.ports.append({"ns": sw1, "dev": b.pre + "rb", "tap": b.pre + "tw", "br": br1,
                        "out": wan, "back": wan})
    else:
        ip(sw1, "link", "set", b.pre + "rb", "master", br1, "up")
    ip(rt, "addr", "add", r["ip_a"] + "/25", "dev", "eth0")
    ip(rt, "addr", "add", r["ip_b"] + "/25", "dev", "eth1")
    ip(rt, "link", "set", "eth0", "up")
    ip(rt, "link", "set", "eth1", "up")
    if b.delay_hosts or b.delay_wan:
        delayline.offloads_off(rt, "eth0")
        delayline.offloads_off(rt, "eth1")
    nsexec(rt, ["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])  # inside the router ns only
    # WAN: both directions through the router are capped at W, each TCP flow at F
    b.shape_flowcap(rt, "eth1", p["wan_rate"], p["flow_cap"], "wan-a-to-b")
    b.shape_flowcap(rt, "eth0", p["wan_rate"], p["flow_cap"], "wan-b-to-a")
    st["router"] = {"ns": rt, "ip_a": r["ip_a"], "ip_b": r["ip_b"]}
    b.root_port(sw0, br0, plan["root"])
    for i, hp in enumerate(plan["hosts"]):
        if hp["site"] == 0:
            b.add_host(i, sw0, br0, hp)
        else:
            b.add_host(i, sw1, br1, hp)
    save_state(st)


def build_hetero(b):
    st = b.st
    p = st["params"]
    n = p["hosts"]
    plan = address_plan("hetero", st["index"], n)
    classes, weights = hetero_classes(p)
    m = hetero_matrix(n, p["seed"], classes, weights)
    st["matrix"] = m
    sw = b.add_ns("sw0")
    br = b.pre + "br0"
    b.bridge(sw, br)
    b.root_port(sw, br, plan["root"])
    rate = p["rate"]
    for i, hp in enumerate(plan["hosts"]):
        def egress(ns, dev, h, i=i):
            dests = [(plan["hosts"][j]["ip"], int(rate * m[i][j])) for j in range(n) if j != i]
            b.shape_pairs(ns, dev, rate, dests, "host-egress", h["name"])
        b.add_host(i, sw, br, hp, egress=egress)


def build_cloud(b):
    """A cluster whose every TCP flow leaving a host is capped at F below the NIC rate B (the
    shape of a cloud outside a placement group: one flow gets F, several together get B). The
    host's egress is the twosite WAN's per-flow htb with W = B; its ingress is the tbf of every
    profile."""
    st = b.st
    p = st["params"]
    plan = address_plan("cloud", st["index"], p["hosts"])
    sw = b.add_ns("sw0")
    br = b.pre + "br0"
    b.bridge(sw, br)
    b.root_port(sw, br, plan["root"])
    for i, hp in enumerate(plan["hosts"]):
        def egress(ns, dev, h):
            b.shape_flowcap(ns, dev, p["rate"], p["flow_cap"], "host-egress", h["name"])
        b.add_host(i, sw, br, hp, egress=egress)


BUILDERS = {"cluster": build_cluster, "twosite": build_twosite, "hetero": build_hetero,
            "cloud": build_cloud}


def teardown(st, scan=False):
    """Remove the lab's recorded namespaces and root-namespace links (with scan, also those
    named with its prefix but missing from the record), after ending the processes inside.
    Under the state lock: a lab's watcher (owner.py) and a `netlab down` left running by its
    killed owner may remove the same lab at once, and the second then finds nothing left."""
    with state_lock():
        _teardown(st, scan)


def _teardown(st, scan):
    pre = st["prefix"]
    ns_list = [n for n in st.get("created", {}).get("netns", []) if n.startswith(pre)]
    links = [l for l in st.get("created", {}).get("links", []) if l.startswith(pre)]
    if scan:    # recovery mode: also objects named with this lab's prefix missing from state
        ns_list += [n for n in list_netns() if n.startswith(pre) and n not in ns_list]
        links += [l for l in list_links() if l.startswith(pre) and l not in links]
    existing_ns = set(list_netns())
    kill_ns_pids([n for n in ns_list if n in existing_ns])
    delayline.stop(st)      # it lives in the first switch's namespace: normally ended above
    existing_links = set(list_links())
    errors = []
    for l in links:
        if l in existing_links:
            p = ip(None, "link", "del", l, check=False)
            if p.returncode != 0 and l in set(list_links()):
                errors.append("link %s: %s" % (l, p.stderr.strip()))
    for n in reversed(ns_list):
        if n in existing_ns:
            p = run_cmd(["ip", "netns", "del", n], check=False)
            if p.returncode != 0:
                errors.append("netns %s: %s" % (n, p.stderr.strip()))
    rd = runtime_dir(st["name"])
    if os.path.isdir(rd):
        shutil.rmtree(rd, ignore_errors=True)
    if errors:
        raise LabError("down incomplete:\n  " + "\n  ".join(errors))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(state_path(st["name"]))


def doctor():
    """Check that namespaces, veth, bridge, tbf, htb, u32 and bpf work here (LabError EXIT_ENV if
    not); returns which of the tools netlab's users need are installed."""
    probe = "wlprobe%d-x" % os.getpid()
    p = run_cmd(["ip", "netns", "add", probe], check=False)
    if p.returncode != 0:
        raise LabError("cannot create a network namespace: %s" % p.stderr.strip(), EXIT_ENV)
    try:
        ip(probe, "link", "add", "d0", "type", "veth", "peer", "name", "d1")
        tc(probe, "qdisc", "replace", "dev", "d0", "root", "handle", "1:", "tbf", "rate",
           "10mbit", "burst", "8k", "latency", "10ms")
        tc(probe, "qdisc", "replace", "dev", "d1", "root", "handle", "1:", "htb", "default", "1")
        tc(probe, "filter", "add", "dev", "d1", "parent", "1:", "protocol", "ip", "u32",
           "match", "ip", "dst", "10.231.0.1/32", "flowid", "1:1")
        tc(probe, "filter", "add", "dev", "d1", "parent", "1:", "prio", "2", "protocol", "ip",
           "bpf", "bytecode", flowcap_bpf())
        ip(probe, "link", "add", "b0", "type", "bridge")
    except LabError as e:
        raise LabError("namespace probe failed: %s" % e, EXIT_ENV)
    finally:
        run_cmd(["ip", "netns", "del", probe], check=False)
    return {t: bool(shutil.which(t)) for t in ("iperf3", "ping", "ethtool", "cc", "mpirun",
                                                 "mpicc", "mpiexec.mpich", "mpicc.mpich")}
