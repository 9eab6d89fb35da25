"""Benchmark: live follow. Append-to-visible latency, and memory while following a steady writer.

    python bench/follow.py [--appends 300] [--minutes 10]

Latency: the explorer (headless, Textual's Pilot) follows a folder with watchfiles; a writer
appends real trace records one at a time; for each, the time from its write to the first screen
update that counts it. Memory: the explorer follows a writer process appending steadily (the
recompiles trace over and over, frame ids renumbered) for --minutes; RSS is sampled each
minute next to the number of records indexed. Targets: p95 <= 100 ms; RSS flat beyond the index.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import CORPUS

from tlview.domain.totals import totals as index_totals
from tlview.ui.app import TlviewApp

TRACE = next((CORPUS / "recompiles" / "trace").glob("*.log"))


class TimedApp(TlviewApp):
    """Notes (time, records) at each screen update of the status line."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.renders: list[tuple[float, int]] = []

    def refresh_views(self) -> None:
        super().refresh_views()
        self.renders.append((time.perf_counter(), sum(len(s.offsets) for s in self.index.sources)))


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def latency(appends: int) -> list[float]:
    records = [r for r in re.split(rb"(?m)^(?=V\d{4} )", TRACE.read_bytes()) if r]
    folder = Path(tempfile.mkdtemp(prefix="tlview-bench-follow-"))
    path = folder / "dedicated_log_torch_trace_bench.log"
    path.write_bytes(b"".join(records[:50]))
    app = TimedApp(str(folder), follow=True)
    writes: list[tuple[float, int]] = []
    async with app.run_test(size=(150, 45)) as pilot:
        while not app._caught_up or not app.renders:
            await pilot.pause(0.05)
        await pilot.pause(0.5)

        def writer() -> None:
            with open(path, "ab") as f:
                for i, record in enumerate(records[50:50 + appends]):
                    f.write(record)
                    f.flush()
                    writes.append((time.perf_counter(), 51 + i))
                    time.sleep(0.03)

        thread = threading.Thread(target=writer)
        thread.start()
        while thread.is_alive():
            await pilot.pause(0.01)
        await pilot.pause(1.0)
    lat = []
    for written_at, count in writes:
        seen = next((t for t, n in app.renders if t >= written_at and n >= count), None)
        if seen is not None:
            lat.append((seen - written_at) * 1000)
    return lat


WRITER = textwrap.dedent('''
    import re, sys, time
    path, source, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    data = open(source, "rb").read()
    frame = re.compile(rb'(?m)^(V[^\\n]*?"frame_id": )(\\d+)')
    records = [r for r in re.split(rb"(?m)^(?=V\\d{4} )", data) if r]
    end = time.monotonic() + seconds
    copy = 0
    with open(path, "ab") as f:
        while time.monotonic() < end:
            base = copy * 4
            for r in records:
                f.write(frame.sub(lambda m: m.group(1) + str(int(m.group(2)) + base).encode(), r))
                f.flush()
                time.sleep(0.002)
                if time.monotonic() >= end:
                    break
            copy += 1
''')


async def soak(minutes: float) -> list[tuple[float, float, int, int]]:
    folder = Path(tempfile.mkdtemp(prefix="tlview-bench-soak-"))
    path = folder / "dedicated_log_torch_trace_soak.log"
    path.write_bytes(b"")
    # (Popen starts the writer and returns: nothing here waits on it while the app runs)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(TRACE), str(minutes * 60)])  # noqa: ASYNC220
    app = TimedApp(str(folder), follow=True)
    samples = []
    start = time.monotonic()
    async with app.run_test(size=(150, 45)) as pilot:
        next_sample = 0.0
        while writer.poll() is None:
            elapsed = time.monotonic() - start
            if elapsed >= next_sample:
                totals = index_totals(app.index)
                samples.append((elapsed / 60, rss_mb(), totals.records, totals.compile_ids))
                next_sample += 60
            await pilot.pause(0.5)
            app.renders.clear()
        await pilot.pause(2)
        totals = index_totals(app.index)
        samples.append(((time.monotonic() - start) / 60, rss_mb(), totals.records, totals.compile_ids))
    return samples


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--appends", type=int, default=300)
    ap.add_argument("--minutes", type=float, default=10.0)
    args = ap.parse_args()
    lat = sorted(asyncio.run(latency(args.appends)))
    if lat:
        print(f"append-to-visible latency over {len(lat)} appends: p50 {statistics.median(lat):.1f} ms, "
              f"p95 {lat[int(len(lat) * 0.95) - 1]:.1f} ms, max {lat[-1]:.1f} ms   (target p95 <= 100 ms)")
    if args.minutes > 0:
        samples = asyncio.run(soak(args.minutes))
        print(f"following a steady writer for {args.minutes:g} minutes:")
        print("  minute   RSS MB   records   compile ids   RSS per 1k records")
        for minute, rss, records, ids in samples:
            per = f"{rss / records * 1000:.2f}" if records else "-"
            print(f"  {minute:6.1f}   {rss:6.1f}   {records:7,}   {ids:11,}   {per}")
        first, last = samples[1] if len(samples) > 1 else samples[0], samples[-1]
        grew = last[1] - first[1]
        print(f"  RSS grew {grew:+.1f} MB from minute {first[0]:.0f} to {last[0]:.1f} while the index "
              f"grew by {last[2] - first[2]:,} records and {last[3] - first[3]:,} compile ids")


if __name__ == "__main__":
    main()
