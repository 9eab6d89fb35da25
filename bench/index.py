"""Benchmark: the full index of a 1 GB trace, against `grep -c '^V'` and tlparse, in one run.

    python bench/index.py [--size-mb 1024] [--tlparse-mb 100] [--runs 3]

Prints tlview's wall time and peak RSS (each run in a fresh interpreter, warm page cache, best of
--runs), the ratio to `grep -c '^V'` on the same file, and the speed-up over tlparse on a 100 MB
prefix (when `tlparse` is installed: `pip install tlparse`). Targets: <= 4x grep, <= 64 MB peak
RSS, >= 100x faster than tlparse.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import build_trace, prefix_at_record  # noqa: E402

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from tlview.model.index import Index
t1 = time.perf_counter()
index = Index.open(sys.argv[1], verify_md5=False)
t2 = time.perf_counter()
totals = index.totals()
print(json.dumps({"import_s": t1 - t0, "index_s": t2 - t1,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "records": totals.records, "compile_ids": totals.compile_ids}))
"""


def tlview_run(path: Path) -> dict:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True,
                         check=True)
    result = json.loads(out.stdout)
    result["process_s"] = time.perf_counter() - t
    return result


def grep_run(path: Path) -> float:
    # Output to a pipe: GNU grep stops at the first match when its output is /dev/null.
    t = time.perf_counter()
    subprocess.run(["grep", "-c", "^V", str(path)], stdout=subprocess.PIPE, check=False)
    return time.perf_counter() - t


def tlparse_run(path: Path) -> float | None:
    exe = shutil.which("tlparse")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        subprocess.run([exe, str(path), "-o", out, "--overwrite", "--no-browser"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--tlparse-mb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()

    big = build_trace(args.size_mb << 20)
    print(f"trace: {big} ({big.stat().st_size / 1e6:,.0f} MB)")
    grep_run(big)  # warm the page cache
    grep_s = min(grep_run(big) for _ in range(args.runs))
    runs = [tlview_run(big) for _ in range(args.runs)]
    best = min(runs, key=lambda r: r["index_s"])
    print(f"grep -c '^V'         {grep_s:6.2f} s")
    print(f"tlview index         {best['index_s']:6.2f} s  (+{best['import_s']:.2f} s imports; "
          f"{best['records']:,} records, {best['compile_ids']:,} compile ids)")
    print(f"tlview peak RSS      {max(r['rss_mb'] for r in runs):6.1f} MB   (target <= 64 MB)")
    print(f"ratio tlview/grep    {best['index_s'] / grep_s:6.2f} x    (target <= 4x)")

    small = prefix_at_record(big, args.tlparse_mb << 20, f"prefix_{args.tlparse_mb}mb.log")
    small_runs = [tlview_run(small) for _ in range(args.runs)]
    small_best = min(r["index_s"] for r in small_runs)
    small_process = min(r["process_s"] for r in small_runs)
    tlparse_s = tlparse_run(small)
    print(f"{args.tlparse_mb} MB prefix: tlview index {small_best:.3f} s "
          f"(whole process with interpreter start {small_process:.2f} s)")
    if tlparse_s is None:
        print("tlparse not installed (pip install tlparse): no comparison")
    else:
        print(f"{args.tlparse_mb} MB prefix: tlparse {tlparse_s:.2f} s -> tlview is "
              f"{tlparse_s / small_best:.0f}x faster (index), "
              f"{tlparse_s / small_process:.0f}x (whole process)   (target >= 100x)")


if __name__ == "__main__":
    main()
