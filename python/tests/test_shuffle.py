# SPDX-License-Identifier: BSD-3-Clause
"""wirespeed.Shuffle with Python handlers: every request answered exactly once, with the right
response, against a reference computed independently on the requester."""
import hashlib

import numpy as np
import pytest
from mpi4py import MPI

import wirespeed

WORLD = MPI.COMM_WORLD


def answer(rank: int, req: bytes) -> bytes:
    """The response rank `rank` gives to `req`: its hash, repeated to a length set by req."""
    h = hashlib.blake2b(req + rank.to_bytes(4, "little"), digest_size=16).digest()
    return (h * 64)[: req[0] * 7 % 900] if req else b""


def requests_of(rank: int, size: int, n: int, seed: int):
    rng = np.random.default_rng(seed * 1000 + rank)
    out = []
    for k in range(n):
        dest = int(rng.integers(size))
        body = k.to_bytes(4, "little") + rank.to_bytes(4, "little")
        out.append((dest, bytes([int(rng.integers(256))]) + body + b"x" * int(rng.integers(40))))
    return out


@pytest.mark.parametrize("settings", [{}, {"memory": "256K", "batch_bytes": 2048},
                                      {"rate": "200mbit"}])
def test_every_request_answered_once(comm, agree, settings):
    me, size = comm.rank, comm.size
    served = {}
    got = {}

    def on_requests(source, requests):
        out = []
        for r in requests:
            b = bytes(r)
            served[(source, b)] = served.get((source, b), 0) + 1
            out.append(answer(me, b) or None)
        return out

    def on_responses(dest, requests, responses):
        for q, r in zip(requests, responses):
            key = (dest, bytes(q))
            got.setdefault(key, []).append(bytes(r))

    n = 300 + 200 * me          # skewed
    posts = requests_of(me, size, n, seed=len(settings))
    with comm.shuffle(on_requests, on_responses, **settings) as sh:
        for dest, req in posts:
            sh.post(dest, req)
    st = sh.stats
    ok = len(got) == len(posts) and all(
        got.get((d, q)) == [answer(d, q)] for d, q in posts)
    # What each rank served, against what the others posted to it.
    sent_to_me = [p for src in range(size)
                  for p in [(src, q) for d, q in requests_of(src, size, 300 + 200 * src,
                                                              seed=len(settings)) if d == me]]
    ok_served = sorted(served) == sorted(sent_to_me) and all(v == 1 for v in served.values())
    agree(ok and ok_served and st["requests_posted"] == n and st["responses_handled"] == n,
          f"{len(got)} answered of {len(posts)}; served ok {ok_served}")
    # Batched: fewer Python calls than requests.
    total = WORLD.allreduce(sh.calls["on_requests"])
    served_all = WORLD.allreduce(len(served))
    assert total < served_all and st["global_requests_served"] == st["global_requests_posted"]


def test_follow_ups_from_responses(comm, agree):
    me, size = comm.rank, comm.size
    hops = {}

    def on_requests(source, requests):
        return [bytes(r) for r in requests]           # echo

    def on_responses(dest, requests, responses):
        for r in responses:
            ttl = r[0]
            hops[bytes(r)] = True
            if ttl > 0:
                sh.post((dest + 1) % size, bytes([ttl - 1]) + bytes(r[1:]))

    sh = comm.shuffle(on_requests, on_responses)
    for k in range(20):
        sh.post((me + k) % size, bytes([3]) + k.to_bytes(2, "little") + me.to_bytes(2, "little"))
    sh.close()
    sh.free()
    # Each of the 20 chains makes 4 requests (ttl 3, 2, 1, 0).
    agree(sh.stats["requests_posted"] == 80 and len(hops) == 80,
          f"posted {sh.stats['requests_posted']}, distinct {len(hops)}")


def test_handler_exception_fails_everywhere(comm):
    culprit = comm.size - 1

    def on_requests(source, requests):
        if comm.rank == culprit:
            raise KeyError("no such key")
        return [b"ok"] * len(requests)

    sh = comm.shuffle(on_requests, lambda d, q, r: None)
    for d in range(comm.size):
        sh.post(d, b"q")
    expect = wirespeed.HandlerError if comm.rank == culprit else wirespeed.RemoteError
    with pytest.raises(expect) as e:
        sh.close()
    if comm.rank == culprit:
        assert isinstance(e.value.__cause__, KeyError) and "no such key" in str(e.value)
    sh.free()


def test_views_released_after_the_call(comm):
    kept = []

    def on_requests(source, requests):
        kept.extend(requests)
        return [None] * len(requests)

    with comm.shuffle(on_requests, lambda d, q, r: None) as sh:
        sh.post(comm.rank, b"hello")
    with pytest.raises(ValueError):
        bytes(kept[0])


def test_bad_settings_and_responses(comm):
    with pytest.raises(wirespeed.ArgumentError, match="unknown setting 'memroy'"):
        comm.shuffle(lambda s, r: r, lambda d, q, r: None, memroy="1M")
    with pytest.raises(wirespeed.ArgumentError, match="mode = 'fast'"):
        comm.shuffle(lambda s, r: r, lambda d, q, r: None, mode="fast")
    with pytest.raises(wirespeed.ArgumentError, match="12Q"):
        comm.shuffle(lambda s, r: r, lambda d, q, r: None, memory="12Q")
    # A handler that returns the wrong number of responses fails the shuffle with its message.
    sh = comm.shuffle(lambda s, r: [], lambda d, q, r: None)
    sh.post(comm.rank, b"q")
    with pytest.raises(wirespeed.HandlerError, match="returned 0 responses for 1 requests"):
        sh.close()
    sh.free()
