"""Where ranks of one job disagree: compile ids on some ranks only, different recompile counts,
different cache hit/miss sequences, different collective schedules (a hang risk).

The checks tlparse's --all-ranks-html makes, plus recompile counts; computed from the index (the
collective schedules are small payloads read on demand).
"""

from __future__ import annotations

from collections import defaultdict

import orjson

from tlview.model.verdict import Kind
from tlview.model.index import Index
from tlview.model.kinds import Role
from tlview.model.look import joined_runs, rank_runs
from tlview.model.registry import cache_outcome


def _group_ranks(values: dict) -> list[dict]:
    """{rank: value} -> [{"ranks": [...], "value": value}], ranks with equal values together."""
    groups: dict = {}
    for rank, value in sorted(values.items(), key=lambda kv: (kv[0] is None, kv[0])):
        key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        groups.setdefault(key, {"ranks": [], "value": value})["ranks"].append(rank)
    return list(groups.values())


def divergence(index: Index) -> dict:
    """Empty lists when the ranks agree (or there is one rank)."""
    ranks = [r for r in index.ranks() if r is not None]
    result = {"ranks": ranks, "compile_ids": [], "functions": [], "recompile_counts": [],
              "cache_patterns": [], "collective_schedules": []}
    if len(ranks) < 2:
        return result
    # One pass over the nodes, grouped by rank (a job of 20,000 ranks: a loop over the nodes per
    # rank took minutes).
    rank_set = set(ranks)
    nodes = [n for n in index.iter_nodes() if n.rank in rank_set and n.cid.frame is not None]
    present: dict[str, set] = defaultdict(set)
    functions: dict[str, dict] = defaultdict(dict)
    recompiles = dict.fromkeys(ranks, 0)
    caches: dict = {r: [] for r in ranks}
    for node in nodes:
        present[node.id].add(node.rank)
        # one compile id, different code on different ranks: their compiles are not the same thing
        if node.cid.attempt == 0 and (function := node.function()):
            functions[node.id][node.rank] = function
        if node is node.compile.head and node.compile.verdict.has(Kind.RECOMPILE):
            recompiles[node.rank] += 1
        caches[node.rank].extend(a.name for a in node.artifacts_in(Role.CACHE))
    for cid, where in present.items():
        if where != rank_set:
            result["compile_ids"].append({"id": cid, "ranks": sorted(where),
                                          "missing_on": sorted(rank_set - where)})
    for cid, per_rank in functions.items():
        if len(set(per_rank.values())) > 1:
            result["functions"].append({"id": cid, "groups": _group_ranks(per_rank)})
    if len(set(recompiles.values())) > 1:
        result["recompile_counts"] = _group_ranks(recompiles)
    if len({tuple(v) for v in caches.values()}) > 1:
        result["cache_patterns"] = [
            {"ranks": g["ranks"], **{plural: sum(cache_outcome(x) == outcome for x in g["value"])
                                     for outcome, plural in (("hit", "hits"), ("miss", "misses"),
                                                             ("bypass", "bypasses"))},
             "sequence": g["value"]}
            for g in _group_ranks(caches)]
    schedules: dict[str, dict] = defaultdict(dict)
    for node in nodes:
        for art in node.artifacts:
            if art.name == "inductor_collective_schedule":
                try:
                    ops = orjson.loads(art.load().text)
                except (orjson.JSONDecodeError, OSError):
                    ops = None
                schedules[node.id][node.rank] = ops if isinstance(ops, list) else []
    for cid, per_rank in schedules.items():
        # (ranks without this compile id are reported among compile_ids)
        if len({tuple(map(str, v)) for v in per_rank.values()}) > 1:
            result["collective_schedules"].append({
                "id": cid,
                "groups": [{"ranks": g["ranks"], "ops": len(g["value"]), "schedule": g["value"]}
                           for g in _group_ranks(per_rank)],
                "missing_on": sorted(rank_set - set(per_rank)),
            })
    return result


def describe(div: dict) -> list[str]:
    """One line per divergence, for the report and the UI."""
    lines = []
    for entry in div["compile_ids"]:
        lines.append(f"compile id [{entry['id']}] only on rank(s) {_ranks(entry['ranks'])} "
                     f"(not on {_ranks(entry['missing_on'])})")
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
    for entry in div["collective_schedules"]:
        parts = "; ".join(f"{g['ops']} ops on rank(s) {_ranks(g['ranks'])}" for g in entry["groups"])
        lines.append(f"collective schedule of [{entry['id']}] differs (a hang risk): {parts}")
    return lines


def _ranks(ranks, most: int = 8) -> str:
    """`0-2,5`: runs of ranks joined (20,000 ranks are one run, not 20,000 numbers)."""
    runs = rank_runs(ranks)
    return joined_runs(runs[:most]) + (f",… ({len(ranks):,} ranks)" if len(runs) > most else "")
