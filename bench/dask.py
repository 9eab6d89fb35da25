"""Benchmark: `tlview --json --dask ADDRESS` on a LocalCluster of 2 workers against one process
(issue #24, "Past one machine").

    python bench/dask.py [--ranks 64,1024] [--repeat 2]

Builds folders of `--ranks` rank files, each a copy of a real rank's trace (dist215/diverge4's
rank 3), then times `tlview --json` (fresh processes, warm page cache, best of `--repeat`) three
ways: one process (TLVIEW_PROCESSES=1), the default (forked children, one a core) and --dask on a
LocalCluster of 2 worker processes (1 thread each; started once, its start timed apart). The
outputs must be the same bytes. Prints the times and their ratios against one process.

Then, in this process, what each file costs each step, for the projection to 100,000 ranks in
the README: finding the files, indexing one (what a worker does), the part's pickled size,
merging its part here, and the summary and JSON.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# This file's folder leaves the path: `import dask` (in distributed) would import this file.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
BENCH_DIR = Path(os.environ.get("TLVIEW_BENCH_DIR", "/tmp/tlview-bench"))  # (as synth.py's)

RANK_FILE = next((ROOT / "fixtures" / "generated" / "dist215" / "diverge4" / "trace").glob("*rank_3_*.log"))


def rank_copies(ranks: int) -> Path:
    folder = BENCH_DIR / f"dask_ranks_{ranks}"
    names = [folder / f"dedicated_log_torch_trace_rank_{rank}_copy{rank:05d}.log" for rank in range(ranks)]
    if not all(name.exists() for name in names):
        folder.mkdir(parents=True, exist_ok=True)
        data = RANK_FILE.read_bytes()
        for name in names:
            name.write_bytes(data)
    return folder


def timed_json(path: Path, *args: str, env: dict | None = None) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tlview", "--json", *args, str(path)], check=False,
                          capture_output=True, timeout=1800, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return time.perf_counter() - start, done.stdout


def best(repeat: int, path: Path, *args: str, env: dict | None = None) -> tuple[float, bytes]:
    runs = [timed_json(path, *args, env=env) for _ in range(repeat)]
    return min(t for t, _ in runs), runs[0][1]


def per_file_costs(folder: Path) -> dict:
    """Seconds a file for each step, in this process (--json's steps: no fork, no cluster)."""
    from tlview.index.dask_index import index_batch
    from tlview.index.index import Index
    from tlview.index.indexing import paused_gc
    from tlview.report.summary import build_summary
    from tlview.source.discover import find_logs
    from tlview.textsafe import json_bytes

    start = time.perf_counter()
    found, _ = find_logs(str(folder))
    index = Index(verify_md5=True)
    sources = [index.add_log(log) for log in found]
    for source in sources:
        source.size = os.path.getsize(source.path)
    found_s = time.perf_counter() - start
    start = time.perf_counter()
    parts = index_batch([(s.path, True, s.rank_from_name) for s in sources])
    indexed_s = time.perf_counter() - start
    sent = [pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL) for part in parts]
    start = time.perf_counter()
    parts = [pickle.loads(part) for part in sent]
    received_s = time.perf_counter() - start
    start = time.perf_counter()
    with paused_gc():  # as open_index merges
        for source, part in zip(sources, parts):
            index.merge_part(source, part)
        index.finish()
    merged_s = time.perf_counter() - start
    start = time.perf_counter()
    json_bytes(build_summary(index))
    summary_s = time.perf_counter() - start
    n = len(sources)
    return {"files": n, "find": found_s / n, "index": indexed_s / n, "part_bytes": sum(map(len, sent)) / n,
            "receive": received_s / n, "merge": merged_s / n, "summary_json": summary_s / n}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", default="64,1024")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    from distributed import LocalCluster

    print(f"rank file: {RANK_FILE.relative_to(ROOT)} ({RANK_FILE.stat().st_size:,} bytes); "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    start = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    print(f"LocalCluster of 2 workers started in {time.perf_counter() - start:.2f} s (not counted below)")
    try:
        for ranks in [int(r) for r in args.ranks.split(",")]:
            folder = rank_copies(ranks)
            one, one_out = best(args.repeat, folder, env={"TLVIEW_PROCESSES": "1"})
            default, default_out = best(args.repeat, folder)
            dask, dask_out = best(args.repeat, folder, "--dask", cluster.scheduler_address)
            assert one_out == default_out == dask_out, "the outputs differ"
            print(f"{ranks:>6} files: one process {one:6.2f} s | default (forks) {default:6.2f} s "
                  f"= {default / one:.2f}x | --dask 2 workers {dask:6.2f} s = {dask / one:.2f}x "
                  f"(same JSON, {len(one_out):,} bytes)")
    finally:
        cluster.close()
    costs = per_file_costs(rank_copies(max(int(r) for r in args.ranks.split(","))))
    print(f"a file, in one process ({costs['files']} files): find {costs['find'] * 1e3:.2f} ms, "
          f"index {costs['index'] * 1e3:.1f} ms (a worker's), part {costs['part_bytes'] / 1e3:.0f} kB "
          f"pickled, unpickled here {costs['receive'] * 1e3:.2f} ms, merged here {costs['merge'] * 1e3:.2f} ms, "
          f"summary+JSON {costs['summary_json'] * 1e3:.2f} ms")
    here = costs["find"] + costs["receive"] + costs["merge"] + costs["summary_json"]
    for workers in (100, 1000):
        spread = costs["index"] * 100_000 / workers
        print(f"projected, 100,000 such ranks on {workers} workers: index {spread:.0f} s spread over "
              f"the workers, {here * 100_000:.0f} s here (find, unpickle, merge, summary), "
              f"{costs['part_bytes'] * 100_000 / 1e9:.1f} GB of parts to receive")


if __name__ == "__main__":
    main()
