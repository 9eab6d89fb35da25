"""Benchmark: what `--bundle --redact` costs against a plain `--bundle` of the same run, and its
peak memory at two payload sizes (a ratio, in one process: these machines are noisy).

    python bench/redact.py [RUN]

(1) RUN (default: the biggest torch 2.15 fixture) bundled plain and redacted: seconds, and
redacted / plain. (2) One record with a payload of 8 and 32 MB, bundled redacted: peak memory
(tracemalloc) of each, and big / small (1.0: memory follows the block read, not the payload).
"""

from __future__ import annotations

import hashlib
import io
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tlview.index.indexing import open_index
from tlview.report.bundle import write_bundle

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "fixtures" / "generated" / "torch215" / "distributed"


class Discard(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        return len(data)


def bundled(run: Path, redact: bool) -> float:
    index = open_index(str(run), parallel_ok=False)
    try:
        start = time.perf_counter()
        write_bundle(index, Discard(), redact=redact)
        return time.perf_counter() - start
    finally:
        index.close()


def peak(folder: Path, megabytes: int) -> int:
    folder.mkdir()
    line = "    buf0 = quux_corge(carol_danvers) + sk-live-51H8xQzT3stK3yAbCdEfGhIj  # x.py:3 in forward\n"
    payload = (line * ((megabytes << 20) // len(line))).rstrip("\n")
    md5 = hashlib.md5(payload.encode()).hexdigest()
    (folder / "dedicated_log_torch_trace_big.log").write_text(
        'V1127 08:00:00.000000 1 torch/_inductor/x.py:1] {"inductor_output_code": {"filename": "x.py"}, '
        f'"frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "{md5}"}}\n'
        + "".join("\t" + part + "\n" for part in payload.split("\n")))
    del payload
    index = open_index(str(folder), parallel_ok=False)
    try:
        tracemalloc.start()
        write_bundle(index, Discard(), redact=True)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        index.close()


def main() -> None:
    run = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    size = sum(f.stat().st_size for f in run.rglob("*") if f.is_file())
    plain, redacted = bundled(run, False), bundled(run, True)
    print(f"{run.name} ({size / 1e6:.1f} MB): plain {plain:.2f} s, redacted {redacted:.2f} s, "
          f"redacted / plain {redacted / plain:.1f}x ({size / 1e6 / redacted:.2f} MB/s)")
    with tempfile.TemporaryDirectory() as work:
        small, big = peak(Path(work) / "small", 8), peak(Path(work) / "big", 32)
    print(f"peak: 8 MB payload {small / 2**20:.0f} MiB, 32 MB payload {big / 2**20:.0f} MiB, "
          f"big / small {big / small:.2f}")


if __name__ == "__main__":
    main()
