"""The standard library's pool sharing work as shared_out does (work_sharing.shared_out_pool),
which bench/parallel.py measures against it (TLVIEW_SHARING=pool): every piece done once, this
process from the front, the pool's workers from the back, and the parts by piece."""

from __future__ import annotations

import os

from tlview.index import parallel
from tlview.index.work_sharing import Share, shared_out, shared_out_pool


def test_every_piece_is_done_once_here_from_the_front_or_in_the_pool_from_the_back():
    pieces = [(n, n + 1) for n in range(40)]
    done_here: list[tuple[int, int]] = []
    share = Share(pieces, queued=2)
    parts, failed = shared_out_pool(2, share, done_here.append, lambda piece: {"pid": os.getpid(), "piece": piece})
    assert not failed
    assert done_here == pieces[:len(done_here)]  # the front, in order
    assert sorted(done_here + list(parts)) == pieces  # each once
    assert all(part["piece"] == piece and part["pid"] != os.getpid() for piece, part in parts.items())
    assert parts, "the pool's workers took none"


def test_a_failed_piece_in_the_pool_is_said_and_left_to_this_process():
    share = Share([(n, n + 1) for n in range(12)], queued=1)

    def part(piece):
        if piece == (11, 12):
            raise OSError("damaged")
        return {}

    parts, failed = shared_out_pool(1, share, lambda piece: None, part)
    assert failed and (11, 12) not in parts


def test_the_bench_switch_chooses_the_pool(monkeypatch):
    monkeypatch.delenv("TLVIEW_SHARING", raising=False)
    assert parallel.sharing() is shared_out
    monkeypatch.setenv("TLVIEW_SHARING", "pool")
    assert parallel.sharing() is shared_out_pool
