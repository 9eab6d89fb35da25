"""`tlview --demo`: write a bundled real trace (and its TORCH_LOGS text) into a folder record by
record, at the pace of the original run (gaps shortened), as if a job were running."""

from __future__ import annotations

import gzip
import os
import re
import threading
from importlib import resources
from typing import BinaryIO

GLOG_TIME = re.compile(rb"^(?:\[rank\d+\]:)?[VIWEC]\d{4} (\d\d):(\d\d):(\d\d)\.(\d{6}) ")
MAX_GAP = 0.6  # seconds: a 9 s inductor compile is replayed in 0.6 s


def _records(data: bytes) -> list[tuple[float, bytes]]:
    """(time, bytes) of each record: an envelope or log line with its continuation lines."""
    out: list[tuple[float, bytes]] = []
    for line in data.splitlines(keepends=True):
        m = GLOG_TIME.match(line)
        if m is None and out:
            out[-1] = (out[-1][0], out[-1][1] + line)
            continue
        seconds = 0.0
        if m:
            h, mi, s, us = (int(x) for x in m.groups())
            seconds = h * 3600 + mi * 60 + s + us / 1e6
        elif out:
            seconds = out[-1][0]
        out.append((seconds, line))
    return out


def demo_sources() -> dict[str, bytes]:
    base = resources.files("tlview.demo")
    return {
        "dedicated_log_torch_trace_demo.log": gzip.decompress(
            base.joinpath("graph_breaks_trace.log.gz").read_bytes()),
        "torch_logs.txt": gzip.decompress(base.joinpath("graph_breaks_torch_logs.txt.gz").read_bytes()),
    }


class Replay:
    """Writes the demo run into `folder` from a thread; stop() ends it early."""

    def __init__(self, folder: str, speed: float = 1.0) -> None:
        self.folder = folder
        self.speed = speed
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tlview-demo", daemon=True)

    def start(self) -> Replay:
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        timeline = []
        for name, data in demo_sources().items():
            timeline += [(t, name, chunk) for t, chunk in _records(data)]
        timeline.sort(key=lambda item: item[0])
        files: dict[str, BinaryIO] = {}
        try:
            previous = timeline[0][0] if timeline else 0.0
            for at, name, chunk in timeline:
                gap = min(max(at - previous, 0.0), MAX_GAP) / self.speed
                previous = at
                if gap and self._stop.wait(gap):
                    return
                f = files.get(name)
                if f is None:
                    f = files[name] = open(os.path.join(self.folder, name), "ab")  # noqa: SIM115 (kept open across chunks; closed below)
                f.write(chunk)
                f.flush()
        finally:
            for f in files.values():
                f.close()
