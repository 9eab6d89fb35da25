"""Inductor's runtime estimates and tensor metadata across ranks (`inductor_runtime_and_tensor_meta`:
per graph, each op's name, kind, estimated runtime and output shapes, strides and dtypes).

As tlparse 0.4.3 `--all-ranks-html`:
- tensor metadata: ranks are grouped by the whole payload of every graph (runtime estimates
  included), in graph order; ranks with no payload are left out. Here it also says what first
  differs: an op's outputs, the ops themselves, or only the estimates;
- runtime: per graph, the sum of its ops' estimates on each rank, the fastest and the slowest rank
  and the delta, in ms rounded to 3 places (ties go to the higher rank, as tlparse's fold). Only
  when every rank has as many graphs with estimates (else `mismatched_graph_counts`).
Torch estimates 0 for every op off the GPU: a CPU run's estimates are all 0.
"""

from __future__ import annotations

import math
from typing import Any

from tlview.diagnose.rank_graphs import GraphMeta, RankGraphs, load_meta, meta_ops
from tlview.diagnose.rank_groups import group_by_key
from tlview.domain.compile_id import CompileId


def graph_order(cid: str):
    parsed = CompileId.parse(cid)
    return (0, tuple(-1 if v is None else v for v in parsed)) if parsed is not None else (1, cid)


def tensor_meta(graphs: RankGraphs) -> dict | None:
    """The ranks grouped by their graphs' metadata; None when they agree."""
    per_rank = {r: sorted(g.items(), key=lambda kv: graph_order(kv[0])) for r, g in graphs.runtime_meta.items()}
    signatures = {r: tuple(m.digest for _, metas in g for m in metas) for r, g in per_rank.items()}
    groups = group_by_key(signatures)
    if len(groups) < 2:
        return None
    return {"groups": [{"ranks": g, "graphs": len(per_rank[g[0]])} for g in groups],
            "first_difference": _first_difference(groups, per_rank)}


def _first_difference(groups, per_rank) -> dict:
    """Between the first two groups: the first graph that differs, and in it the first op (the two
    payloads read again from disk)."""
    a, b = (dict(per_rank[g[0]]) for g in groups[:2])
    for cid in sorted(set(a) | set(b), key=graph_order):
        if cid not in a or cid not in b:
            return {"compile_id": cid, "what": "graph", "only_on": groups[0] if cid in a else groups[1]}
        if [m.digest for m in a[cid]] == [m.digest for m in b[cid]]:
            continue
        ops_a = [op for m in a[cid] for op in meta_ops(load_meta(m))]
        ops_b = [op for m in b[cid] for op in meta_ops(load_meta(m))]
        for i, (x, y) in enumerate(zip(ops_a, ops_b)):
            if (x.get("name"), x.get("type")) != (y.get("name"), y.get("type")):
                return {"compile_id": cid, "what": "ops", "op": x.get("name"), "other_op": y.get("name"),
                        "position": i + 1}
            if x.get("outputs") != y.get("outputs"):
                return {"compile_id": cid, "what": "outputs", "op": x.get("name"), "position": i + 1,
                        "outputs": [x.get("outputs"), y.get("outputs")]}
        if len(ops_a) != len(ops_b):
            return {"compile_id": cid, "what": "ops", "ops": [len(ops_a), len(ops_b)]}
        return {"compile_id": cid, "what": "runtime estimates"}
    return {"compile_id": None, "what": "graphs"}


def _number(value) -> float:
    try:
        return float(value or 0)
    except (TypeError, ValueError):
        return 0.0


def _ms(ns: float) -> float:
    return math.floor(ns / 1e6 * 1000.0 + 0.5) / 1000.0  # Rust's round: half away from zero


def runtime_analysis(graphs: RankGraphs) -> dict | None:
    """Per graph, the fastest and slowest rank by estimated runtime; None with no estimates."""
    per_rank: dict[int, list[tuple[str, float, str | None]]] = {}
    for rank in sorted(graphs.runtime_meta):
        for cid, metas in sorted(graphs.runtime_meta[rank].items(), key=lambda kv: graph_order(kv[0])):
            for meta in metas:
                if meta.ops:  # tlparse leaves out graphs with no ops
                    per_rank.setdefault(rank, []).append((cid, meta.runtime_ns, meta.graph))
    if not per_rank:
        return None
    if len({len(g) for g in per_rank.values()}) > 1:
        return {"mismatched_graph_counts": True, "graphs": [], "by_graph": runtimes_by_graph(graphs),
                "graph_counts": [{"ranks": g, "graphs": len(per_rank[g[0]])}
                                 for g in group_by_key({r: len(v) for r, v in per_rank.items()})]}
    ranks = sorted(per_rank)
    rows: list[dict[str, Any]] = []
    for i in range(len(per_rank[ranks[0]])):
        fastest = slowest = (ranks[0], per_rank[ranks[0]][i][1])  # (the loop takes it again first)
        for rank in ranks:
            runtime = per_rank[rank][i][1]
            if runtime <= fastest[1]:
                fastest = (rank, runtime)
            if runtime >= slowest[1]:
                slowest = (rank, runtime)
        row: dict[str, Any] = {"compile_id": per_rank[ranks[0]][i][0], "delta_ms": _ms(slowest[1] - fastest[1]),
                               "fastest": {"rank": fastest[0], "ms": _ms(fastest[1])},
                               "slowest": {"rank": slowest[0], "ms": _ms(slowest[1])}}
        if (graph := per_rank[ranks[0]][i][2]) is not None:
            row["graph"] = graph  # one of a DDP split's graphs
        rows.append(row)
    rows.sort(key=lambda row: graph_order(row["compile_id"]))
    return {"mismatched_graph_counts": False, "graphs": rows, "by_graph": runtimes_by_graph(graphs)}


def runtimes_by_graph(graphs: RankGraphs) -> list[dict]:
    """Each graph's estimated runtime on every rank, ranks with the same runtime grouped."""
    by_graph: dict[tuple[str, str | None], dict[int, float]] = {}
    for rank, by_cid in graphs.runtime_meta.items():
        for cid, metas in by_cid.items():
            # a DDP split's graphs each apart; the graphs of a compile id otherwise summed
            by_name: dict[str | None, list[GraphMeta]] = {}
            for m in metas:
                by_name.setdefault(m.graph, []).append(m)
            for graph, named in by_name.items():
                if any(m.ops for m in named):
                    by_graph.setdefault((cid, graph), {})[rank] = _ms(sum(m.runtime_ns for m in named))
    entries: list[dict] = []
    for (cid, graph), per_rank in sorted(by_graph.items(), key=lambda kv: (graph_order(kv[0][0]),)):
        entry: dict[str, Any] = {"compile_id": cid}
        if graph is not None:
            entry["graph"] = graph
        entry["groups"] = [{"ranks": ranks, "ms": per_rank[ranks[0]]} for ranks in group_by_key(per_rank)]
        entries.append(entry)
    return entries


def runtime_tracks(graphs: RankGraphs):
    """(rank, compile id, [(op name, estimated ns)]) per graph with estimates: the runtime trace."""
    for rank in sorted(graphs.runtime_meta):
        for cid, metas in sorted(graphs.runtime_meta[rank].items(), key=lambda kv: graph_order(kv[0])):
            for n, meta in enumerate(metas):
                if not meta.ops:
                    continue
                ops = [(str(op.get("name")), _number(op.get("estimated_runtime_ns")))
                       for op in meta_ops(load_meta(meta))]
                if ops:
                    yield rank, f"{cid} {meta.graph}" if meta.graph else cid if n == 0 else f"{cid} #{n + 1}", ops
