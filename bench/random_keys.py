"""Probe: random keys at a person's pace, in tmux, until tlview ends (a crash) or the keys run out.

    python bench/random_keys.py [--keys 500] [--seeds 1,2,3] [--size 80x24] [PATH-OR-ARGS...]

Not a timing: each run prints `alive`, `quit` (the palette's Quit, exit 0), or `ENDED` with the
exit code, the last keys and the screen (the traceback, with TLVIEW_DEBUG=1). The arguments
after the options are tlview's (`--compare A B`, `--follow DIR`, a path); with none, each seed
drives the explorer and the compare view of the corpus's runs (DEFAULT_RUNS). Movement, digits
(0: the Perf pane), b/r/x/p/P, m, o, y, n/N, `?`, `f`, Tab, Ctrl+P, pages, bookmarks (M ' "), the
jump to a time (`t`, then h/l, `+`, `%`, Enter or Esc), and now and then a filter typed after `/`
(`perf` among its words), 0-80 ms apart. It found
three ways tlview ended in stop 41: a pane shown before it was mounted, the compare view's Run
pane with nothing selected, Ctrl+P's page keys while its list was replaced (each now a test).
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tmux import Tmux

KEYS = [*"jkgGbrxpPmoy1234567890nN?fFJK[] ", *"M'\"thl+%:", "Enter", "Escape", "Tab", "BTab", "Up", "Down",
        "PageDown", "PageUp", "Home", "End", "Left", "Right", "C-p"]
WORDS = ["recompiles", "graph_breaks", "rank:1", "buf0", "x", "errors", "perf", "zzzz"]
ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "corpus"
DEFAULT_RUNS = [[str(CORPUS / "recompiles" / "trace")],
                ["--compare", str(CORPUS / "recompiles" / "trace"), str(CORPUS / "graph_breaks" / "trace")]]


def run(args: list[str], size: str, seed: int, keys: int) -> bool:
    """False when tlview ended with an error (exit 0: the keys quit it, which is fine)."""
    rnd = random.Random(seed)
    width, height = size.split("x")
    pressed: list[str] = []
    ended = Path(tempfile.mkdtemp(prefix="tlview-keys-")) / "ended"
    command = (f"TLVIEW_DEBUG=1 PAGER=cat EDITOR=true {shlex.quote(sys.executable)} -m tlview "
               f"{shlex.join(args)}; echo $? > {ended}")
    with Tmux(command, ROOT) as tmux:
        tmux.run("resize-window", "-t", "b", "-x", width, "-y", height)
        tmux.wait_for("compile id", timeout=60)
        for _ in range(keys):
            if ended.exists():
                break
            chosen = ["/", *rnd.choice(WORDS), "Enter"] if rnd.random() < 0.05 else [rnd.choice(KEYS)]
            pressed += chosen
            tmux.keys(*chosen)
            time.sleep(rnd.choice((0.0, 0.01, 0.03, 0.08)))
        time.sleep(1.0)
        screen = tmux.screen()
    code = ended.read_text().strip() if ended.exists() else None
    if code == "0":  # the keys quit it (the palette's Quit): not a failure
        print(f"seed {seed} {size}: quit (exit 0) after {len(pressed)} keys")
        return True
    print(f"seed {seed} {size}: {'alive' if code is None else f'ENDED (exit {code})'} after {len(pressed)} keys")
    if code is not None:
        print("last keys:", pressed[-25:])
        print(screen)
    return code is None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=500)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--size", default="80x24")
    args, tlview_args = parser.parse_known_args()  # (the rest are tlview's: `--compare A B` too)
    runs = [tlview_args] if tlview_args else DEFAULT_RUNS
    results = []
    for run_args in runs:
        print("tlview", shlex.join(a.replace(str(ROOT) + "/", "") for a in run_args))
        results += [run(run_args, args.size, int(seed), args.keys) for seed in args.seeds.split(",")]
    raise SystemExit(0 if all(results) else 1)


if __name__ == "__main__":
    os.environ.setdefault("TERM", "xterm-256color")
    main()
