"""Inductor's runtime estimates in the `--perfetto` trace, as tlparse's `chromium_trace_with_runtime`
lays them out: a process per rank, a track (thread) per graph, and on it the graph's ops one after
the other, each as long as its estimate (at least 1 µs).

They follow the chromium events in the same file, in processes of their own (`rank 3 · runtime
estimates`), and start where the trace's first event does, so both show in one view.
"""

from __future__ import annotations

import math

from tlview.diagnose.rank_graphs import collect
from tlview.diagnose.runtime_estimates import runtime_tracks


def runtime_events(index, rank, first_pid: int, start_us: float):
    """(process label, events) per rank with estimates; `rank` is ... for all."""
    ranks = [r for r in index.ranks() if r is not None and (rank is ... or r == rank)]
    graphs = collect(index, ranks)
    by_rank: dict[int, list] = {}
    for r, cid, ops in runtime_tracks(graphs):
        by_rank.setdefault(r, []).append((cid, ops))
    for order, (r, tracks) in enumerate(sorted(by_rank.items())):
        pid = first_pid + order
        label = f"rank {r} · runtime estimates"
        events = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": label}},
                  {"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                   "args": {"sort_index": first_pid + order}}]
        for tid, (cid, ops) in enumerate(tracks, 1):
            events += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": f"graph {cid}"}},
                       {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": tid}}]
            at = start_us
            for name, ns in ops:
                took = max(1, math.ceil(ns / 1000.0))
                events.append({"name": name, "ph": "X", "ts": at, "dur": took, "pid": pid, "tid": tid,
                               "cat": "runtime", "args": {"graph": cid, "rank": r, "runtime_ns": int(ns)}})
                at += took
        yield label, len(tracks), events
