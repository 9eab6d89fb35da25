"""Benchmark: tlview under hostile conditions, measured from outside (fresh processes, tmux).

    python bench/hostile.py [--payload-mb 500] [--files 5000] [--skip follow,ctrl-c,...]

1. memory: the explorer's peak RSS after opening every pane on the first 8 entries of a 1 GB trace,
   against the same walk on the 3 MB corpus trace (ratio). Target: under 100 MB.
2. payload: a 500 MB payload (many lines, and one line): `--json` peak RSS against the clean
   trace's; the explorer's peak RSS and the time from selecting it to its text on screen.
3. ctrl-c: from SIGINT to exit for `--json` of 1 GB (its forked child too), and from the Ctrl-C key
   to the shell prompt for the explorer in tmux. Target: under 1 s.
4. follow: the CPU an idle `--follow` of 5,000 rank files takes (10 s), against one file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import CORPUS, ROOT, build_trace
from tmux import Tmux

SMALL = next((CORPUS / "recompiles" / "trace").glob("*.log"))

# Run in a fresh interpreter: walks the panes, prints peak RSS and what it timed.
PANE_WALK = r"""
import asyncio, json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from tlview.ui.app import TlviewApp
from tlview.ui.detail import TABS

async def main(path, entries, payload_name):
    app = TlviewApp(path)
    shown_in = None
    async with app.run_test(size=(160, 48)) as pilot:
        while not app.facts.finished:
            await pilot.pause(0.05)
        await app.workers.wait_for_complete()
        for _ in range(entries):
            for tab_id, *_ in TABS:
                app.detail.active = tab_id
                await pilot.pause()
                await app.workers.wait_for_complete()
                if tab_id == "graphs":
                    graphs = app.detail.pane("graphs")
                    for i, artifact in enumerate(list(graphs._artifacts)):
                        view = graphs.query_one("#graph-view")
                        start = time.perf_counter()
                        graphs.query_one("#graph-list").highlighted = i
                        while True:
                            await pilot.pause(0.005)
                            if not app.workers._workers or view.line_count > 1:
                                break
                        await app.workers.wait_for_complete()
                        if artifact.name == payload_name and shown_in is None:
                            shown_in = time.perf_counter() - start
            await pilot.press("down")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_mb": peak, "shown_s": shown_in}))

asyncio.run(main(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
"""


def pane_walk(path: Path, entries: int = 8, payload: str = "inductor_output_code") -> dict:
    out = subprocess.run([sys.executable, "-c", PANE_WALK, str(ROOT), str(path), str(entries), payload],
                         capture_output=True, text=True, timeout=1800, check=False)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def peak_rss_of(*args: str) -> float:
    """Peak RSS (MB) of `python -m tlview ARGS` and the children it waited for."""
    script = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL);"
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", script, sys.executable, "-m", "tlview", *args],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    return float(out.stdout.strip())


def memory() -> None:
    big = build_trace(1024 << 20, "model")
    small = pane_walk(SMALL)
    large = pane_walk(big)
    print(f"memory   every pane on 8 entries: 3 MB trace {small['peak_mb']:.0f} MB, 1 GB trace "
          f"{large['peak_mb']:.0f} MB peak RSS  (ratio {large['peak_mb'] / small['peak_mb']:.2f}; "
          "target < 100 MB)")


def built_apart(size: int, one_line: bool) -> Path:
    """The huge payload trace, built in a process of its own: a process's peak RSS is passed on to
    the processes it starts (getrusage(2)), and building it takes GBs."""
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from synth import build_huge_payload;"
              "print(build_huge_payload(int(sys.argv[2]), sys.argv[3] == '1'))")
    out = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent), str(size),
                          "1" if one_line else "0"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def payload(size_mb: int) -> None:
    clean = peak_rss_of("--json", str(SMALL))
    small = pane_walk(SMALL, entries=1)
    for one_line in (False, True):
        path = built_apart(size_mb << 20, one_line)
        what = "one line" if one_line else "lines"
        json_rss = peak_rss_of("--json", str(path))
        walk = pane_walk(path, entries=1)
        print(f"payload  {size_mb} MB ({what}): --json peak {json_rss:.0f} MB vs {clean:.0f} MB clean "
              f"(ratio {json_rss / clean:.2f}); explorer peak {walk['peak_mb']:.0f} MB vs "
              f"{small['peak_mb']:.0f} MB, shown in {walk['shown_s']:.3f} s vs "
              f"{small['shown_s']:.3f} s for the real one")


def ctrl_c() -> None:
    big = build_trace(1024 << 20, "model")
    proc = subprocess.Popen([sys.executable, "-m", "tlview", "--json", str(big)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    while proc.poll() is None and not (children.exists() and children.read_text().strip()):
        time.sleep(0.005)
    time.sleep(0.2)  # well into indexing
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate()
    took = time.perf_counter() - sent
    print(f"ctrl-c   --json of 1 GB: exit {proc.returncode} {took:.3f} s after SIGINT"
          f"{'; TRACEBACK' if b'Traceback' in err else ''}  (target < 1 s)")
    with Tmux(f"{sys.executable} -m tlview {big}; echo EXITED:$?", cwd=ROOT) as tmux:
        tmux.wait_for("[0/0]")  # the first screen, while the rest is indexed
        sent = time.perf_counter()
        tmux.keys("C-c")
        screen = tmux.wait_for("EXITED:")
        took = time.perf_counter() - sent
        code = screen.split("EXITED:")[1].split()[0]
    print(f"ctrl-c   explorer indexing 1 GB: shell back {took:.3f} s after the key (exit {code})")


def follow(files: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tlview-files-"))
    one = Path(tempfile.mkdtemp(prefix="tlview-file-"))
    try:
        small = SMALL.read_bytes()[:200_000]
        small = small[:small.rfind(b"\nV") + 1]
        (one / "dedicated_log_torch_trace_rank_0_x.log").write_bytes(small)
        for rank in range(files):
            (folder / f"dedicated_log_torch_trace_rank_{rank}_x.log").write_bytes(small)
        results = {}
        for name, path in (("1 file", one), (f"{files:,} files", folder)):
            with Tmux(f"exec {sys.executable} -m tlview --follow {path}", cwd=ROOT) as tmux:
                tmux.wait_for("LIVE", timeout=300)
                time.sleep(3)  # the first reads are done (an idle follow from here)
                pid = tmux.pane_pid()
                before = cpu_seconds(pid)
                time.sleep(10)
                results[name] = (cpu_seconds(pid) - before) / 10 * 100
                status = next(line for line in tmux.screen().splitlines() if "LIVE" in line).strip()
            print(f"follow   idle {name}: {results[name]:.1f}% of a core  [{status[:110]}]")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(one, ignore_errors=True)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--payload-mb", type=int, default=500)
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--skip", default="", help="comma-separated: memory,payload,ctrl-c,follow")
    args = ap.parse_args()
    skip = set(args.skip.split(","))
    if "memory" not in skip:
        memory()
    if "payload" not in skip:
        payload(args.payload_mb)
    if "ctrl-c" not in skip:
        ctrl_c()
    if "follow" not in skip:
        follow(args.files)


if __name__ == "__main__":
    main()
