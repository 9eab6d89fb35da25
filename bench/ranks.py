"""Benchmark: a job of many ranks, each a small trace file (issue #26: 20,000 rank files took
5 min with `--json`, quadratic in the ranks).

    python bench/ranks.py [--ranks 20000] [--reference 2000] [--records 3]

Builds `--ranks` rank files of the corpus's first `--records` records each (a rank that compiled
one frame), and a `--reference` folder of fewer ranks made the same way, then times `tlview --json`
and `tlview --report` (fresh processes, warm page cache) on both. Prints the times and the ratio
big/reference against the ratio of their sizes: linear work gives a ratio near the size ratio,
quadratic work its square. Target: --json on 20,000 files <= 20 s on the 2-core machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import BENCH_DIR, CORPUS  # noqa: E402


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
    done = subprocess.run([sys.executable, "-m", "tlview", *args], capture_output=True, timeout=1800)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=20_000)
    parser.add_argument("--reference", type=int, default=2_000)
    parser.add_argument("--records", type=int, default=3)
    args = parser.parse_args()
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
