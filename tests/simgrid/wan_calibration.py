#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The calibration between sites recovers a SimGrid platform's rates: on two
sites of 4 hosts with NICs of 25 Mbit/s and a WAN of 50 Mbit/s at 10 ms,
wsp-info --model (under WSP_SITES) gives beta_wan, one connection's time per
byte, within 10% of the route's bottleneck (a NIC), and beta_wan_link, the
link's, within 10% of the WAN's, as the platform generator describes them.
SMPI's message-size factors are set to 1 and the WAN carries each direction
on a link of its own, so that the simulated network is the plain
latency-plus-bytes network the platform describes. (SMPI has neither TCP's
ramp nor its losses; what those add to a stream over a real WAN, the slope of
two streams leaves out: docs/results/sites.md.)

    wan_calibration.py SMPIRUN WSP_INFO WORKDIR
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "lab", "simgrid"))
import wsp_platform  # noqa: E402

TOLERANCE = 0.10


def main(smpirun, info, work):
    os.makedirs(work, exist_ok=True)
    plat, hosts, desc, out = (os.path.join(work, f) for f in
                              ("twosite.xml", "twosite.hosts", "twosite.json", "model.json"))
    subprocess.run([sys.executable, os.path.join(ROOT, "lab", "simgrid", "wsp_platform.py"),
                    "twosite", "--hosts", "8", "--bw", "25Mbps", "--lat", "50us", "--wan-bw",
                    "50Mbps", "--wan-lat", "10ms", "--wan-duplex", "split", "-o", plat,
                    "--hostfile", hosts, "--describe", desc], check=True)
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, WSP_SITES="ranks:0-3;4-7")
    subprocess.run([smpirun, "-np", "8", "-platform", plat, "-hostfile", hosts,
                    "--cfg=smpi/send-is-detached-thresh:0", "--cfg=smpi/grow-injected-times:no",
                    "--cfg=smpi/iprobe:1e-6", "--cfg=smpi/test:1e-6",
                    "--cfg=smpi/simulate-computation:no", "--cfg=smpi/lat-factor:0:1",
                    "--cfg=smpi/bw-factor:0:1", "--log=root.thres:warning",
                    "--log=xbt_cfg.thres:warning", info, "--model", "--json", out, "--quiet"],
                   check=True, env=env)
    with open(desc) as f:
        platform = json.load(f)
    with open(out) as f:
        model = json.loads(f.readline())["model"]
    names = [line.split(":")[0].strip() for line in open(hosts) if line.strip()]
    # Rank i of site 0 (ranks 0-3) streams to rank i of site 1 (ranks 4-7).
    one = wsp_platform.path(platform, names[0], names[4])[1]
    link = min(4 * one, platform["wan"]["bw_Bps"])
    failures = 0
    for what, got, rate in (("beta_wan", model["beta_wan"], one),
                            ("beta_wan_link", model["beta_wan_link"], link)):
        want = 1 / rate
        ok = got > 0 and abs(got / want - 1) <= TOLERANCE
        failures += not ok
        print(f"{'ok' if ok else 'FAIL'}: {what} {got:.4g} s/B, the platform's {want:.4g} s/B "
              f"({got / want:.3f}x)")
    print(f"wan_calibration: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
