"""Live soak: the explorer follows a folder while two rank writers append; rank 0's file is
truncated and rewritten twice (a job re-run), rank 1's writer dies in the middle of a record.

    python bench/soak.py [--minutes 10] [--rate 40]

Prints records written vs indexed per file (equal, but for the torn record, which is reported),
RSS over time, and the CPU the follower uses once the writers are quiet (target < 1%).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import CORPUS

from tlview.domain.totals import totals as index_totals
from tlview.ui.app import TlviewApp

WRITER = textwrap.dedent('''
    import os, re, sys, time
    path, source, seconds, rate, mode = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    frame = re.compile(rb'(?m)^(V[^\\n]*?"frame_id": )(\\d+)')
    records = [r for r in re.split(rb"(?m)^(?=V\\d{4} )", open(source, "rb").read()) if r]
    start = time.monotonic()
    written = 0          # whole records in the file now
    truncations = [seconds / 3, 2 * seconds / 3] if mode == "truncate" else []
    f = open(path, "ab")
    copy = 0
    while True:
        for r in records:
            now = time.monotonic() - start
            if truncations and now >= truncations[0]:
                truncations.pop(0)
                f.close()
                f = open(path, "wb")  # the re-run: the file is truncated and written again
                written = 0
            if now >= seconds:
                if mode == "die":  # half a record, then the process is gone
                    f.write(r[: len(r) // 2]); f.flush()
                    print(written, "torn", flush=True)
                    os._exit(0)
                print(written, flush=True)
                sys.exit(0)
            f.write(frame.sub(lambda m: m.group(1) + str(int(m.group(2)) + copy * 8).encode(), r))
            f.flush()
            written += 1
            time.sleep(1 / rate)
        copy += 1
''')


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def soak(minutes: float, rate: float) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tlview-soak-"))
    sources = {0: next((CORPUS / "distributed" / "trace").glob("*rank_0*")),
               1: next((CORPUS / "distributed" / "trace").glob("*rank_1*"))}
    paths = {r: folder / f"dedicated_log_torch_trace_rank_{r}_soak.log" for r in sources}
    # (Popen starts each writer and returns: nothing here waits on them while the app runs)
    writers = {
        rank: subprocess.Popen(  # noqa: ASYNC220
            [sys.executable, "-c", WRITER, str(paths[rank]), str(sources[rank]), str(minutes * 60), str(rate), mode],
            stdout=subprocess.PIPE, text=True)
        for rank, mode in ((0, "truncate"), (1, "die"))
    }
    app = TlviewApp(str(folder), follow=True)
    samples = []
    start = time.monotonic()
    async with app.run_test(size=(150, 45)) as pilot:
        next_sample = 0.0
        while any(w.poll() is None for w in writers.values()):
            elapsed = time.monotonic() - start
            if elapsed >= next_sample:
                samples.append((elapsed / 60, rss_mb(), index_totals(app.index).records))
                next_sample += 30
            await pilot.pause(0.5)
        await pilot.pause(3)  # the last appends
        written = {r: w.stdout.read().split() for r, w in writers.items()}
        samples.append(((time.monotonic() - start) / 60, rss_mb(), index_totals(app.index).records))
        cpu0, t0 = sum(os.times()[:2]), time.monotonic()
        await pilot.pause(20)  # idle: the writers are gone
        idle_cpu = (sum(os.times()[:2]) - cpu0) / (time.monotonic() - t0) * 100
        indexed = {r: len(next(s for s in app.index.sources if s.path == str(paths[r])).offsets)
                   for r in paths}
        app.index.finish()
        problems = [p.describe() for p in app.index.problems]
        notes = [n for n in app.index.notes if "truncated" in n]
    print(f"followed {folder} for {minutes:g} minutes, writers at {rate:g} records/s each")
    for r in paths:
        torn = " + 1 torn record" if "torn" in written[r] else ""
        print(f"  rank {r}: records written {int(written[r][0]):,}{torn}, indexed {indexed[r]:,}")
    print(f"  truncations seen and re-indexed: {len(notes)}")
    print(f"  problems reported: {len(problems)}" + "".join(f"\n    {p}" for p in problems[:5]))
    print("  minute   RSS MB   records indexed")
    for minute, rss, records in samples:
        print(f"  {minute:6.1f}   {rss:6.1f}   {records:,}")
    print(f"  CPU while idle (following, no writes): {idle_cpu:.2f}%   (target < 1%)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=40.0)
    args = ap.parse_args()
    asyncio.run(soak(args.minutes, args.rate))


if __name__ == "__main__":
    main()
