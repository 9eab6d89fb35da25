"""`python bench/ranks.py --real` and `--md5` (issue #24): a 1,024-rank job made from REAL rank
files, and `--json` with md5 checks against md5sum at 100 MB and 1 GB.

--real: ranks 0-1022 are copies of rank 0 of fixtures/generated/dist215/diverge4 (torch 2.15,
gloo on CPU), rank 1023 is its rank 3, which genuinely diverged (another batch size, one
all_reduce outside the graph, a second function compiled); each file's rank is rewritten in its
name and wherever the trace records it (`"rank": N`; payloads, so their md5s, are untouched).
Measured against references taken in the same run, alternated, best of --runs:
  - `--json` against `cat` of the files (target <= 5x), peak RSS (/usr/bin/time -f %M, <= 200 MB),
    and the divergence found (asserted: rank 1023 apart, its compile id [1/0] named);
  - `--report`: its lines (a screenful, not one row per rank);
  - the explorer in tmux: its first screen (<= 1 s), against the corpus's small `model` trace,
    and when the tree shows the ranks grouped.
--md5: `--json` (every payload's md5 checked) against `md5sum` of the same file at 100 MB and
1 GB (target <= 1.5x at both).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from synth import BENCH_DIR, CORPUS, ROOT, build_trace

DIVERGE4 = ROOT / "fixtures" / "generated" / "dist215" / "diverge4" / "trace"
_RANK = re.compile(rb'("rank": )\d+')
TIME = "/usr/bin/time"


def real_rank_folder(ranks: int = 1024) -> Path:
    """Ranks 0..n-2 from diverge4's rank 0, rank n-1 from its rank 3 (the one that diverged)."""
    folder = BENCH_DIR / f"real_ranks_{ranks}"
    names = [folder / f"dedicated_log_torch_trace_rank_{r}_b{r:05d}.log" for r in range(ranks)]
    if all(name.exists() for name in names):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    same = next(DIVERGE4.glob("*rank_0_*.log")).read_bytes()
    odd = next(DIVERGE4.glob("*rank_3_*.log")).read_bytes()
    for rank, name in enumerate(names):
        name.write_bytes(_RANK.sub(rb"\g<1>" + str(rank).encode(), odd if rank == ranks - 1 else same))
    return folder


def run(cmd: list[str], output: bool = True) -> tuple[float, bytes, int]:
    """Seconds, stdout and peak RSS in KB (GNU time's %M, of the process and the children it
    waited for) of one command; with `output=False` its output goes to /dev/null (cat's: read
    into this process, it would measure this process)."""
    t = time.perf_counter()
    done = subprocess.run([TIME, "-f", "%M", *cmd], stdout=subprocess.PIPE if output else subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=1800, check=False)
    seconds = time.perf_counter() - t
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return seconds, done.stdout, int(done.stderr.decode().strip().splitlines()[-1])


def tlview(*args: str) -> list[str]:
    return [sys.executable, "-m", "tlview", *args]


def tlview_python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def check_divergence(doc: dict, ranks: int) -> None:
    """The diverging rank is found: grouped apart, and why the job may hang names it."""
    groups = [(g["ranks"], g["alike"]) for g in doc["rank_groups"]]
    assert groups == [(f"0-{ranks - 2}", True), (str(ranks - 1), False)], groups
    said = "\n".join(doc["hang_summary"])
    assert f"compile id [1/0] only on rank {ranks - 1}" in said, said
    assert doc["divergence"]["collective_sequences"]["groups"], "collective sequences not compared"


def first_screen(path: Path, grouped: str | None) -> tuple[float, float | None]:
    """Seconds from the command to the first screen (the tab bar drawn), and, with `grouped`, to
    the tree showing it (the ranks folded into groups)."""
    from tmux import Tmux

    start = time.perf_counter()
    with Tmux(f"{sys.executable} -m tlview {path}", Path.cwd()) as tmux:
        tmux.wait_for("Summary")
        first = time.perf_counter() - start
        folded = None
        if grouped:
            tmux.wait_for(grouped, timeout=300)
            folded = time.perf_counter() - start
        tmux.keys("q")
    return first, folded


def real_main(runs: int, ranks: int) -> None:
    folder = real_rank_folder(ranks)
    files = sorted(str(p) for p in folder.iterdir())
    size = sum(Path(f).stat().st_size for f in files)
    reference = next((CORPUS / "model" / "trace").glob("*.log"))
    print(f"{ranks:,} real rank files (dist215/diverge4: rank 0 x{ranks - 1}, rank 3 as rank {ranks - 1}), "
          f"{size / 1e6:,.0f} MB; best of {runs}, alternated")
    best: dict[str, float] = {}
    rss = 0
    for _ in range(runs):
        for name, cmd in (("cat", ["cat", *files]), ("md5sum", ["md5sum", *files]),
                          ("json", tlview("--json", str(folder))),
                          ("no-verify", tlview("--json", "--no-verify", str(folder)))):
            seconds, out, peak = run(cmd, output=name == "json")
            best[name] = min(best.get(name, 9e9), seconds)
            if name == "json":
                rss = max(rss, peak)
                check_divergence(json.loads(out), ranks)
        for name, path, grouped in (("model screen", reference, None),
                                    ("ranks screen", folder, "alike)")):
            first, folded = first_screen(path, grouped)
            best[name] = min(best.get(name, 9e9), first)
            if folded is not None:
                best["ranks grouped"] = min(best.get("ranks grouped", 9e9), folded)
    _, report, _ = run(tlview("--report", str(folder)))
    lines = report.decode().count("\n")
    print(f"  cat of the files     {best['cat']:6.2f} s   md5sum of the files {best['md5sum']:6.2f} s")
    print(f"  tlview --json        {best['json']:6.2f} s   {best['json'] / best['cat']:.1f}x cat (target <= 5x), "
          f"{best['json'] / best['md5sum']:.1f}x md5sum; peak RSS {rss / 1024:.0f} MB (target <= 200 MB); "
          f"divergence found: rank {ranks - 1} apart, [1/0] only on it")
    print(f"  --json --no-verify   {best['no-verify']:6.2f} s   "
          f"{best['no-verify'] / best['cat']:.1f}x cat (no md5 checked)")
    print(f"  tlview --report      {lines} lines (was one table per rank: 7,193 lines at 1,024 ranks)")
    print(f"  explorer (tmux)      first screen {best['ranks screen']:.2f} s (target <= 1 s; the corpus's small "
          f"model trace {best['model screen']:.2f} s in the same run), ranks grouped in the tree "
          f"{best['ranks grouped']:.2f} s")


def md5_main(runs: int) -> None:
    """--json with md5 checks against md5sum, at 100 MB and at 1 GB, alternated. Run it with the
    Python of a venv where tlview is installed as the README installs it (`pip install .`), from
    a folder other than the checkout: an editable install's import hook adds 17 ms to every start
    (6% at 100 MB), and `-m tlview` in the checkout imports the checkout."""
    where = subprocess.run(tlview_python("import sys, tlview; print(tlview.__file__, "
                                         "any('editable' in repr(f) for f in sys.meta_path))"),
                           capture_output=True, text=True, check=True).stdout.split()
    print(f"  tlview from {where[0]}" + (" (an EDITABLE install: +17 ms a start)" if where[1] == "True" else ""))
    for megabytes in (100, 1024):
        path = build_trace(megabytes << 20)
        best: dict[str, float] = {}
        for _ in range(runs):
            for name, cmd in (("md5sum", ["md5sum", str(path)]), ("json", tlview("--json", str(path))),
                              ("start", [sys.executable, "-c", ("import tlview.cli, tlview.index.indexing, "
                                                                    "tlview.report.summary")])):
                best[name] = min(best.get(name, 9e9), run(cmd, output=False)[0])
        print(f"  {path.stat().st_size / 1e6:6,.0f} MB: md5sum {best['md5sum']:5.2f} s, tlview --json (md5 "
              f"checked) {best['json']:5.2f} s = {best['json'] / best['md5sum']:.2f}x md5sum (target <= 1.5x); "
              f"of which the interpreter and tlview's imports {best['start']:.2f} s")
