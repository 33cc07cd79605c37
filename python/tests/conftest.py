# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures for the tests that run under mpirun: every rank runs the same tests in the same order.

A test must make the same collective calls on every rank whatever it finds, so the checks go
through `agree`: each rank says whether its own result is right, all ranks learn whether all
are, and the test fails on every rank (naming the ranks) or on none.
"""
import os

import pytest
from mpi4py import MPI

import wirespeed


@pytest.fixture(scope="session")
def comm():
    c = wirespeed.Comm(MPI.COMM_WORLD)
    yield c
    c.free()


@pytest.fixture
def agree():
    world = MPI.COMM_WORLD

    def check(ok: bool, what: str = "") -> None:
        bad = world.allgather(None if ok else f"rank {world.rank}: {what}")
        bad = [b for b in bad if b]
        assert not bad, "; ".join(bad)

    return check


def pytest_report_header(config):
    return (f"wirespeed {wirespeed.__version__} ({wirespeed.FLAVOR}) from "
            f"{wirespeed.LIBRARY_PATH}; {MPI.COMM_WORLD.size} ranks; "
            f"WSP_* set: {sorted(k for k in os.environ if k.startswith('WSP_'))}")
