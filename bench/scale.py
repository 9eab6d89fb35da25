"""`python bench/scale.py` (issue #46): the four headless figures of the issue, each against a
reference measured in the same run, alternated, best of --runs, with the cores usable and the
1-minute load average beside each (the CPU check):

  - 1,024 real rank files (bench/ranks_real.py, 177 MB) `--json` against `cat` (target <= 0.6 s
    and <= 6x `cat` on the 2-core development machine);
  - one 100 MB trace `--json` (every md5 checked) against `md5sum` (target <= 1.5x);
  - 10,000 compile ids (bench/synth.py, 255 MB) `--report` (target <= 2 s) and `--json`,
    against `cat`.

Beside each, the floors a figure is read against (bench/floor.py): `python -c "import tlview..."`
(the interpreter and the modules --json imports), and the md5 of each payload in one Python
process, the least a Python scanner that checks md5s does (divide it by the cores).

`--profile NAME` (ranks, file, ids) prints instead a cProfile of the parent process's time for
that figure (cumulative, the top --top lines); children are not profiled.
Run it under `taskset -c 0,1` to hold a bigger machine to 2 cores, or with TLVIEW_PROCESSES=N.

    python bench/scale.py [--runs 3] [--skip ranks,file,ids] [--profile ids [--top 25]]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from ranks_real import real_rank_folder
from synth import build_many_compile_ids, build_trace

TLVIEW = [sys.executable, "-m", "tlview"]
IMPORTS = [sys.executable, "-c",
           "import tlview.cli, tlview.index.indexing, tlview.report.summary, tlview.views.filters"]
FLOOR = [sys.executable, str(Path(__file__).with_name("floor.py"))]


def took(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True, timeout=900)
    return time.perf_counter() - started


def files_of(path: Path) -> list[str]:
    return sorted(str(p) for p in path.iterdir()) if path.is_dir() else [str(path)]


def figure(name: str, commands: dict[str, list[str]], reference: str, runs: int, target: str) -> None:
    best: dict[str, float] = {}
    loads = []
    for _ in range(runs):
        for label, command in commands.items():
            seconds = took(command)
            best[label] = min(best.get(label, seconds), seconds)
            loads.append(os.getloadavg()[0])
    cores = len(os.sched_getaffinity(0))
    print(f"{name} ({cores} cores usable, load {min(loads):.1f}-{max(loads):.1f}, best of {runs}; target {target})")
    for label, seconds in best.items():
        ratio = "" if label == reference else f"  = {seconds / best[reference]:.2f}x {reference}"
        print(f"  {label:22} {seconds:7.3f} s{ratio}")


def floors(path: Path) -> dict[str, list[str]]:
    return {"floor: start + imports": IMPORTS, "floor: md5s, 1 process": [*FLOOR, str(path)]}


def profile(path: Path, args: list[str], top: int) -> None:
    code = (
        "import cProfile, pstats, sys, io, os\n"
        "from tlview import cli\n"
        "p = cProfile.Profile(); sys.argv = ['tlview', *sys.argv[1:]]\n"
        "out = sys.stdout; sys.stdout = open(os.devnull, 'w')\n"
        "p.enable()\n"
        "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
        "p.disable(); sys.stdout = out\n"
        f"pstats.Stats(p).sort_stats('cumulative').print_stats({top})\n"
    )
    subprocess.run([sys.executable, "-c", code, *args, str(path)], check=True, timeout=900)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip", default="")
    parser.add_argument("--profile", choices=["ranks", "file", "ids"])
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    ranks, file, ids = real_rank_folder(1024), build_trace(100 << 20), build_many_compile_ids(10_000)
    if args.profile:
        chosen = {"ranks": (ranks, ["--json"]), "file": (file, ["--json"]), "ids": (ids, ["--report"])}
        path, flags = chosen[args.profile]
        profile(path, flags, args.top)
        return
    if "ranks" not in args.skip:
        figure("1,024 real rank files, 177 MB",
               {"cat": ["cat", *files_of(ranks)], "tlview --json": [*TLVIEW, "--json", str(ranks)],
                **floors(ranks)},
               "cat", args.runs, "<= 0.6 s and <= 6x cat")
    if "file" not in args.skip:
        figure("one 100 MB trace",
               {"md5sum": ["md5sum", str(file)], "tlview --json": [*TLVIEW, "--json", str(file)], **floors(file)},
               "md5sum", args.runs, "<= 1.5x md5sum")
    if "ids" not in args.skip:
        figure("10,000 compile ids, 255 MB",
               {"cat": ["cat", str(ids)], "tlview --report": [*TLVIEW, "--report", str(ids)],
                "tlview --json": [*TLVIEW, "--json", str(ids)], **floors(ids)},
               "cat", args.runs, "--report <= 2 s")


if __name__ == "__main__":
    main()
