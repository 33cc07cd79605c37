#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An MPI program (tests/lab/mpi_check.c: seeded data, MPI_Allreduce + MPI_Alltoall, checksums)
gives the same output on loopback and across 4 netlab hosts, under Open MPI and MPICH, and the
shaped devices' counters account for at least the alltoall bytes that had to cross hosts.
`netlab run --done-line` ends a job that printed the line and then hangs, and leaves alone one
that exits.

MPICH 4.0.2 (ch4:ucx, UCX 1.13) sometimes hangs in MPI_Finalize when ranks talk over UCX's tcp
transport -- also on loopback without netlab (UCX_TLS=tcp,self MPIR_CVAR_NOLOCAL=1). A run that
printed the right result and then hung in finalize is retried (up to 3 times); if every attempt
hangs that way the test still passes but prints a WARNING. Runtime ~30-90 s."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labutil import (HERE, cleanup, conclude, fail, lab_name, machine_objects, netlab,
                     require_lab, skip)

HOSTS = 4
SEED = 12345
COUNT = 40000            # uint64 per rank pair in the alltoall (320 KB)
MPIS = {
    # name: (compiler, loopback launcher, ppn on the lab)
    "openmpi": ("mpicc", ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to",
                          "none", "--mca", "btl", "self,vader,tcp"], 2),
    "mpich": ("mpicc.mpich", ["mpiexec.mpich"], 2),
}
T_END = time.time() + 200


def result_line(out):
    m = re.search(r"^np \d+ count \d+ allreduce \S+ consistent 1 alltoall \S+ bad 0$", out, re.M)
    return m.group(0) if m else None


def main():
    require_lab(("mpicc", "mpirun", "mpicc.mpich", "mpiexec.mpich"))
    name = lab_name("mp")
    before = machine_objects()
    tmp = tempfile.mkdtemp(prefix="netlab-mpi-")
    errors, warnings = [], []
    try:
        for mpi, (cc, launcher, ppn) in MPIS.items():
            exe = os.path.join(tmp, "mpi_check_" + mpi)
            p = subprocess.run([cc, "-O2", "-o", exe, os.path.join(HERE, "mpi_check.c")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=120)
            if p.returncode != 0:
                fail("%s failed:\n%s" % (cc, p.stdout))
        netlab("up", "cluster", "--name", name, "--hosts", str(HOSTS), "--link-rate", "100mbit")
        for mpi, (cc, launcher, ppn) in MPIS.items():
            exe = os.path.join(tmp, "mpi_check_" + mpi)
            np_ = HOSTS * ppn
            lo = subprocess.run(launcher + ["-np" if mpi == "openmpi" else "-n", str(np_), exe,
                                            str(SEED), str(COUNT)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                timeout=120)
            ref = result_line(lo.stdout)
            if lo.returncode != 0 or ref is None:
                fail("%s loopback run failed (rc %d):\n%s\n%s" % (mpi, lo.returncode, lo.stdout,
                                                                 lo.stderr[-2000:]))
            print("%s loopback: %s" % (mpi, ref), flush=True)
            # payload of the alltoall alone that must cross host boundaries
            expect = np_ * (np_ - ppn) * COUNT * 8
            ok = False
            for attempt in range(3):
                r = netlab("run", "--name", name, "--mpi", mpi, "--ppn", str(ppn),
                           "--check-counters", "--expect-bytes", str(expect), "--time-limit", "15",
                           "--", exe, str(SEED), str(COUNT), check=False, timeout=60)
                got = result_line(r.stdout)
                print("%s on %d hosts x %d (attempt %d, rc %d): %s" %
                      (mpi, HOSTS, ppn, attempt + 1, r.returncode, got), flush=True)
                print(r.stderr[-1500:], flush=True)
                if got != ref:
                    errors.append("%s: lab output %r != loopback %r" % (mpi, got, ref))
                    break
                if "counter check ok" not in r.stderr:
                    errors.append("%s: shaped-link counters do not account for %d bytes"
                                  % (mpi, expect))
                    break
                if r.returncode == 0:
                    ok = True
                    break
                if r.returncode == 124 and mpi == "mpich":
                    print("MPICH hung after printing the right result (known finalize hang); "
                          "retrying", flush=True)
                    if time.time() > T_END - 30:
                        break
                    continue
                errors.append("%s: netlab run exited %d" % (mpi, r.returncode))
                break
            else:
                pass
            if not ok and not any(e.startswith(mpi) for e in errors):
                warnings.append("%s: correct results and counters, but every attempt hung in "
                                "MPI_Finalize (MPICH/UCX tcp bug, see docs/netlab.md)" % mpi)
        # --done-line: a job that printed the line and then does not exit (as MPICH in its
        # finalize hang) is ended --done-grace seconds later with exit 124, long before
        # --time-limit; its output still passes through. A job that exits by itself keeps its code.
        r = netlab("run", "--name", name, "--np", "1", "--time-limit", "300", "--done-line",
                   "all written", "--done-grace", "2", "--", "sh", "-c",
                   "echo all written; exec sleep 200", check=False, timeout=100)
        if r.returncode != 124 or "all written" not in r.stdout or "has not exited" not in r.stderr:
            errors.append("--done-line: expected exit 124 after the grace period with the output "
                          "passed through, got rc %d, stdout %r, stderr %r"
                          % (r.returncode, r.stdout[-300:], r.stderr[-300:]))
        r = netlab("run", "--name", name, "--np", "1", "--done-line", "all written", "--", "sh",
                   "-c", "echo all written; exit 3", check=False, timeout=100)
        if r.returncode != 3 or "all written" not in r.stdout:
            errors.append("--done-line: a job that exits by itself should keep its exit code 3 "
                          "and its output, got rc %d, stdout %r" % (r.returncode, r.stdout[-300:]))
        for bad in (["--done-grace", "-1"], ["--done-line", ""], ["--time-limit", "0"]):
            r = netlab("run", "--name", name, "--np", "1", *bad, "--", "true", check=False,
                       timeout=30)
            if r.returncode != 2 or bad[0] not in r.stderr:
                errors.append("netlab run %s: expected a usage error (exit 2) naming %s, got rc "
                              "%d, stderr %r" % (" ".join(bad), bad[0], r.returncode,
                                                 r.stderr[-300:]))
        netlab("down", "--name", name)
    finally:
        cleanup(name)
        shutil.rmtree(tmp, ignore_errors=True)
    for w in warnings:
        print("WARNING: " + w)
    return conclude(errors, before, name)


if __name__ == "__main__":
    sys.exit(main())
