"""The last lines of a file: where a job's own death (its last error) is written."""

from __future__ import annotations

import os
from collections.abc import Iterator

TAIL_BYTES = 64 << 10  # a traceback, or the root cause ending torchrun's failure summary, fits
BLOCK_BYTES = 1 << 20


def tail_lines(path: str, limit: int = TAIL_BYTES) -> list[str]:
    """The file's last `limit` bytes as lines (the first, likely cut, dropped when cut); [] when
    it cannot be read."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - limit))
            data = f.read(limit)
    except OSError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[1:] if size > limit and lines else lines


def blocks_backwards(path: str, limit: int, block: int = BLOCK_BYTES) -> Iterator[bytes]:
    """The file from its end to its start in blocks of whole lines (each block's lines in the
    file's order), each byte read once, up to `limit` bytes (the line cut there is left out).
    Nothing when it cannot be read."""
    try:
        with open(path, "rb") as f:
            yield from _blocks(f, limit, block)
    except OSError:
        return


def _blocks(f, limit: int, block: int) -> Iterator[bytes]:
    end = f.seek(0, os.SEEK_END)
    carry = b""  # the start of the line cut by the last block read (its end was read before)
    read = 0
    while end > 0 and read < limit:
        start = max(0, end - block)
        f.seek(start)
        data = f.read(end - start) + carry
        read += end - start
        end = start
        nl = data.find(b"\n")
        if start > 0 and nl < 0:  # one line longer than a block: its start is further back
            carry = data
            continue
        cut = nl + 1 if start > 0 else 0
        carry = data[:cut]
        if data[cut:]:
            yield data[cut:]
