"""Benchmark: `tlview --report` and `--json` on one trace of many compile ids (issue #46: the
10,000-id report took 5.88 s on a 16-core machine; target <= 2 s on the 2-core one).

    python bench/report.py [--compile-ids 10000] [--runs 3] [--profile]

Fresh processes, warm page cache, best of `--runs`, alternated with the references measured in the
same run (these machines are noisy and shared): `cat` of the file and `--json --no-verify`. Each
figure is printed with its ratio to the references and the load average when it was taken. Then,
in this process with the indexing serial, the parent's own part: the summary, the report and the
JSON document after the index is built, as ratios to the indexing. `--profile`: a cProfile of
`tlview --report` (the parent, as the command line runs it), top 15 by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synth import build_many_compile_ids


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def timed_run(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, timeout=1800)
    return time.perf_counter() - start


def best_of(runs: int, commands: dict[str, list[str]]) -> dict[str, tuple[float, str]]:
    """Each command's best time, alternated run by run, with the load average at that run."""
    best: dict[str, tuple[float, str]] = {}
    for _ in range(runs):
        for name, command in commands.items():
            seconds = timed_run(command)
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, load())
    return best


def in_process(path: Path) -> None:
    """The parent's serial part after indexing, timed in this process, with no cyclic GC (as
    the command line runs: gc_pauses.start)."""
    import gc

    from rich.console import Console

    from tlview.index.indexing import open_index
    from tlview.report.summary import build_summary
    from tlview.report.text_report import render_report
    from tlview.textsafe import json_chunks

    def timed(fn):
        start = time.perf_counter()
        value = fn()
        return time.perf_counter() - start, value

    gc.disable()
    index_s, index = timed(lambda: open_index(str(path), verify_md5=False, parallel_ok=False))
    summary_s, _ = timed(lambda: build_summary(index, streamed=True))
    report_s, _ = timed(lambda: render_report(build_summary(index, streamed=True),
                                              Console(file=io.StringIO(), width=200)))
    json_s, _ = timed(lambda: sum(len(chunk) for chunk in json_chunks(build_summary(index, streamed=True))))
    print(f"in this process, indexing serial: index {index_s:.3f} s ({load()})")
    for name, seconds in (("summary (first)", summary_s), ("summary + report (again)", report_s),
                          ("summary + json (again)", json_s)):
        print(f"  {name:26} {seconds:7.3f} s  {seconds / index_s:.3f}x of indexing  ({load()})")


def profile(path: Path) -> None:
    from tlview import cli

    argv, stdout = sys.argv, sys.stdout
    sys.argv, sys.stdout = ["tlview", "--report", str(path)], open(os.devnull, "w")  # noqa: SIM115
    profiler = cProfile.Profile()
    try:
        profiler.runcall(cli.main)
    except SystemExit:
        pass
    finally:
        sys.stdout.close()
        sys.argv, sys.stdout = argv, stdout
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(15)
    print(f"cProfile of the parent of `tlview --report` ({load()}):")
    print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--compile-ids", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    path = build_many_compile_ids(args.compile_ids)
    tlview = [sys.executable, "-m", "tlview"]
    best = best_of(args.runs, {
        "cat": ["cat", str(path)],
        "--json --no-verify": [*tlview, "--json", "--no-verify", str(path)],
        "--json": [*tlview, "--json", str(path)],
        "--report": [*tlview, "--report", str(path)],
    })
    cat_s, json_s = best["cat"][0], best["--json --no-verify"][0]
    print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB, {os.cpu_count()} cores, best of {args.runs}")
    for name, (seconds, said) in best.items():
        print(f"  {name:19} {seconds:7.3f} s  {seconds / cat_s:6.1f}x cat  "
              f"{seconds / json_s:5.2f}x --json --no-verify  ({said})")
    in_process(path)
    if args.profile:
        profile(path)


if __name__ == "__main__":
    main()
