"""Benchmark: a job of many ranks, each a small trace file (issue #26: 20,000 rank files took
5 min with `--json`, quadratic in the ranks).

    python bench/ranks.py [--ranks 20000] [--reference 2000] [--records 3]

Builds `--ranks` rank files of the corpus's first `--records` records each (a rank that compiled
one frame), and a `--reference` folder of fewer ranks made the same way, then times `tlview --json`
and `tlview --report` (fresh processes, warm page cache) on both. Prints the times and the ratio
big/reference against the ratio of their sizes: linear work gives a ratio near the size ratio,
quadratic work its square. Target: --json on 20,000 files <= 20 s on the 2-core machine.

    python bench/ranks.py --explorer [--ranks 20000] [--ids 10000]

The explorer from outside, in tmux (what a person sees): on the rank folder and on one trace of
`--ids` compile ids, against the corpus's small `model` trace in the same run: the first screen,
its first rows and the tree and its counts shown whole with no key pressed; then, in a second run,
the keys pressed while it fills in (pane switches, moves), keys after that, and `q`. tlview's
bytecode is compiled first, as an installed tlview has it.
Targets (issue #26): first screen <= 2 s, keys <= 150 ms, 10,000 ids: the tree within 2 s.

    python bench/ranks.py --real [--runs 3] [--real-ranks 1024]
    python bench/ranks.py --md5 [--runs 3]

1,024 ranks made from real rank files, one diverging: --json against cat, peak RSS, the
divergence found, --report's lines, the explorer's first screen; and --json with md5 checks
against md5sum at 100 MB and 1 GB (issue #24; bench/ranks_real.py says how).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import BENCH_DIR, CORPUS


def first_records(count: int) -> bytes:
    """The first `count` records (envelope line and payload lines) of a real trace."""
    data = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes()
    lines = data.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if not line.startswith(b"\t")]
    end = starts[count] if count < len(starts) else len(lines)
    return b"".join(lines[:end])


def rank_folder(ranks: int, records: int) -> Path:
    folder = BENCH_DIR / f"small_ranks_{ranks}_{records}"
    names = [folder / f"dedicated_log_torch_trace_rank_{rank}_x{rank:05d}.log" for rank in range(ranks)]
    if not all(name.exists() for name in names):
        folder.mkdir(parents=True, exist_ok=True)
        data = first_records(records)
        for name in names:
            name.write_bytes(data)
    return folder


def timed(*args: str) -> float:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tlview", *args], capture_output=True, timeout=1800, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return time.perf_counter() - t


def compile_ids(path: Path) -> int:
    """The run's compile ids, as --json counts them: the explorer's status line when it shows all."""
    done = subprocess.run([sys.executable, "-m", "tlview", "--json", str(path)], capture_output=True,
                          timeout=1800, check=True)
    return json.loads(done.stdout)["totals"]["compile_ids"]


MAX_KEYS = 60  # keys pressed while the explorer fills in, at most

# The default theme's colours (bench/tmux.py captures them as SGR escapes).
ACTIVE_TAB = re.compile(r"\x1b\[1m\x1b\[38;5;\d+m(\d) ")  # the active tab's label: bold, the others not
CURSOR = re.compile(r"\x1b\[48;5;25m([^\x1b]+)")  # the tree's cursor row, while the tree has focus


def active_tab(screen: str) -> str | None:
    """The active tab's number, from the tab bar at 160 columns (labels in full): the first line
    with "1 Summary" (the headline, when there is one, is above it), right of the tree's border."""
    line = next((row for row in screen.splitlines() if "1 Summary" in row), "")
    found = ACTIVE_TAB.search(line.partition("\u2595")[2])  # (right of the tree's border)
    return found.group(1) if found else None


def cursor_row(screen: str) -> str | None:
    for line in screen.splitlines():
        found = CURSOR.search(line.partition("\u2595")[0])
        if found:
            return found.group(1).strip()
    return None


def explorer(path: Path) -> dict:
    """Seconds to the first screen and to the whole tree (no key pressed), then key latencies (ms)
    while it fills in and after, and `q` to the shell."""
    from tmux import Tmux

    def key_ms(tmux: Tmux, key: str) -> float:
        """From the key to its own mark on the screen: a digit's tab drawn active, j/k's cursor on
        another row. Any change would not do: while the explorer fills in, the screen changes by
        itself, and a pane that draws the same text for two tabs hides a switch."""
        mark = active_tab if key.isdigit() else cursor_row
        before = mark(tmux.styled_screen())
        start = time.perf_counter()
        tmux.keys(key)
        while time.perf_counter() - start < 60:
            now = mark(tmux.styled_screen())
            if (now == key) if key.isdigit() else (now is not None and now != before):
                break
            time.sleep(0.005)
        elapsed = (time.perf_counter() - start) * 1000
        time.sleep(0.2)  # a person's next key comes later: this one's redraw is not the next one's
        return elapsed

    result: dict = {}
    whole = compile_ids(path)
    counted = f"{whole:,} compile ids"  # the status line's count, once the tree holds them all

    def done(screen: str) -> bool:
        """Read whole: every compile id counted and the reading over. (The count came a second
        before the end at 20,000 ranks, when the ranks alike fold into one row: keys pressed
        after the count alone landed on the fold, a `j` on the last row moved nothing.)"""
        return counted in screen and "indexing" not in screen

    def wait_done(tmux: Tmux) -> None:
        started = time.monotonic()
        while not done(tmux.screen()):
            if time.monotonic() - started > 600:
                raise SystemExit(f"not read whole in 600 s:\n{tmux.screen()}")
            time.sleep(0.01)
    # A person who opens it and waits: no key pressed (a key defers the filling, keys_first.py).
    start = time.perf_counter()
    with Tmux(f"{sys.executable} -m tlview {path}", Path.cwd()) as tmux:
        tmux.wait_for("Summary")
        result["first_screen_s"] = time.perf_counter() - start
        tmux.wait_for("compile ids")
        result["rows_s"] = time.perf_counter() - start
        wait_done(tmux)
        result["tree_s"] = time.perf_counter() - start
        tmux.keys("q")
    # A person who reads while it fills in: keys in turn from its first rows on (a key on an
    # empty tree changes nothing), pane switches and moves at a person's pace, until it is whole.
    with Tmux(f"{sys.executable} -m tlview {path}", Path.cwd()) as tmux:
        tmux.wait_for("compile ids")
        result["keys_filling_ms"] = []
        for key in itertools.cycle(("2", "1", "9", "1", "j", "k")):
            if done(tmux.screen()) or len(result["keys_filling_ms"]) >= MAX_KEYS:
                break
            result["keys_filling_ms"].append(key_ms(tmux, key))
        wait_done(tmux)
        time.sleep(1)  # what the last read started (panes, totals) settles: keys are then measured
        # (k first: ranks alike fold into a few rows once read, the cursor on the last one)
        result["keys_after_ms"] = [key_ms(tmux, key) for key in ("k", "j", "9", "1", "k")]
        start = time.perf_counter()
        tmux.keys("q")
        while tmux.run("display-message", "-p", "-t", "b", "#{pane_current_command}").strip() != "sleep":
            time.sleep(0.01)
        result["quit_ms"] = (time.perf_counter() - start) * 1000
    return result


def compiled() -> None:
    """tlview's bytecode, as `pip install` leaves it: in a checkout with PYTHONDONTWRITEBYTECODE set
    (this workplace's machines), every start compiled tlview's modules again (0.25 s)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(__file__).resolve().parent.parent / "tlview")],
                   check=True)


def explorer_main(args) -> None:
    from synth import build_many_compile_ids

    compiled()
    runs = {"model (reference)": next((CORPUS / "model" / "trace").glob("*.log")),
            f"{args.ranks:,} rank files": rank_folder(args.ranks, args.records),
            f"{args.ids:,} compile ids": build_many_compile_ids(args.ids)}
    reference = None
    for name, path in runs.items():
        if args.only and reference is not None and args.only not in name:
            continue
        r = explorer(path)
        reference = reference or r
        print(f"  {name:20} first screen {r['first_screen_s']:5.2f} s "
              f"({r['first_screen_s'] / reference['first_screen_s']:.1f}x the reference)   "
              f"first rows {r['rows_s']:5.2f} s   whole tree {r['tree_s']:6.2f} s (no key; "
              f"{r['tree_s'] / reference['first_screen_s']:.1f}x the reference's first screen)   keys while filling "
              f"{spread(r['keys_filling_ms'])}   after {spread(r['keys_after_ms'])}   q {r['quit_ms']:.0f} ms")


def spread(latencies: list[float]) -> str:
    """Key latencies: how many, the median, the slowest, how many over the 150 ms target, and the
    first six as pressed."""
    if not latencies:
        return "none"
    ordered = sorted(latencies)
    over = sum(1 for k in latencies if k > 150)
    return (f"n={len(latencies)} median {ordered[len(ordered) // 2]:.0f} max {ordered[-1]:.0f} ms, "
            f"{over} over 150 ms [{' '.join(f'{k:.0f}' for k in latencies[:6])}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=20_000)
    parser.add_argument("--reference", type=int, default=2_000)
    parser.add_argument("--records", type=int, default=3)
    parser.add_argument("--explorer", action="store_true", help="time the explorer in tmux")
    parser.add_argument("--ids", type=int, default=10_000)
    parser.add_argument("--only", help="with --explorer: the reference and the runs whose name has this")
    parser.add_argument("--real", action="store_true", help="1,024 ranks from real rank files, one diverging")
    parser.add_argument("--real-ranks", type=int, default=1024)
    parser.add_argument("--md5", action="store_true", help="--json with md5 checks against md5sum, 100 MB and 1 GB")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.real or args.md5:
        from ranks_real import md5_main, real_main

        compiled()
        if args.real:
            real_main(args.runs, args.real_ranks)
        if args.md5:
            md5_main(args.runs)
        return
    if args.explorer:
        explorer_main(args)
        return
    big, small = rank_folder(args.ranks, args.records), rank_folder(args.reference, args.records)
    size_ratio = args.ranks / args.reference
    print(f"{args.ranks:,} rank files against {args.reference:,} ({size_ratio:.0f}x the files), "
          f"{args.records} records each")
    for mode in ("--json", "--report"):
        reference = timed(mode, str(small))
        measured = timed(mode, str(big))
        print(f"  {mode:9} {args.reference:>6,} files {reference:6.2f} s   {args.ranks:>6,} files "
              f"{measured:6.2f} s   ratio {measured / reference:5.1f} (linear: {size_ratio:.0f}, "
              f"quadratic: {size_ratio ** 2:.0f})")


if __name__ == "__main__":
    main()
