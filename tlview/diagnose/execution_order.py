"""The order each rank ran its graphs in (the `graph_execution` artifact), compared across ranks.

As tlparse 0.4.3's execution-order diagnostics: the orders are aligned by position; at each
position the ranks that ran a graph there are compared by the graph's collective schedule
(`schedule_mismatch_ranks`: every rank at a position where those differ) and by its cache outcome
(`cache_mismatch_ranks`); `order_differs` when ranks ran different compile ids at one position.
Needs two ranks with an order. Here also: where the orders first part, ranks grouped.

Ranks with the same order, schedules and cache outcomes are compared once (20,000 ranks of one
job are a handful of kinds).
"""

from __future__ import annotations

from tlview.diagnose.rank_graphs import RankGraphs, compile_key
from tlview.diagnose.rank_groups import group_by_key
from tlview.domain.rank_runs import joined_runs, rank_runs

SHOWN_RUNS = 200


def _runs(row: tuple) -> list:
    """The order as [compile id, times in a row] (a training loop is one graph many times)."""
    runs: list = []
    for cid, _, _ in row:
        if runs and runs[-1][0] == cid:
            runs[-1][1] += 1
        else:
            if len(runs) == SHOWN_RUNS:
                break
            runs.append([cid, 1])
    return runs


def execution_order(graphs: RankGraphs) -> dict | None:
    orders = graphs.execution
    if len(orders) < 2:
        return None
    schedules: dict[tuple[int, str], tuple] = {}
    for rank, by_cid in graphs.schedules.items():
        for cid, runs in by_cid.items():
            key = (rank, compile_key(cid))
            schedules[key] = schedules.get(key, ()) + tuple(op for ops in runs for op in ops)
    # what tlparse compares at each position: the compile id, its schedule, its cache outcome
    rows = {rank: tuple((cid, schedules.get((rank, cid)), graphs.cache.get((rank, cid))) for cid in order)
            for rank, order in orders.items()}
    kinds = group_by_key(rows)
    firsts = [rows[k[0]] for k in kinds]
    order_differs = False
    schedule_ranks: set[int] = set()
    cache_ranks: set[int] = set()
    first = None
    for i in range(max(map(len, firsts))):
        present = [(kind, row[i]) for kind, row in zip(kinds, firsts) if i < len(row)]
        cids = {step[0] for _, step in present}
        if len(cids) > 1:
            order_differs = True
            if first is None:
                first = i
        if len({step[1] for _, step in present if step[1] is not None}) > 1:
            schedule_ranks.update(r for kind, _ in present for r in kind)
        if len({step[2] for _, step in present if step[2]}) > 1:
            cache_ranks.update(r for kind, _ in present for r in kind)
    result = {
        "ranks_with_order": joined_runs(rank_runs(orders)),  # `0-1023`: never a list of 1,024 numbers
        "order_differs": order_differs,
        "schedule_mismatch_ranks": sorted(schedule_ranks),
        "cache_mismatch_ranks": sorted(cache_ranks),
        "groups": [{"ranks": k, "graphs_run": len(row), "order": _runs(row),
                    "cache": {cid: cache for cid, _, cache in row if cache}}
                   for k, row in zip(kinds, firsts)],
        "first_difference": None,
    }
    if first is not None:
        ranks_by_cid: dict[str | None, list[int]] = {}
        for kind, row in zip(kinds, firsts):
            ranks_by_cid.setdefault(row[first][0] if first < len(row) else None, []).extend(kind)
        result["first_difference"] = {
            "position": first + 1,
            "groups": [{"ranks": sorted(ranks), "compile_id": cid} for cid, ranks in ranks_by_cid.items()],
        }
    return result
