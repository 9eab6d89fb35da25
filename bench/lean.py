"""Benchmark: a 100 MB single payload and a 1,000,000-record trace stay lean and responsive.

    python bench/lean.py

Prints, for each: index time, the memory the index keeps (tracemalloc, after indexing: no payload
is held), and in the explorer the time to show the big payload and the key latency while it loads.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import BENCH_DIR, CORPUS
from ui import TimedApp

from tlview.domain.totals import totals as index_totals
from tlview.index.indexing import open_index
from tlview.ui.payload_view import PayloadView

SOURCE = next((CORPUS / "recompiles" / "trace").glob("*.log"))


def big_payload_trace(megabytes: int = 100) -> Path:
    path = BENCH_DIR / f"dedicated_log_torch_trace_payload_{megabytes}mb.log"
    if path.exists():
        return path
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    records = [r for r in re.split(rb"(?m)^(?=V\d{4} )", SOURCE.read_bytes()) if r]
    at = next(i for i, r in enumerate(records) if r.startswith(b"V") and b'{"dynamo_output_graph"' in r)
    line = "        add_{i}: \"f32[3, 8][8, 1]cpu\" = torch.ops.aten.add.Tensor(x_{i}, y_{i});  x_{i} = None"
    n = megabytes * (1 << 20) // 80
    payload = "\n".join(line.format(i=i) for i in range(n))
    head = records[at].split(b"\n", 1)[0]
    prefix, _, meta = head.partition(b"] {")
    meta_obj = json.loads(b"{" + meta)
    meta_obj["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
    records[at] = (prefix + b"] " + json.dumps(meta_obj).encode() + b"\n"
                   + b"".join(b"\t" + ln + b"\n" for ln in payload.encode().split(b"\n")))
    path.write_bytes(b"".join(records))
    return path


def million_record_trace(count: int = 1_000_000) -> Path:
    """The real records under 2 KB (events, starts, metrics, small artifacts), renumbered."""
    path = BENCH_DIR / f"dedicated_log_torch_trace_{count}_small_records.log"
    if path.exists():
        return path
    records = [r for r in re.split(rb"(?m)^(?=V\d{4} )", SOURCE.read_bytes()) if r and len(r) < 2048]
    frame = re.compile(rb'(?m)^(V[^\n]*?"frame_id": )(\d+)')
    written = 0
    with open(path, "wb") as out:
        copy = 0
        while written < count:
            for r in records:
                out.write(frame.sub(lambda m, copy=copy: m.group(1) + str(int(m.group(2)) + copy * 4).encode(), r))
                written += 1
                if written >= count:
                    break
            copy += 1
    return path


def kept_by_index(path: Path) -> tuple[float, float, int]:
    """(index seconds, MB the index keeps, records): timed without tracemalloc, measured with."""
    t = time.perf_counter()
    open_index(str(path), parallel_ok=False).close()
    seconds = time.perf_counter() - t
    tracemalloc.start()
    index = open_index(str(path), parallel_ok=False)
    kept = tracemalloc.get_traced_memory()[0] / 1e6
    tracemalloc.stop()
    records = index_totals(index).records
    index.close()
    return seconds, kept, records


async def show_payload(path: Path) -> tuple[float, float, int]:
    """(seconds until the graph is shown, longest stall of the UI's event loop meanwhile, ticks)."""
    app = TimedApp(str(path))
    async with app.run_test(size=(150, 45)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        beats: list[float] = []
        timer = app.set_interval(0.01, lambda: beats.append(time.perf_counter()))
        t = time.perf_counter()
        view = app.query_one("#graph-view", PayloadView)
        app.action_show_tab("graphs")  # Graphs of [0/0]: the 100 MB graph
        while view.line_count < 1000:
            await asyncio.sleep(0.01)
        shown = time.perf_counter() - t
        timer.stop()
        stalls = [b - a for a, b in itertools.pairwise(beats)]
        return shown, max(stalls, default=0.0), len(beats)


def main() -> None:
    big = big_payload_trace()
    seconds, kept, records = kept_by_index(big)
    print(f"100 MB single payload ({big.stat().st_size / 1e6:.0f} MB file): indexed in {seconds:.2f} s, "
          f"the index keeps {kept:.1f} MB (payload not held)")
    shown, stall, beats = asyncio.run(show_payload(big))
    print(f"  explorer: the 100 MB graph shown {shown:.2f} s after opening the Graphs pane; meanwhile the "
          f"UI's 10 ms timer ran {beats} times, its longest stall {stall * 1000:.0f} ms")
    many = million_record_trace()
    seconds, kept, records = kept_by_index(many)
    print(f"1,000,000-record trace ({many.stat().st_size / 1e6:.0f} MB): indexed in {seconds:.2f} s, "
          f"the index keeps {kept:.1f} MB = {kept * 1e6 / records:.0f} bytes per record ({records:,} records)")


if __name__ == "__main__":
    main()
