"""Where ranks of one job disagree: compile ids on some ranks only, different recompile counts,
different cache hit/miss sequences, different collective schedules and sequences (a hang risk),
collectives parity, tensor metadata, runtime estimates, graph execution order, and how the job died.

Every check tlparse 0.4.3's --all-ranks-html makes, plus recompile counts; computed from the index
(the per-graph artifacts are small payloads read on demand, see rank_graphs).
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from typing import Any

from tlview.diagnose import collectives, runtime_estimates
from tlview.diagnose.execution_order import execution_order
from tlview.diagnose.hang import agreement_lines, hang_lines, versus
from tlview.diagnose.job_death import job_death
from tlview.diagnose.rank_graphs import collect
from tlview.diagnose.rank_groups import group_ranks
from tlview.domain.rank_runs import joined_runs, rank_runs
from tlview.domain.role import Role
from tlview.domain.verdict import Kind
from tlview.index.index import Index
from tlview.index.registry import cache_outcome

# The last document made, and of what: the explorer asks twice for one state of the index (the
# job's verdict in the indexing thread, then the Run pane), 0.66 s each at 1,024 real ranks.
_last: tuple[weakref.ref[Index], tuple[int, int, int], dict] | None = None


def divergence(index: Index) -> dict:
    """Empty lists (and None for the checks that say more than a list) when the ranks agree (or
    there is one rank: then only its collectives parity, and how the job died). Made once per
    state of the index (what it read, its compile ids, its problems); callers only read it."""
    global _last
    state = (index.bytes_read, len(index.nodes), len(index.problems))
    last = _last
    if last is not None and last[0]() is index and last[1] == state:
        return last[2]
    result = _divergence(index)
    _last = (weakref.ref(index), state, result)
    return result


def _divergence(index: Index) -> dict:
    ranks = [r for r in index.ranks() if r is not None]
    result: dict[str, Any] = {"ranks": ranks, "compile_ids": [], "functions": [], "recompile_counts": [],
              "cache_patterns": [], "collective_schedules": [], "collective_sequences": None,
              "collectives_parity": [], "tensor_meta": None, "runtime_estimates": None,
              "execution_order": None, "job_death": job_death(index)}
    if len(ranks) < 2:  # one rank: nothing to compare, but its graphs' parity still holds or not
        result["collectives_parity"] = collectives.parity(collect(index, ranks)) if ranks else []
        return result
    # One pass over the nodes, grouped by rank (a job of 20,000 ranks: a loop over the nodes per
    # rank took minutes).
    rank_set = set(ranks)
    nodes = [(n, rank) for n in index.iter_nodes() if (rank := n.rank) in rank_set and n.cid.frame is not None]
    present: dict[str, set] = defaultdict(set)
    functions: dict[str, dict] = defaultdict(dict)
    recompiles = dict.fromkeys(ranks, 0)
    caches: dict = {r: [] for r in ranks}
    for node, rank in nodes:
        present[node.id].add(rank)
        # one compile id, different code on different ranks: their compiles are not the same thing
        if node.cid.attempt == 0 and (function := node.function()):
            functions[node.id][rank] = function
        if (compile_ := node.compile) is not None and node is compile_.head and compile_.verdict.has(Kind.RECOMPILE):
            recompiles[rank] += 1
        caches[rank].extend(a.name for a in node.artifacts_in(Role.CACHE))
    for cid, where in present.items():
        if where != rank_set:
            result["compile_ids"].append({"id": cid, "ranks": sorted(where),
                                          "missing_on": sorted(rank_set - where)})
    for cid, per_rank in functions.items():
        if len(set(per_rank.values())) > 1:
            result["functions"].append({"id": cid, "groups": group_ranks(per_rank)})
    if len(set(recompiles.values())) > 1:
        result["recompile_counts"] = group_ranks(recompiles)
    if len({tuple(v) for v in caches.values()}) > 1:
        result["cache_patterns"] = [
            {"ranks": g["ranks"], **{plural: sum(cache_outcome(x) == outcome for x in g["value"])
                                     for outcome, plural in (("hit", "hits"), ("miss", "misses"),
                                                             ("bypass", "bypasses"))},
             "sequence": g["value"]}
            for g in group_ranks(caches)]
    graphs = collect(index, ranks, nodes)
    schedules: dict[str, dict] = defaultdict(dict)
    for rank, by_cid in graphs.schedules.items():
        for cid, runs in by_cid.items():
            schedules[cid][rank] = runs[0]
    for cid, per_rank in schedules.items():
        # (ranks without this compile id are reported among compile_ids)
        if len({tuple(map(str, v)) for v in per_rank.values()}) > 1:
            result["collective_schedules"].append({
                "id": cid,
                "groups": [{"ranks": g["ranks"], "ops": sum(map(collectives.is_collective, g["value"])),
                            "schedule": g["value"]}
                           for g in group_ranks(per_rank)],
                "missing_on": sorted(rank_set - set(per_rank)),
            })
    result["collective_sequences"] = collectives.sequences(graphs)
    result["collectives_parity"] = collectives.parity(graphs)
    result["tensor_meta"] = runtime_estimates.tensor_meta(graphs)
    result["runtime_estimates"] = runtime_estimates.runtime_analysis(graphs)
    result["execution_order"] = execution_order(graphs)
    return result


def describe(div: dict) -> list[str]:
    """One line per divergence, for the report and the UI: what can hang the job first."""
    return hang_lines(div) + other_lines(div)


def other_lines(div: dict) -> list[str]:
    """The divergences that do not hang a job (they slow it, or explain it)."""
    lines = agreement_lines(div)
    for entry in div["functions"]:
        parts = "; ".join(f"{g['value']} on rank(s) {_ranks(g['ranks'])}" for g in entry["groups"])
        lines.append(f"compile id [{entry['id']}] is different code on different ranks: {parts}")
    if div["recompile_counts"]:
        parts = "; ".join(f"{g['value']} on rank(s) {_ranks(g['ranks'])}" for g in div["recompile_counts"])
        lines.append(f"recompile counts differ: {parts}")
    if div["cache_patterns"]:
        parts = "; ".join(f"rank(s) {_ranks(g['ranks'])}: {g['hits']} hits, {g['misses']} misses"
                          for g in div["cache_patterns"])
        lines.append(f"cache hit/miss sequences differ: {parts}")
    if meta := div.get("tensor_meta"):
        lines.append(f"tensor metadata differs: {versus(meta['groups'])}{_first_meta(meta['first_difference'])}")
    if runtime := div.get("runtime_estimates"):
        if runtime["mismatched_graph_counts"]:
            parts = "; ".join(f"{g['graphs']} on {_ranks(g['ranks'])}" for g in runtime["graph_counts"][:4])
            lines.append(f"runtime estimates: ranks have different numbers of graphs ({parts})")
        for row in sorted(runtime["graphs"], key=lambda r: -r["delta_ms"])[:5]:
            if row["delta_ms"] > 0:
                graph = f" {row['graph']}" if row.get("graph") else ""
                lines.append(f"runtime estimates of [{row['compile_id']}]{graph}: "
                             f"slowest rank {row['slowest']['rank']} "
                             f"{row['slowest']['ms']} ms, fastest rank {row['fastest']['rank']} "
                             f"{row['fastest']['ms']} ms (delta {row['delta_ms']} ms)")
    for entry in div.get("collectives_parity", [])[:10]:
        lines.append(f"collectives parity of [{entry['compile_id']}] on rank(s) {_ranks(entry['ranks'])}: "
                     f"schedule and output code differ by {entry['offset']}, "
                     f"{entry['missing_waits']} collective(s) never waited on (wait_tensor)")
    order = div.get("execution_order")
    if order and order["cache_mismatch_ranks"]:
        lines.append(f"graphs run at the same place hit and missed caches differently on rank(s) "
                     f"{_ranks(order['cache_mismatch_ranks'])}")
    return lines


def _first_meta(first: dict) -> str:
    cid, what = first.get("compile_id"), first.get("what")
    if what == "graph":
        return f"; graph [{cid}] only on {_ranks(first['only_on'])}"
    if what == "outputs":
        return f"; first in [{cid}]: the outputs of op {first['position']} {first['op']}"
    if what == "ops":
        return f"; first in [{cid}]: different ops"
    if what == "runtime estimates":
        return f"; first in [{cid}]: only its runtime estimates"
    return ""


def _ranks(ranks, most: int = 8) -> str:
    """`0-2,5`: runs of ranks joined (20,000 ranks are one run, not 20,000 numbers)."""
    runs = rank_runs(ranks)
    return joined_runs(runs[:most]) + (f",… ({len(ranks):,} ranks)" if len(runs) > most else "")
