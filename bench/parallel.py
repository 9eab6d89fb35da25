"""`python bench/parallel.py` (issue #46): the headless index's two ways to share work between
processes, alternated in the same run, best of --runs: `shared_out` (forked children and pipes of
tlview's own, tlview/index/work_sharing.py) against the standard library's ProcessPoolExecutor with
forked workers sharing the same pieces the same way (`TLVIEW_SHARING=pool`), and one process
(`TLVIEW_PROCESSES=1`) as the reference. On 1,024 real rank files (bench/ranks_real.py) and on a
100 MB trace (byte ranges of one file). Prints each figure with the 1-minute load average beside
it, and pool / shared_out: within 1.10 the standard library's mechanism is the one to keep.

    python bench/parallel.py [--runs 5] [--processes N] [--skip ranks|file]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from ranks_real import real_rank_folder
from synth import build_trace

TLVIEW = [sys.executable, "-m", "tlview"]
WAYS = {"shared_out": {}, "pool": {"TLVIEW_SHARING": "pool"}, "one process": {"TLVIEW_PROCESSES": "1"}}


def seconds(path: Path, extra: dict[str, str], processes: str | None) -> float:
    env = {**os.environ, **extra}
    if processes and "TLVIEW_PROCESSES" not in extra:
        env["TLVIEW_PROCESSES"] = processes
    started = time.perf_counter()
    subprocess.run([*TLVIEW, "--json", str(path)], env=env, stdout=subprocess.DEVNULL, check=True, timeout=600)
    return time.perf_counter() - started


def compare(name: str, path: Path, runs: int, processes: str | None) -> None:
    best: dict[str, float] = {}
    loads = []
    for _ in range(runs):
        for way, extra in WAYS.items():  # alternated: a noisy minute falls on all of them
            took = seconds(path, extra, processes)
            best[way] = min(best.get(way, took), took)
            loads.append(os.getloadavg()[0])
    cores = len(os.sched_getaffinity(0))
    print(f"{name}: {cores} cores usable, load {min(loads):.1f}-{max(loads):.1f}, best of {runs}")
    for way, took in best.items():
        print(f"  {way:12} {took:7.3f} s  ({took / best['one process']:.2f}x one process)")
    ratio = best["pool"] / best["shared_out"]
    print(f"  pool / shared_out = {ratio:.3f} ({'within' if ratio <= 1.10 else 'outside'} 10%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--processes", help="TLVIEW_PROCESSES for the shared runs (default: one per core, up to 8)")
    parser.add_argument("--skip", default="")
    args = parser.parse_args()
    if "ranks" not in args.skip:
        compare("1,024 real rank files (177 MB)", real_rank_folder(1024), args.runs, args.processes)
    if "file" not in args.skip:
        compare("one 100 MB trace", build_trace(100 << 20), args.runs, args.processes)


if __name__ == "__main__":
    main()
