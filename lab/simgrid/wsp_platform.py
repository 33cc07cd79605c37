#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write a SimGrid platform (and hostfile) for wirespeed's simulations.

Profiles:
  cluster  N hosts, each with a NIC of --bw and --lat, on one non-blocking
           switch (the backbone is N x bw, so only NICs limit).
  twosite  two such clusters of N/2 hosts joined by a WAN link of --wan-bw
           and --wan-lat, each site's switch non-blocking for the flows
           across too (a FATPIPE backbone). SimGrid caps one flow at
           TCP-gamma / (2 x latency), which imitates window-limited TCP
           over a long link. The WAN is one
           link that both directions share (--wan-duplex shared, the default)
           or, with --wan-duplex split, --wan-bw in each direction, as a
           full-duplex wide-area circuit.
  racks    --racks R racks of --hosts-per-rack H hosts. Inside a rack the
           hosts' NICs (--bw, --lat) meet on a non-blocking switch; each rack
           has a full-duplex uplink to a non-blocking core switch, of
           --uplink-bw, or H x bw / --oversubscription (default 4), and of
           latency --uplink-lat. A route between racks crosses the sender's
           NIC, its rack's uplink, the other rack's uplink, the receiver's NIC.

Heterogeneity (every profile, drawn from --seed, default 1):
  --lat-spread F  each host's NIC latency is lat x F^u, u uniform in [0, 1)
                  (log-uniform between lat and lat x F), in whole nanoseconds.
  --slow-hosts K --slow-bw RATE
                  K hosts, chosen by the seed, have NICs of RATE.
  Without them cluster is written exactly as before, and twosite as before
  but for its sites' FATPIPE backbones (since 2026-12-01).

--describe FILE writes JSON: per host its rack (the zone it is in), NIC rate
and latency, as written into the platform; per rack its hosts and uplink.

Examples:
  wsp_platform.py cluster --hosts 256 --bw 1Gbps --lat 50us -o p.xml --hostfile h.txt
  wsp_platform.py racks --racks 4 --hosts-per-rack 16 --oversubscription 4 \\
      --uplink-lat 100us --lat-spread 3 --slow-hosts 2 --slow-bw 100Mbps --seed 7 \\
      -o r.xml --hostfile r.hosts --describe r.json
"""
import argparse
import json
import math
import random
import re
import sys

UNITS = {"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "Bps": 8,
         "kBps": 8e3, "KBps": 8e3, "MBps": 8e6, "GBps": 8e9}

MAX_HOSTS = 100000
# A racks platform has R x (R - 1) routes between racks in one Full zone.
MAX_RACKS = 256
DEFAULT_OVERSUBSCRIPTION = 4.0


def rate(text):
    """'1Gbps' -> bits per second (float). Also accepts '125MBps'."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([kKMG]?B?bps|[kKMG]?Bps|[kKMG]?bit)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a rate (examples: 1Gbps, 100Mbps, 125MBps)")
    num, unit = float(m.group(1)), m.group(2)
    unit = unit.replace("bit", "bps")
    key = unit if unit in UNITS else unit.lower()
    if key not in UNITS:
        raise argparse.ArgumentTypeError(f"unknown unit in {text!r}")
    value = num * UNITS[key]
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: rate must be positive")
    return value


def latency(text):
    m = re.fullmatch(r"\s*([0-9.]+)\s*(s|ms|us|ns)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a latency (examples: 50us, 5ms)")
    return float(m.group(1)) * {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[m.group(2)]


def number(text):
    """A finite decimal number ('4', '2.5')."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number")
    return value


def integer(text):
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def bw_attr(bits):
    return f"{bits / 8:.0f}Bps"


def lat_attr(sec):
    return f"{sec * 1e6:.3f}us"


def bw_written(bits):
    """The rate in bytes/s exactly as bw_attr writes it into the platform."""
    return int(bw_attr(bits)[:-3])


def lat_written(sec):
    """The latency in seconds exactly as lat_attr writes it into the platform."""
    return round(float(lat_attr(sec)[:-2]) * 1e3) / 1e9


def cluster_xml(cid, prefix, first, count, bw, lat, indent="  ", fatpipe=False):
    """A SimGrid cluster. Its backbone (bb_bw) is one link that every flow
    between two of its hosts, or between one of them and the outside,
    crosses once, in either direction (SimGrid shares it as one link). Alone,
    N hosts cannot load it past N x bw; a site of twosite can, for the flows
    from the other site cross it too. So twosite's sites get fatpipe: a
    backbone that gives each flow its rate without sharing, the
    non-blocking switch the profile describes (docs/results/simgrid.md,
    "sites_chain against its cost")."""
    policy = ' bb_sharing_policy="FATPIPE"' if fatpipe else ""
    return (f'{indent}<cluster id="{cid}" prefix="{prefix}" suffix="" '
            f'radical="{first}-{first + count - 1}" speed="1Gf" '
            f'bw="{bw_attr(bw)}" lat="{lat_attr(lat)}" '
            f'bb_bw="{bw_attr(bw * count)}" bb_lat="0us"{policy} '
            f'router_id="{cid}-router"/>\n')


def zone_xml(zid, hosts, indent):
    """A rack (or site) whose hosts each have their own NIC: a Cluster zone
    without a backbone (a non-blocking switch), its router as the gateway,
    and per host an up link (host to switch) and a down link (switch to
    host) of the host's rate and latency, i.e. a full-duplex NIC."""
    ind = indent + "  "
    out = [f'{indent}<zone id="{zid}" routing="Cluster">\n',
           f'{ind}<router id="{zid}-router"/>\n']
    for h in hosts:
        name, bw, lat = h["name"], bw_attr(h["bw"]), lat_attr(h["lat"])
        out.append(f'{ind}<host id="{name}" speed="1Gf"/>\n')
        for d in ("up", "down"):
            out.append(f'{ind}<link id="{name}-{d}" bandwidth="{bw}" latency="{lat}"/>\n')
        out.append(f'{ind}<host_link id="{name}" up="{name}-up" down="{name}-down"/>\n')
    out.append(f"{indent}</zone>\n")
    return out


def draw(n, lat, spread, slow_hosts, seed):
    """Per-host NIC latencies (seconds) and the set of slow host indices.

    Only random.random() is used, whose sequence for a seed Python keeps
    the same across versions, so a seed gives the same platform everywhere.
    The n latencies are drawn first, so --slow-hosts does not move them."""
    rng = random.Random(seed)
    lo = round(lat * 1e9)
    hi = max(lo, math.floor(lat * spread * 1e9 + 1e-6))
    lats = []
    for _ in range(n):
        ns = round(lo * spread ** rng.random())
        lats.append(min(max(ns, lo), hi) * 1e-9)
    order = list(range(n))
    for i in range(slow_hosts):         # partial Fisher-Yates
        j = i + int(rng.random() * (n - i))
        order[i], order[j] = order[j], order[i]
    return lats, set(order[:slow_hosts])


def layout(a):
    """[(zone id, [host dicts])]: the racks or sites and their hosts."""
    if a.profile == "racks":
        sizes = [(f"rack{r}", a.hosts_per_rack) for r in range(a.racks)]
    elif a.profile == "twosite":
        sizes = [("c0", a.hosts // 2), ("c1", a.hosts - a.hosts // 2)]
    else:
        sizes = [("c0", a.hosts)]
    n = sum(k for _, k in sizes)
    lats, slow = draw(n, a.lat, a.lat_spread, a.slow_hosts, a.seed)
    zones, i = [], 0
    for zid, k in sizes:
        hosts = []
        for _ in range(k):
            hosts.append({"name": f"h{i}", "rack": zid, "bw": a.slow_bw if i in slow else a.bw,
                          "lat": lats[i], "slow": i in slow})
            i += 1
        zones.append((zid, hosts))
    return zones


def heterogeneous(a):
    return a.lat_spread != 1 or a.slow_hosts > 0


def platform_xml(a, zones):
    out = ["<?xml version='1.0'?>\n",
           '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n',
           '<platform version="4.1">\n']
    if a.profile == "cluster" and not heterogeneous(a):
        out.append(cluster_xml("c0", "h", 0, a.hosts, a.bw, a.lat))
    elif a.profile == "cluster":
        out += zone_xml("c0", zones[0][1], "  ")
    elif a.profile == "twosite":
        half = a.hosts // 2
        out.append('  <zone id="world" routing="Full">\n')
        if heterogeneous(a):
            out += zone_xml("c0", zones[0][1], "    ")
            out += zone_xml("c1", zones[1][1], "    ")
        else:
            out.append(cluster_xml("c0", "h", 0, half, a.bw, a.lat, "    ", fatpipe=True))
            out.append(cluster_xml("c1", "h", half, a.hosts - half, a.bw, a.lat, "    ",
                                   fatpipe=True))
        if a.wan_duplex == "split":
            # SPLITDUPLEX makes wan_UP and wan_DOWN, one per direction.
            out.append(f'    <link id="wan" bandwidth="{bw_attr(a.wan_bw)}" '
                       f'latency="{lat_attr(a.wan_lat)}" sharing_policy="SPLITDUPLEX"/>\n')
            for src, dst, way in (("c0", "c1", "UP"), ("c1", "c0", "DOWN")):
                out.append(f'    <zoneRoute src="{src}" dst="{dst}" gw_src="{src}-router" '
                           f'gw_dst="{dst}-router" symmetrical="NO">'
                           f'<link_ctn id="wan" direction="{way}"/></zoneRoute>\n')
        else:
            out.append(f'    <link id="wan" bandwidth="{bw_attr(a.wan_bw)}" '
                       f'latency="{lat_attr(a.wan_lat)}"/>\n')
            out.append('    <zoneRoute src="c0" dst="c1" gw_src="c0-router" '
                       'gw_dst="c1-router"><link_ctn id="wan"/></zoneRoute>\n')
        out.append("  </zone>\n")
    else:
        # The core switch is non-blocking: between racks only the two
        # uplinks (each one link per direction) are in the way.
        out.append('  <zone id="world" routing="Full">\n')
        for zid, hosts in zones:
            out += zone_xml(zid, hosts, "    ")
        up_bw, up_lat = bw_attr(a.uplink_bw), lat_attr(a.uplink_lat)
        for zid, _ in zones:
            for d in ("up", "down"):
                out.append(f'    <link id="{zid}-{d}" bandwidth="{up_bw}" latency="{up_lat}"/>\n')
        for src, _ in zones:
            for dst, _ in zones:
                if src != dst:
                    out.append(f'    <zoneRoute src="{src}" dst="{dst}" gw_src="{src}-router" '
                               f'gw_dst="{dst}-router" symmetrical="NO">'
                               f'<link_ctn id="{src}-up"/><link_ctn id="{dst}-down"/>'
                               '</zoneRoute>\n')
        out.append("  </zone>\n")
    out.append("</platform>\n")
    return out


def describe(a, zones):
    """What the platform says, for comparison with what is measured: rates in
    bytes/s and latencies in seconds as written into the XML."""
    d = {"format": "wsp-platform", "version": 1, "profile": a.profile,
         "seed": a.seed if heterogeneous(a) else None,
         "lat_spread": a.lat_spread, "slow_hosts": a.slow_hosts,
         "hosts": [], "racks": []}
    for zid, hosts in zones:
        rack = {"id": zid, "hosts": [h["name"] for h in hosts]}
        if a.profile == "racks":
            rack["uplink_bw_Bps"] = bw_written(a.uplink_bw)
            rack["uplink_lat_s"] = lat_written(a.uplink_lat)
        d["racks"].append(rack)
        for h in hosts:
            d["hosts"].append({"name": h["name"], "rack": zid, "bw_Bps": bw_written(h["bw"]),
                               "lat_s": lat_written(h["lat"]), "slow": h["slow"]})
    if a.profile == "twosite":
        d["wan"] = {"bw_Bps": bw_written(a.wan_bw), "lat_s": lat_written(a.wan_lat),
                    "duplex": a.wan_duplex}
    return d


def path(desc, src, dst):
    """The one-way route latency (s) and bottleneck rate (bytes/s, with no
    other traffic) between hosts src and dst of a --describe dictionary:
    the sender's NIC, then (between racks) the sender's rack uplink and the
    receiver's rack uplink, or (twosite, between sites) the WAN link, then
    the receiver's NIC. Not included: SimGrid's cap of one flow at
    TCP-gamma / (2 x this latency), and that the twosite WAN (unless
    --wan-duplex split) is one link for both directions, so a transfer
    shares it with its own acknowledgements
    (SimGrid's network/crosstraffic: 1/1.05 of the WAN rate for one flow)."""
    hosts = {h["name"]: h for h in desc["hosts"]}
    racks = {r["id"]: r for r in desc["racks"]}
    for name, what in ((src, "src"), (dst, "dst")):
        if name not in hosts:
            raise ValueError(f"{what}: no host {name!r} in the platform")
    a, b = hosts[src], hosts[dst]
    links = [(a["bw_Bps"], a["lat_s"]), (b["bw_Bps"], b["lat_s"])]
    if a["rack"] != b["rack"]:
        if desc["profile"] == "racks":
            for r in (racks[a["rack"]], racks[b["rack"]]):
                links.append((r["uplink_bw_Bps"], r["uplink_lat_s"]))
        elif desc["profile"] == "twosite":
            links.append((desc["wan"]["bw_Bps"], desc["wan"]["lat_s"]))
    return sum(lat for _, lat in links), min(bw for bw, _ in links)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile", choices=["cluster", "twosite", "racks"])
    ap.add_argument("--hosts", type=integer, help="cluster, twosite: number of hosts (default 64)")
    ap.add_argument("--bw", type=rate, default=rate("1Gbps"), help="NIC rate (default 1Gbps)")
    ap.add_argument("--lat", type=latency, default=latency("50us"),
                    help="NIC latency (default 50us)")
    ap.add_argument("--wan-bw", type=rate, help="twosite: WAN rate (default 1Gbps)")
    ap.add_argument("--wan-lat", type=latency, help="twosite: WAN latency (default 5ms)")
    ap.add_argument("--wan-duplex", choices=["shared", "split"],
                    help="twosite: one WAN link for both directions (shared, the default) "
                    "or --wan-bw each way (split)")
    ap.add_argument("--racks", type=integer, help="racks: number of racks (default 4)")
    ap.add_argument("--hosts-per-rack", type=integer, help="racks: hosts in a rack (default 16)")
    ap.add_argument("--uplink-bw", type=rate, help="racks: rate of a rack's uplink, each way")
    ap.add_argument("--oversubscription", type=number,
                    help="racks: uplink rate = hosts-per-rack x bw / this (default 4)")
    ap.add_argument("--uplink-lat", type=latency, help="racks: uplink latency (default 100us)")
    ap.add_argument("--lat-spread", type=number, default=1.0,
                    help="NIC latencies drawn log-uniform in [lat, lat x this] (default 1: none)")
    ap.add_argument("--slow-hosts", type=integer, default=0,
                    help="this many hosts, chosen by the seed, have NICs of --slow-bw")
    ap.add_argument("--slow-bw", type=rate, help="NIC rate of the slow hosts")
    ap.add_argument("--seed", type=integer, default=1,
                    help="seed of --lat-spread and --slow-hosts (default 1)")
    ap.add_argument("-o", "--output", required=True, help="platform XML file to write")
    ap.add_argument("--hostfile", help="also write a hostfile, one host per line")
    ap.add_argument("--describe", metavar="FILE",
                    help="also write the hosts' racks, NIC rates and latencies as JSON "
                    "(- = stdout)")
    a = ap.parse_args(argv)

    if a.profile == "racks":
        if a.hosts is not None:
            ap.error("--hosts: not an option of racks (it takes --racks and --hosts-per-rack)")
        for opt in ("wan_bw", "wan_lat", "wan_duplex"):
            if getattr(a, opt) is not None:
                ap.error(f"--{opt.replace('_', '-')}: not an option of racks (twosite only)")
        a.racks = 4 if a.racks is None else a.racks
        a.hosts_per_rack = 16 if a.hosts_per_rack is None else a.hosts_per_rack
        if not 1 <= a.racks <= MAX_RACKS:
            ap.error(f"--racks {a.racks}: must be in [1, {MAX_RACKS}]")
        if not 1 <= a.hosts_per_rack <= MAX_HOSTS:
            ap.error(f"--hosts-per-rack {a.hosts_per_rack}: must be in [1, {MAX_HOSTS}]")
        a.hosts = a.racks * a.hosts_per_rack
        if a.hosts > MAX_HOSTS:
            ap.error(f"--racks {a.racks} x --hosts-per-rack {a.hosts_per_rack}: "
                     f"{a.hosts} hosts, more than {MAX_HOSTS}")
        if a.uplink_bw is not None and a.oversubscription is not None:
            ap.error("--uplink-bw and --oversubscription: give one of them, not both")
        if a.oversubscription is not None and a.oversubscription <= 0:
            ap.error(f"--oversubscription {a.oversubscription:g}: must be positive")
        if a.uplink_bw is None:
            factor = a.oversubscription or DEFAULT_OVERSUBSCRIPTION
            a.uplink_bw = a.hosts_per_rack * a.bw / factor
            if bw_written(a.uplink_bw) < 1:
                ap.error(f"--oversubscription {factor:g}: leaves the uplink under 1 byte/s")
        a.uplink_lat = latency("100us") if a.uplink_lat is None else a.uplink_lat
    else:
        for opt in ("racks", "hosts_per_rack", "uplink_bw", "oversubscription", "uplink_lat"):
            if getattr(a, opt) is not None:
                ap.error(f"--{opt.replace('_', '-')}: only the racks profile has racks")
        a.hosts = 64 if a.hosts is None else a.hosts
        if a.hosts < 1 or a.hosts > MAX_HOSTS:
            ap.error(f"--hosts {a.hosts}: must be in [1, {MAX_HOSTS}]")
        if a.profile == "twosite" and a.hosts < 2:
            ap.error("--hosts: twosite needs at least 2 hosts")
        # cluster has always accepted and ignored --wan-bw and --wan-lat.
        a.wan_bw = rate("1Gbps") if a.wan_bw is None else a.wan_bw
        a.wan_lat = latency("5ms") if a.wan_lat is None else a.wan_lat
        if a.wan_duplex is not None and a.profile != "twosite":
            ap.error("--wan-duplex: only the twosite profile has a WAN")
        a.wan_duplex = a.wan_duplex or "shared"

    if a.lat_spread < 1:
        ap.error(f"--lat-spread {a.lat_spread:g}: must be at least 1 (1 = no spread)")
    if not 0 <= a.slow_hosts <= a.hosts:
        ap.error(f"--slow-hosts {a.slow_hosts}: must be in [0, {a.hosts}] (the number of hosts)")
    if a.slow_hosts > 0 and a.slow_bw is None:
        ap.error(f"--slow-hosts {a.slow_hosts}: needs --slow-bw, the slow hosts' NIC rate")
    if a.slow_bw is not None and a.slow_hosts == 0:
        ap.error("--slow-bw: given without --slow-hosts (how many hosts are slow)")
    if a.seed < 0:
        ap.error(f"--seed {a.seed}: must not be negative")
    return a


def main(argv=None):
    a = parse(argv)
    zones = layout(a)
    out = platform_xml(a, zones)
    with open(a.output, "w") as f:
        f.writelines(out)
    if a.hostfile:
        with open(a.hostfile, "w") as f:
            f.write("\n".join(h["name"] for _, hosts in zones for h in hosts) + "\n")
    if a.describe:
        text = json.dumps(describe(a, zones), indent=1) + "\n"
        if a.describe == "-":
            sys.stdout.write(text)
        else:
            with open(a.describe, "w") as f:
                f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
