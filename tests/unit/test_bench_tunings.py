#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/tunings, the hand tunings every benchmark compares against.

A name the MPI does not know is no tuning at all (Open MPI ignores an unknown
MCA parameter with a warning; MPICH aborts at MPI_Init on an unknown algorithm
name), so every NAME is checked against what the installed MPI reports about
itself: Open MPI's parameters and their enumerated values from `ompi_info`,
MPICH's control variables and their algorithm choices from `mpivars`. UCX's
variables are not checked (no ucx_info here). Then the shell helpers of
bench/netlab_args.sh must print exactly what this independent parse selects.
Exit 0 pass, 1 fail, 77 skip (an MPI's tool missing: that MPI is not checked).
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TUNINGS = os.path.join(ROOT, "bench", "tunings")
ARGS = os.path.join(ROOT, "bench", "netlab_args.sh")
errors = []


def parse():
    rows = []
    for n, line in enumerate(open(TUNINGS), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        f = line.split()
        where = "bench/tunings:%d" % n
        if len(f) < 6 or (len(f) - 4) % 2:
            errors.append("%s: expected MPI LABEL FOR BEST and NAME VALUE pairs: %r" % (where, line))
            continue
        mpi, label, what, best = f[:4]
        if mpi not in ("openmpi", "mpich"):
            errors.append("%s: MPI %r is neither openmpi nor mpich" % (where, mpi))
        for b in best.split(","):
            if b != "-" and not re.fullmatch(r"[a-z_]+@\d+x\d+", b):
                errors.append("%s: BEST %r is not COLLECTIVE@HOSTSxRANKS" % (where, b))
            elif b != "-" and b.split("@")[0] not in what.split(","):
                errors.append("%s: best for %s but not FOR it" % (where, b))
        pairs = list(zip(f[4::2], f[5::2]))
        rows.append(dict(mpi=mpi, label=label, what=what.split(","), best=best.split(","),
                         pairs=pairs, where=where))
    seen = set()
    for r in rows:
        if (r["mpi"], r["label"]) in seen:
            errors.append("%s: label %s twice for %s" % (r["where"], r["label"], r["mpi"]))
        seen.add((r["mpi"], r["label"]))
    for mpi in ("openmpi", "mpich"):
        for b in {b for r in rows if r["mpi"] == mpi for b in r["best"] if b != "-"}:
            n = sum(b in r["best"] for r in rows if r["mpi"] == mpi)
            if n != 1:
                errors.append("%s: %d tunings are marked best for %s" % (mpi, n, b))
    return rows


def check_openmpi(rows):
    if shutil.which("ompi_info") is None:
        print("SKIP part: ompi_info not installed; Open MPI names not checked")
        return False
    out = subprocess.run(["ompi_info", "--all", "--parsable"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, timeout=60).stdout
    params, enums = set(), {}
    for line in out.splitlines():
        m = re.match(r"mca:[^:]+:[^:]+:param:([^:]+):(value|enumerator:value:(\d+):.*)", line)
        if m:
            params.add(m.group(1))
            if m.group(3) is not None:
                enums.setdefault(m.group(1), set()).add(m.group(3))
    for r in rows:
        if r["mpi"] != "openmpi":
            continue
        for name, value in r["pairs"]:
            if name.startswith("WSP_"):
                continue
            if name not in params:
                errors.append("%s: Open MPI has no MCA parameter %s" % (r["where"], name))
            elif name in enums and value not in enums[name]:
                errors.append("%s: %s = %s is not one of Open MPI's values %s" %
                              (r["where"], name, value, sorted(enums[name], key=int)))
    return True


def check_mpich(rows):
    tool = shutil.which("mpivars")
    if tool is None:
        print("SKIP part: mpivars not installed; MPICH names not checked")
        return False
    out = subprocess.run([tool], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         timeout=60).stdout
    desc = {}
    for line in out.splitlines():
        m = re.match(r"\s*(MPIR_CVAR_\w+)\s*=", line)
        if m:
            desc[m.group(1)] = line
    if not desc:
        errors.append("mpivars listed no MPIR_CVAR_ variables")
    for r in rows:
        if r["mpi"] != "mpich":
            continue
        for name, value in r["pairs"]:
            if not name.startswith("MPIR_CVAR_"):
                continue
            if name not in desc:
                errors.append("%s: MPICH has no control variable %s" % (r["where"], name))
            elif name.endswith("_ALGORITHM") and not re.search(
                    # mpivars runs the choices together ("...Binomial Treenb   -
                    # Force nonblocking algorithmsmp   - ..."): a choice is a name
                    # followed by " - ", not the tail of a longer name (tsp_ring).
                    r"(?<![_])%s\s+-\s" % re.escape(value),
                    desc[name].split("Variable to select", 1)[-1]):
                errors.append("%s: %s = %s is not one of MPICH's choices" % (r["where"], name, value))
    return True


def shell(fn, *args):
    p = subprocess.run(["bash", "-c", '. "%s"; %s "$@"' % (ARGS, fn), "-"] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    if p.returncode != 0:
        errors.append("%s %s exited %d: %s" % (fn, " ".join(args), p.returncode, p.stderr))
    return [l for l in p.stdout.splitlines() if l]


def form(r):
    return "%s: %s" % (r["label"], " ".join("%s %s" % kv for kv in r["pairs"]))


def check_shell(rows):
    for mpi in ("openmpi", "mpich"):
        for what in ("allreduce", "bcast", "allreduce,bcast", "sites", "p2p", "shuffle", "none"):
            want = [form(r) for r in rows if r["mpi"] == mpi and set(r["what"]) & set(what.split(","))]
            got = shell("wsp_tunings", mpi, what)
            if got != want:
                errors.append("wsp_tunings %s %s printed %r, expected %r" % (mpi, what, got, want))
        for best in ("allreduce@4x1", "bcast@8x1", "reduce@4x1"):
            want = [form(r) for r in rows if r["mpi"] == mpi and best in r["best"]]
            got = shell("wsp_tuning_best", mpi, best)
            if got != want:
                errors.append("wsp_tuning_best %s %s printed %r, expected %r" % (mpi, best, got, want))
    # The lists the benchmarks use must not be empty.
    for mpi in ("openmpi", "mpich"):
        for what in ("allreduce", "bcast", "sites"):
            if not shell("wsp_tunings", mpi, what):
                errors.append("no %s tuning for %s" % (what, mpi))


def main():
    rows = parse()
    checked = [check_openmpi(rows), check_mpich(rows)]
    check_shell(rows)
    print("%d tunings read" % len(rows))
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    if not any(checked):
        print("SKIP: neither ompi_info nor mpivars is installed")
        return 77
    print("ok: every name known to its MPI, the shell helpers select what the file says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
