"""The last lines of a file: where a job's own death (its last error) is written."""

from __future__ import annotations

import os

TAIL_BYTES = 64 << 10  # a traceback, or the root cause ending torchrun's failure summary, fits


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
