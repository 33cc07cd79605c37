# SPDX-License-Identifier: BSD-3-Clause
"""What a lab is asked to be: profile defaults, rates, spec file and options, TCP congestion
control, and the hetero profile's pair-rate classes. Nothing here touches the machine except
reading which congestion controls the kernel offers."""

import json
import os
import random
import re

from .base import EXIT_ENV, EXIT_USAGE, LabError

DEFAULTS = {
    "cluster": {"hosts": 8, "rate": "100mbit"},
    "twosite": {"hosts": 8, "rate": "100mbit", "wan_rate": "100mbit", "flow_cap": "20mbit"},
    "cloud": {"hosts": 8, "rate": "100mbit", "flow_cap": "20mbit"},
    "hetero": {"hosts": 8, "rate": "100mbit", "seed": 1,
               "classes": "1,0.5,0.25,0.1", "weights": "0.4,0.3,0.2,0.1"},
}
PROFILES = tuple(DEFAULTS)
for _d in DEFAULTS.values():
    _d["tcp_cc"] = "cubic"  # every profile (see below)
# TCP congestion control of the hosts' connections. The lab sets it on the hosts' routes
# (`ip route ... congctl`), which needs no change outside the lab: a namespace may only make
# an algorithm its default if the root namespace's tcp_allowed_congestion_control lists it.
# cubic is Linux's default and what clusters run; a machine may default to another (bbr, say,
# whose loss-blind probing retransmits much of what it sends on the lab's shallow tbf queues:
# docs/netlab.md). "default" leaves the machine's.
TCP_CC_AVAILABLE = "/proc/sys/net/ipv4/tcp_available_congestion_control"
TCP_CC_DEFAULT = "/proc/sys/net/ipv4/tcp_congestion_control"

_RATE_UNITS = {"": 1, "bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
               "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9}


def parse_rate(text):
    """tc-style rate ("100mbit", "1gbit", "500kbit", "2500000bit", "12mbps") -> bit/s."""
    if isinstance(text, (int, float)):
        return int(text)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(text))
    if not m:
        raise LabError("cannot parse rate %r (use e.g. 100mbit)" % text, EXIT_USAGE)
    num = float(m.group(1))
    unit = m.group(2).lower()
    if unit not in _RATE_UNITS:
        raise LabError("unknown rate unit in %r" % text, EXIT_USAGE)
    bps = int(num * _RATE_UNITS[unit])
    if bps < 100000:
        raise LabError("rate %r is below 100kbit" % text, EXIT_USAGE)
    return bps


def fmt_rate(bps):
    if bps >= 1e9 and bps % 1e9 == 0:
        return "%dgbit" % (bps // 1e9)
    if bps >= 1e6 and bps % 1e6 == 0:
        return "%dmbit" % (bps // 1e6)
    if bps >= 1e3 and bps % 1e3 == 0:
        return "%dkbit" % (bps // 1e3)
    return "%dbit" % bps


# Latency, jitter and loss (the delay line, lab/netlab/delayline.c): given or absent, never a
# profile default, so that a lab without them is built as before. DELAY_KEYS are every host's
# link (each host's egress), WAN_DELAY_KEYS twosite's WAN (both directions).
DELAY_KEYS = ("delay", "jitter", "loss")
WAN_DELAY_KEYS = ("wan_delay", "wan_jitter", "wan_loss")
MAX_DELAY_NS = 10 * 10**9            # the delay line's own bound, for delay and jitter alike
_TIME_UNITS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9}


def parse_duration(text):
    """tc-style time ("10ms", "500us", "1.5ms", "2s", "0") -> whole nanoseconds."""
    if isinstance(text, int) and text == 0:
        return 0
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-z]*)\s*", str(text))
    if not m or (m.group(2) not in _TIME_UNITS and not (m.group(2) == "" and
                                                        float(m.group(1)) == 0)):
        raise LabError("cannot parse time %r (use e.g. 10ms, 500us, 0)" % (text,), EXIT_USAGE)
    ns = int(round(float(m.group(1)) * _TIME_UNITS.get(m.group(2), 1)))
    if ns > MAX_DELAY_NS:
        raise LabError("time %r is above 10s" % (text,), EXIT_USAGE)
    return ns


def parse_loss(text):
    """A loss probability: "0.1%" or "0.001" -> 0.001, in [0, 1)."""
    t = str(text).strip()
    try:
        p = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise LabError("cannot parse loss %r (use e.g. 0.1%% or 0.001)" % (text,), EXIT_USAGE)
    if not 0 <= p < 1:
        raise LabError("loss %r is not in [0, 1)" % (text,), EXIT_USAGE)
    return p


def fmt_duration(ns):
    """Nanoseconds as the largest tc-style unit that shows them exactly: 10ms, 1.5ms, 250ns."""
    if not ns:
        return "0"
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1)):
        if ns >= scale:
            return "%g%s" % (ns / scale, unit)


def _option_delay(key, value):
    """parse_duration / parse_loss with the option's name in the message."""
    try:
        return parse_loss(value) if key.endswith("loss") else parse_duration(value)
    except LabError as e:
        raise LabError("--%s: %s" % (key.replace("_", "-"), e), e.code)


def delay_line_ports(params):
    """Which links go through the delay line: (hosts, wan) as booleans."""
    return (any(k in params for k in DELAY_KEYS),
            any(k in params for k in WAN_DELAY_KEYS))


def _option_rate(key, value):
    """parse_rate with the option's name in the message (the NIC rate B, params["rate"], is
    --link-rate on the command line)."""
    try:
        return parse_rate(value)
    except LabError as e:
        raise LabError("--%s: %s" % ("link-rate" if key == "rate" else key.replace("_", "-"), e),
                       e.code)


def _option_int(key, value):
    try:
        return int(value)
    except (TypeError, ValueError):
        raise LabError("--%s: %r is not a whole number" % (key.replace("_", "-"), value),
                       EXIT_USAGE)


def hetero_classes(params):
    """The hetero profile's rate classes (fractions of B in (0, 1]) and their weights."""
    def floats(key):
        try:
            return [float(x) for x in str(params[key]).split(",")]
        except ValueError:
            raise LabError("hetero: --%s: %r is not a comma list of numbers"
                           % (key, params[key]), EXIT_USAGE)
    classes, weights = floats("classes"), floats("weights")
    if len(classes) != len(weights) or not all(0 < c <= 1 for c in classes):
        raise LabError("hetero: --classes (fractions of B in (0,1]) and --weights must have "
                       "the same length", EXIT_USAGE)
    if any(w < 0 for w in weights) or not sum(weights) > 0:
        raise LabError("hetero: --weights must be >= 0 and not all 0 (got %s)"
                       % params["weights"], EXIT_USAGE)
    return classes, weights


def hetero_matrix(n, seed, classes, weights):
    """Symmetric n x n matrix of pair rates as fractions of B, drawn from a seeded generator
    (the diagonal is 1 and unused)."""
    rng = random.Random(seed)
    m = [[1.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            f = rng.choices(classes, weights=weights)[0]
            m[i][j] = m[j][i] = f
    return m


def check_tcp_cc(cc):
    """The --tcp-cc value if this kernel offers it (or "default"), else a usage error."""
    try:
        with open(TCP_CC_AVAILABLE) as f:
            avail = f.read().split()
        with open(TCP_CC_DEFAULT) as f:
            mine = f.read().strip()
    except OSError as e:
        raise LabError("--tcp-cc: cannot read the kernel's congestion controls (%s)" % e,
                       EXIT_ENV)
    if cc != "default" and cc not in avail:
        raise LabError("--tcp-cc: %r is not a TCP congestion control this kernel has loaded "
                       "(available: %s; or \"default\" for the machine's own, %s)"
                       % (cc, " ".join(avail), mine), EXIT_USAGE)
    return cc


def merge_params(args, environ=None, tcp_cc_check=check_tcp_cc):
    """Profile, parameters and lab name of `netlab up`: the profile's defaults, then the spec
    file (--spec), then the command-line options. Returns (profile, params, name)."""
    environ = os.environ if environ is None else environ
    spec = {}
    if getattr(args, "spec", None):
        try:
            with open(args.spec) as f:
                spec = json.load(f)
        except OSError as e:
            raise LabError("--spec: cannot read %s (%s)" % (args.spec, e.strerror), EXIT_USAGE)
        except ValueError as e:
            raise LabError("--spec: %s is not JSON (%s)" % (args.spec, e), EXIT_USAGE)
        if not isinstance(spec, dict):
            raise LabError("spec file must hold a JSON object", EXIT_USAGE)
    profile = getattr(args, "profile", None) or spec.get("profile")
    if profile not in DEFAULTS:
        raise LabError("profile must be one of %s (got %r)" % (", ".join(PROFILES), profile),
                       EXIT_USAGE)
    params = dict(DEFAULTS[profile])
    delay_keys = DELAY_KEYS + (WAN_DELAY_KEYS if profile == "twosite" else ())
    for k in list(spec):
        kk = k.replace("-", "_")
        if kk in ("profile", "name"):
            continue
        if kk in delay_keys:
            params[kk] = spec[k]
            continue
        if kk not in params:
            raise LabError("spec key %r is not an option of profile %s" % (k, profile),
                           EXIT_USAGE)
        params[kk] = spec[k]
    for k in params:
        v = getattr(args, k, None)
        if v is not None:
            params[k] = v
    for k in DELAY_KEYS + WAN_DELAY_KEYS:
        v = getattr(args, k, None)
        if v is not None and k not in delay_keys:
            raise LabError("--%s is an option of the twosite profile only" % k.replace("_", "-"),
                           EXIT_USAGE)
        if v is not None:
            params[k] = v
        if k in params:
            params[k] = _option_delay(k, params[k])
    for k in ("rate", "wan_rate", "flow_cap"):
        if k in params:
            params[k] = _option_rate(k, params[k])
    params["hosts"] = _option_int("hosts", params["hosts"])
    if (getattr(args, "tcp_cc", None) is None and environ.get("NETLAB_TCP_CC") and
            not {"tcp_cc", "tcp-cc"} & set(spec)):
        params["tcp_cc"] = environ["NETLAB_TCP_CC"]  # for scripts that call `up` (bench/)
    params["tcp_cc"] = tcp_cc_check(str(params["tcp_cc"]))
    if "seed" in params:
        params["seed"] = _option_int("seed", params["seed"])
    if profile == "hetero":
        hetero_classes(params)      # refuse bad classes before anything is created
    if profile == "twosite" and params["flow_cap"] > params["wan_rate"]:
        raise LabError("twosite: --flow-cap must not exceed --wan-rate", EXIT_USAGE)
    if profile == "cloud" and params["flow_cap"] > params["rate"]:
        raise LabError("cloud: --flow-cap must not exceed --link-rate", EXIT_USAGE)
    name = getattr(args, "name", None) or spec.get("name")
    return profile, params, name
