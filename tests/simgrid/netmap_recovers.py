#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The network map's probe recovers a SimGrid platform: on 4 racks of 4 hosts
(uplinks 100 us, oversubscribed 2:1) whose NIC latencies spread over a factor
of 3, wsp-probe's one-way latency of every pair of hosts is within 10% of the
route's latency that the platform generator describes, and its groups are the
racks. SMPI's message-size factors are set to 1, so that the simulated network
is the plain latency-plus-bytes network the platform describes.

    netmap_recovers.py SMPIRUN WSP_PROBE WORKDIR
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "lab", "simgrid"))
import wsp_platform  # noqa: E402


def main(smpirun, probe, work):
    os.makedirs(work, exist_ok=True)
    plat, hosts, desc, out = (os.path.join(work, f) for f in
                              ("racks.xml", "racks.hosts", "racks.json", "netmap.json"))
    subprocess.run([sys.executable, os.path.join(ROOT, "lab", "simgrid", "wsp_platform.py"),
                    "racks", "--racks", "4", "--hosts-per-rack", "4", "--bw", "1Gbps",
                    "--lat", "20us", "--oversubscription", "2", "--uplink-lat", "100us",
                    "--lat-spread", "3", "--seed", "5", "-o", plat, "--hostfile", hosts,
                    "--describe", desc], check=True)
    subprocess.run([smpirun, "-np", "16", "-platform", plat, "-hostfile", hosts,
                    "--cfg=smpi/send-is-detached-thresh:0", "--cfg=smpi/grow-injected-times:no",
                    "--cfg=smpi/iprobe:1e-6", "--cfg=smpi/test:1e-6",
                    "--cfg=smpi/simulate-computation:no", "--cfg=smpi/lat-factor:0:1",
                    "--cfg=smpi/bw-factor:0:1", "--log=root.thres:warning",
                    "--log=xbt_cfg.thres:warning", probe, "--reps", "3", "--stream-bytes", "64K",
                    "--out", out], check=True)
    with open(desc) as f:
        platform = json.load(f)
    with open(out) as f:
        netmap = json.load(f)
    names = [line.split(":")[0].strip() for line in open(hosts) if line.strip()]
    failures = 0
    worst = 0.0
    for pair in netmap["pairs"]:
        a, b = pair["a"], pair["b"]
        lat, _ = wsp_platform.path(platform, names[a], names[b])
        err = abs(pair["latency_s"] / lat - 1)
        worst = max(worst, err)
        if err > 0.10:
            failures += 1
            print(f"FAIL: hosts {names[a]} and {names[b]}: latency {pair['latency_s']:.3g} s, "
                  f"the platform's {lat:.3g} s")
    racks = {h["name"]: h["rack"] for h in platform["hosts"]}
    # The same partition of the hosts: groups are numbered by their lowest
    # node, racks have names.
    number = {}
    want = [number.setdefault(racks[names[r]], len(number)) for r in range(len(names))]
    if netmap["groups"] != want:
        failures += 1
        print(f"FAIL: groups {netmap['groups']}, the racks {want}")
    print(f"netmap_recovers: {len(netmap['pairs'])} pairs, worst latency error {worst:.1%}, "
          f"{netmap['nodes']} nodes in {max(netmap['groups']) + 1} groups; {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
