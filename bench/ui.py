"""Benchmark: time to first screen and key latency of the TUI, on a 3 MB, a 1 GB and a
10,000-compile-id trace, in one run (headless, with Textual's Pilot).

    python bench/ui.py [--presses 40]

First screen: from starting the app to the first frame that shows compile ids in the tree (the
1 GB index fills in behind it). Key latency: a key press (j, k, r) until the screen is updated.
Targets: 1 GB first screen <= 0.3 s later than the 3 MB one; a key press <= 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import CORPUS, build_many_compile_ids, build_trace  # noqa: E402

from textual import events  # noqa: E402

from tlview.ui.app import TlviewApp  # noqa: E402


class TimedApp(TlviewApp):
    """Times each key from its arrival to the first screen update written after it (in-process:
    Pilot's own round trip adds ~80 ms of waiting even to an empty app)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.key_at: float | None = None
        self.latencies: list[float] = []

    async def on_event(self, event) -> None:
        if isinstance(event, events.Key):
            self.key_at = time.perf_counter()
        await super().on_event(event)

    def _display(self, screen, renderable) -> None:
        super()._display(screen, renderable)
        if self.key_at is not None and renderable is not None:
            self.latencies.append((time.perf_counter() - self.key_at) * 1000)
            self.key_at = None


async def measure(path: Path, presses: int) -> dict:
    start = time.perf_counter()
    app = TimedApp(str(path))
    async with app.run_test(size=(160, 48)) as pilot:
        while not app.model.roots:
            await pilot.pause(0.005)
        await pilot.pause()  # that frame painted
        first = time.perf_counter() - start
        await app.workers.wait_for_complete()
        indexed = time.perf_counter() - start
        await pilot.pause(0.3)
        for i in range(presses):
            await pilot.press("jjjkr"[i % 5])
            await pilot.pause(0.06)
        ids = len(app.model.compile_entries())
    return {"first": first, "indexed": indexed, "keys": app.latencies, "ids": ids}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presses", type=int, default=40)
    args = ap.parse_args()
    small = next((CORPUS / "graph_breaks" / "trace").glob("*.log"))
    traces = [("3 MB", small), ("1 GB", build_trace(1024 << 20, "model")),
              ("10,000 ids", build_many_compile_ids(10_000)), ("3 MB again", small)]
    results = {}
    for name, path in traces:
        r = asyncio.run(measure(path, args.presses))
        results[name] = r
        keys = sorted(r["keys"])
        print(f"{name:11} {path.stat().st_size / 1e6:8.1f} MB  first screen {r['first']:.3f} s  "
              f"fully indexed {r['indexed']:.2f} s  compile ids {r['ids']:,}  key latency "
              f"median {statistics.median(keys):.1f} ms, p95 {keys[int(len(keys) * 0.95) - 1]:.1f} ms, "
              f"max {keys[-1]:.1f} ms")
    small_first = min(results["3 MB"]["first"], results["3 MB again"]["first"])
    print(f"1 GB first screen - 3 MB first screen = {results['1 GB']['first'] - small_first:+.3f} s"
          "   (target <= 0.3 s)")
    worst = max(max(r["keys"]) for r in results.values())
    p95 = max(sorted(r["keys"])[int(len(r["keys"]) * 0.95) - 1] for r in results.values())
    print(f"key latency: worst p95 {p95:.1f} ms, worst single {worst:.1f} ms   (target <= 50 ms)")


if __name__ == "__main__":
    main()
