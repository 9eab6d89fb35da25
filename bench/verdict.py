"""Benchmark: what deciding every compile's verdict costs, against indexing the same trace, in one
process (a ratio: these machines are noisy).

    python bench/verdict.py [--compile-ids 10000]

Indexes a synthetic trace of many compile ids (bench/synth.py: the corpus renumbered), then times
(1) judging every compile cold, (2) reading every verdict again (cached), (3) the totals of the
run, and (4) the whole --json document, each as a ratio to the indexing time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synth import build_many_compile_ids

from tlview.domain.totals import totals
from tlview.index.indexing import open_index
from tlview.report.summary import build_summary


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--compile-ids", type=int, default=10_000)
    args = parser.parse_args()
    path = build_many_compile_ids(args.compile_ids)
    index_s, index = timed(lambda: open_index(str(path), verify_md5=False, parallel_ok=False))
    compiles = {n.compile for n in index.iter_nodes()}
    cold_s, _ = timed(lambda: [c.verdict for c in compiles])
    warm_s, _ = timed(lambda: [c.verdict for c in compiles])
    totals_s, t = timed(lambda: totals(index))
    json_s, _ = timed(lambda: build_summary(index))
    print(f"{path.name}: {t.compile_ids:,} compile ids, {len(compiles):,} compiles, "
          f"{t.recompiles:,} recompiles, {t.graph_breaks:,} graph breaks, {t.errors:,} failures")
    print(f"index        {index_s:7.3f} s  1.00x")
    for name, seconds in (("verdicts cold", cold_s), ("verdicts warm", warm_s), ("totals", totals_s),
                          ("--json doc", json_s)):
        print(f"{name:12} {seconds:7.3f} s  {seconds / index_s:.3f}x of indexing")


if __name__ == "__main__":
    main()
