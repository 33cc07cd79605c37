#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The calibration between sites recovers a SimGrid platform's rates:
wsp-info --model (under WSP_SITES) gives beta_wan, one connection's time per
byte, within 10% of the route's bottleneck (a NIC), and beta_wan_link, the
link's, within 10% of the WAN's, as the platform generator describes them.
SMPI's message-size factors are set to 1 and the WAN carries each direction
on a link of its own, so that the simulated network is the plain
latency-plus-bytes network the platform describes. (SMPI has neither TCP's
ramp nor its losses; what those add to a stream over a real WAN, the slope of
two streams leaves out: docs/results/sites.md.)

    wan_calibration.py SMPIRUN WSP_INFO WORKDIR [small|large]

small (the default): two sites of 4 hosts with NICs of 25 Mbit/s and a WAN of
50 Mbit/s at 10 ms. large: the second source's scale, two sites of 64 with
NICs of 1 Gbit/s and a WAN of 10 Gbit/s at 10 ms, once under each of SMPI's
Open MPI and MPICH selectors: there 64 pairs stream at once, each for a few
ms against a round trip of 20 ms, and the link's figure once depended on
when the MPI's collectives let each pair go (docs/results/sites.md, "The
link's calibration at 64 pairs").
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


SHAPES = {
    "small": {"hosts": 8, "bw": "25Mbps", "wan_bw": "50Mbps",
              "cfgs": [["--cfg=smpi/send-is-detached-thresh:0"]]},
    "large": {"hosts": 128, "bw": "1Gbps", "wan_bw": "10Gbps",
              "cfgs": [["--cfg=smpi/coll-selector:ompi"], ["--cfg=smpi/coll-selector:mpich"]]},
}


def check(smpirun, info, work, shape, cfg):
    """One wsp-info --model run; returns the number of figures off by more than TOLERANCE."""
    n = shape["hosts"]
    plat, hosts, desc, out = (os.path.join(work, f) for f in
                              ("twosite.xml", "twosite.hosts", "twosite.json", "model.json"))
    subprocess.run([sys.executable, os.path.join(ROOT, "lab", "simgrid", "wsp_platform.py"),
                    "twosite", "--hosts", str(n), "--bw", shape["bw"], "--lat", "50us",
                    "--wan-bw", shape["wan_bw"], "--wan-lat", "10ms", "--wan-duplex", "split",
                    "-o", plat, "--hostfile", hosts, "--describe", desc], check=True)
    if os.path.exists(out):
        os.remove(out)
    half = n // 2
    env = dict(os.environ, WSP_SITES="ranks:0-%d;%d-%d" % (half - 1, half, n - 1))
    subprocess.run([smpirun, "-np", str(n), "-platform", plat, "-hostfile", hosts] + cfg +
                   ["--cfg=smpi/grow-injected-times:no",
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
    # Rank i of site 0 streams to rank i of site 1.
    one = wsp_platform.path(platform, names[0], names[half])[1]
    link = min(half * one, platform["wan"]["bw_Bps"])
    failures = 0
    for what, got, rate in (("beta_wan", model["beta_wan"], one),
                            ("beta_wan_link", model["beta_wan_link"], link)):
        want = 1 / rate
        ok = got > 0 and abs(got / want - 1) <= TOLERANCE
        failures += not ok
        print(f"{'ok' if ok else 'FAIL'}: {n} hosts {' '.join(cfg)}: {what} {got:.4g} s/B, "
              f"the platform's {want:.4g} s/B ({got / want:.3f}x)", flush=True)
    return failures


def main(smpirun, info, work, shape="small"):
    if shape not in SHAPES:
        sys.exit("wan_calibration.py: shape must be one of %s, not %r" % (", ".join(SHAPES), shape))
    os.makedirs(work, exist_ok=True)
    failures = sum(check(smpirun, info, work, SHAPES[shape], cfg) for cfg in SHAPES[shape]["cfgs"])
    print(f"wan_calibration: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
