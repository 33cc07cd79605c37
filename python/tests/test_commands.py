# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed-report and wirespeed-lab as installed (one rank only: they are not MPI programs).

The reports read data files kept in the repository (docs/results/data, the fuzz corpus's
network maps), so a missing or wrongly installed script shows here.
"""
import os
import subprocess
import sys

import pytest
from mpi4py import MPI

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
DATA = os.path.join(REPO, "docs", "results", "data")

pytestmark = pytest.mark.skipif(MPI.COMM_WORLD.size > 1, reason="runs at one rank only")


def run(cmd, *args):
    exe = os.path.join(BIN, cmd)
    assert os.path.exists(exe), f"{cmd} is not installed in {BIN}"
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=120)


def has_matplotlib():
    return subprocess.run([sys.executable, "-c", "import matplotlib"]).returncode == 0


def test_report_help_and_unknown():
    r = run("wirespeed-report", "--help")
    assert r.returncode == 0
    for sub in ("coll", "shuffle", "p2p", "table", "aware", "netmap"):
        assert f"  {sub} " in r.stdout
    r = run("wirespeed-report", "colll", "x.json")
    assert r.returncode == 2 and "unknown subcommand 'colll'" in r.stderr
    assert run("wirespeed-report").returncode == 2


def test_report_table():
    r = run("wirespeed-report", "table", os.path.join(DATA, "coll-netlab-4x1-tuned-2026-11-26.json"),
            "--link-mbit", "100")
    assert r.returncode == 0, r.stderr
    assert "allreduce" in r.stdout and "bcast" in r.stdout


@pytest.mark.skipif(not has_matplotlib(), reason="matplotlib is not installed")
@pytest.mark.parametrize("sub,data", [
    ("coll", os.path.join(DATA, "coll-netlab-4x1-tuned-2026-11-26.json")),
    ("shuffle", os.path.join(DATA, "shuffle-fault-netlab-2026-11-27.json")),
    ("netmap", os.path.join(REPO, "tests", "fuzz", "corpus", "netmap", "netlab_hetero8.json")),
])
def test_report_plots(tmp_path, sub, data):
    out = tmp_path / f"{sub}.png"
    r = run("wirespeed-report", sub, data, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_lab_help_and_bad_arguments():
    r = run("wirespeed-lab", "--help")
    assert r.returncode == 0 and "usage: wirespeed-lab" in r.stdout and "fault" in r.stdout
    r = run("wirespeed-lab", "up", "nosuchprofile")
    assert r.returncode != 0 and "nosuchprofile" in r.stderr
