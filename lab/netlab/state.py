# SPDX-License-Identifier: BSD-3-Clause
"""What a lab owns: its name and object prefix, its addresses, and the state file
/run/netlab/<name>.json that records every object before it is created (so that `down`
removes exactly what exists, also after a crash). Choosing a free name and /24 happens here,
under a lock shared by all netlab processes."""

import contextlib
import fcntl
import json
import os
import re
import time

from .base import EXIT_USAGE, LabError, list_links, list_netns, run_cmd

STATE_DIR = "/run/netlab"
ADDR_BLOCK = "10.231.0.0/16"
ADDR_BASE = "10.231"
NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,7}$")
# Hosts a profile can address in its /24: .254 (and twosite's .125/.126/.254) belong to the
# root namespace and the router, twosite's two sites are /25 halves.
HOST_RANGE = {"cluster": (1, 250), "twosite": (2, 248), "hetero": (2, 250), "cloud": (2, 250)}


def check_name(name):
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise LabError("lab name must match %s (got %r)" % (NAME_RE.pattern, name), EXIT_USAGE)
    return name


def check_hosts(profile, n):
    lo, hi = HOST_RANGE[profile]
    if not lo <= n <= hi:
        raise LabError("%s: --hosts must be %d..%d" % (profile, lo, hi), EXIT_USAGE)
    return n


# ----------------------------------------------------------------------------- addresses

def addr(index, host_octet):
    """Address <host_octet> of lab <index>'s /24."""
    return "%s.%d.%d" % (ADDR_BASE, index, host_octet)


def subnet(index):
    return "%s.%d.0/24" % (ADDR_BASE, index)


def address_plan(profile, index, n):
    """Every address and route of a lab: {"subnet", "root": {ip, plen, routes}, "hosts":
    [{ip, plen, routes, site}], "router" (twosite only)}; routes are [(network, via)].

    cluster, hetero, cloud: one /24, hosts .1.., the root namespace .254.
    twosite: site A = the lower /25 (first half of the hosts, .1..), site B = the upper /25
    (.129..); the router has .126 in A and .254 in B; the root namespace sits in A at .125
    with a route to B through the router, as every host has to the other site."""
    if not 1 <= index <= 254:
        raise LabError("lab index %r is outside 1..254" % index)
    check_hosts(profile, n)
    plan = {"subnet": subnet(index), "hosts": []}
    if profile in ("cluster", "hetero", "cloud"):
        plan["root"] = {"ip": addr(index, 254), "plen": 24, "routes": []}
        for i in range(n):
            plan["hosts"].append({"ip": addr(index, 1 + i), "plen": 24, "routes": [],
                                  "site": None})
        return plan
    if profile != "twosite":
        raise LabError("unknown profile %r" % profile, EXIT_USAGE)
    na = (n + 1) // 2
    net_a = "%s.%d.0/25" % (ADDR_BASE, index)
    net_b = "%s.%d.128/25" % (ADDR_BASE, index)
    ra, rb = addr(index, 126), addr(index, 254)
    plan["router"] = {"ip_a": ra, "ip_b": rb, "net_a": net_a, "net_b": net_b}
    plan["root"] = {"ip": addr(index, 125), "plen": 25, "routes": [(net_b, ra)]}
    for i in range(n):
        if i < na:
            plan["hosts"].append({"ip": addr(index, 1 + i), "plen": 25,
                                  "routes": [(net_b, ra)], "site": 0})
        else:
            plan["hosts"].append({"ip": addr(index, 129 + i - na), "plen": 25,
                                  "routes": [(net_a, rb)], "site": 1})
    return plan


# ----------------------------------------------------------------------------- state file

def state_path(name):
    return os.path.join(STATE_DIR, name + ".json")


def runtime_dir(name):
    return os.path.join(STATE_DIR, name)


def new_state(name, index, profile, params):
    """The state of a lab about to be built (nothing created yet)."""
    return {"name": name, "prefix": name + "-", "index": index, "profile": profile,
            "params": params, "subnet": subnet(index),
            "status": "creating", "pid": os.getpid(), "created_at": time.time(),
            "created": {"netns": [], "links": []}, "hosts": [], "shaped": []}


def save_state(st):
    os.makedirs(STATE_DIR, exist_ok=True)
    path = state_path(st["name"])
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(st, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_state(name):
    try:
        with open(state_path(name)) as f:
            return json.load(f)
    except FileNotFoundError:
        raise LabError("no lab named %r (no state file %s)" % (name, state_path(name)))


def all_states():
    res = []
    if not os.path.isdir(STATE_DIR):
        return res
    for fn in sorted(os.listdir(STATE_DIR)):
        if fn.endswith(".json"):
            try:
                with open(os.path.join(STATE_DIR, fn)) as f:
                    res.append(json.load(f))
            except (OSError, ValueError):
                pass
    return res


@contextlib.contextmanager
def state_lock():
    os.makedirs(STATE_DIR, exist_ok=True)
    with open(os.path.join(STATE_DIR, ".lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def pick_lab(name):
    """Resolve --name for down/status/run/calibrate: explicit, or the only lab present."""
    if name:
        return load_state(name)
    sts = all_states()
    if len(sts) == 1:
        return sts[0]
    if not sts:
        raise LabError("no lab is up (use `netlab up PROFILE`)")
    raise LabError("several labs are up (%s): give --name" % ", ".join(s["name"] for s in sts),
                   EXIT_USAGE)


def used_indices():
    used = set()
    for st in all_states():
        used.add(st.get("index"))
    # addresses present in the root namespace from the 10.231/16 block count as used too
    p = run_cmd(["ip", "-j", "-4", "addr", "show"], check=False)
    try:
        for link in json.loads(p.stdout or "[]"):
            for a in link.get("addr_info", []):
                parts = a.get("local", "").split(".")
                if len(parts) == 4 and parts[0] + "." + parts[1] == ADDR_BASE:
                    used.add(int(parts[2]))
    except ValueError:
        pass
    return used


def allocate(name):
    """Pick (name, index) under the lock: the first /24 no other lab uses, and for a lab
    without --name the first wl<index> whose prefix names nothing on the machine."""
    used = used_indices()
    existing_ns = list_netns()
    existing_links = list_links()
    index = None
    for i in range(1, 255):
        if i in used:
            continue
        if name is None:
            cand = "wl%d" % i
            pre = cand + "-"
            if os.path.exists(state_path(cand)) or \
               any(n.startswith(pre) for n in existing_ns + existing_links):
                continue
            name = cand
        index = i
        break
    if index is None:
        raise LabError("no free /24 left in %s" % ADDR_BLOCK)
    check_name(name)
    pre = name + "-"
    if os.path.exists(state_path(name)):
        raise LabError("lab %r already exists (state file %s); `netlab down --name %s` first"
                       % (name, state_path(name), name))
    clash = [n for n in existing_ns + existing_links if n.startswith(pre)]
    if clash:
        raise LabError("objects with prefix %r already exist (%s); refusing to reuse it"
                       % (pre, ", ".join(clash[:5])))
    return name, index
