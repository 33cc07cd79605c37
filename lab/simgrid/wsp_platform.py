#!/usr/bin/env python3
"""Write a SimGrid platform (and hostfile) for wirespeed's simulations.

Profiles:
  cluster  N hosts, each with a NIC of --bw and --lat, on one non-blocking
           switch (the backbone is N x bw, so only NICs limit).
  twosite  two such clusters of N/2 hosts joined by a WAN link of --wan-bw
           and --wan-lat. SimGrid caps one flow at TCP-gamma / (2 x latency),
           which imitates window-limited TCP over a long link.

Example:
  wsp_platform.py cluster --hosts 256 --bw 1Gbps --lat 50us -o p.xml --hostfile h.txt
"""
import argparse
import re
import sys

UNITS = {"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "Bps": 8,
         "kBps": 8e3, "KBps": 8e3, "MBps": 8e6, "GBps": 8e9}


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


def bw_attr(bits):
    return f"{bits / 8:.0f}Bps"


def lat_attr(sec):
    return f"{sec * 1e6:.3f}us"


def cluster_xml(cid, prefix, first, count, bw, lat, indent="  "):
    return (f'{indent}<cluster id="{cid}" prefix="{prefix}" suffix="" '
            f'radical="{first}-{first + count - 1}" speed="1Gf" '
            f'bw="{bw_attr(bw)}" lat="{lat_attr(lat)}" '
            f'bb_bw="{bw_attr(bw * count)}" bb_lat="0us" '
            f'router_id="{cid}-router"/>\n')


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile", choices=["cluster", "twosite"])
    ap.add_argument("--hosts", type=int, default=64, help="number of hosts (default 64)")
    ap.add_argument("--bw", type=rate, default=rate("1Gbps"), help="NIC rate (default 1Gbps)")
    ap.add_argument("--lat", type=latency, default=latency("50us"),
                    help="NIC latency (default 50us)")
    ap.add_argument("--wan-bw", type=rate, default=rate("1Gbps"), help="twosite: WAN rate")
    ap.add_argument("--wan-lat", type=latency, default=latency("5ms"), help="twosite: WAN latency")
    ap.add_argument("-o", "--output", required=True, help="platform XML file to write")
    ap.add_argument("--hostfile", help="also write a hostfile, one host per line")
    a = ap.parse_args(argv)
    if a.hosts < 1 or a.hosts > 100000:
        ap.error(f"--hosts {a.hosts}: must be in [1, 100000]")
    if a.profile == "twosite" and a.hosts < 2:
        ap.error("--hosts: twosite needs at least 2 hosts")

    hosts = [f"h{i}" for i in range(a.hosts)]
    out = ["<?xml version='1.0'?>\n",
           '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n',
           '<platform version="4.1">\n']
    if a.profile == "cluster":
        out.append(cluster_xml("c0", "h", 0, a.hosts, a.bw, a.lat))
    else:
        half = a.hosts // 2
        out.append('  <zone id="world" routing="Full">\n')
        out.append(cluster_xml("c0", "h", 0, half, a.bw, a.lat, "    "))
        out.append(cluster_xml("c1", "h", half, a.hosts - half, a.bw, a.lat, "    "))
        out.append(f'    <link id="wan" bandwidth="{bw_attr(a.wan_bw)}" '
                   f'latency="{lat_attr(a.wan_lat)}"/>\n')
        out.append('    <zoneRoute src="c0" dst="c1" gw_src="c0-router" '
                   'gw_dst="c1-router"><link_ctn id="wan"/></zoneRoute>\n')
        out.append("  </zone>\n")
    out.append("</platform>\n")
    with open(a.output, "w") as f:
        f.writelines(out)
    if a.hostfile:
        with open(a.hostfile, "w") as f:
            f.write("\n".join(hosts) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
