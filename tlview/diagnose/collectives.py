"""Collectives across ranks: the sequence of collective ops each rank's graphs issue (a rank whose
sequence differs waits for a peer that never comes: a hang), and each graph's parity between its
collective schedule and its output code (tlparse's `collectives_parity.json`).

As tlparse 0.4.3 `--all-ranks-html`: a rank's sequence is its graphs' schedules one after the
other (tlparse takes its graph folders in directory order; here, in the order compiled), ranks
with no schedule included. When the ranks logged their graph execution order, the sequence they
actually issued (each graph's schedule every time it ran) is compared too: that one names the
collective a hung rank waited on.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tlview.diagnose.rank_graphs import RankGraphs, compile_key
from tlview.diagnose.rank_groups import group_by_key

# tlparse's check_collectives_parity, to the letter: c10d functional calls in the output code,
# comments and tags stripped first
CALL = re.compile(r"torch\s*\.\s*ops\s*\.\s*_?c10d_functional\s*\.\s*([A-Za-z0-9_]+)\s*\.\s*default\s*\(")
COMMENT = re.compile(r"#[^\n]*$|//[^\n]*$|/\*.*?\*/", re.MULTILINE | re.DOTALL)
TAG = re.compile(r"<[^>]*>", re.DOTALL)
COLLECTIVE_NAMES = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all")


def short_op(op: str) -> str:
    """`torch.ops._c10d_functional.all_reduce_.default` -> `all_reduce_`."""
    parts = op.split(".")
    return parts[-2] if len(parts) >= 3 and parts[-1] == "default" else op


@lru_cache(maxsize=4096)  # (a schedule's ops are a few names, asked of each rank's every op)
def is_collective(op: str) -> bool:
    """A schedule's op that talks to the other ranks: `wait_tensor` is the wait on one, not one
    (ordinals and counts of collectives leave it out)."""
    return short_op(op).rstrip("_") != "wait_tensor"


def compiled_collectives(graphs: RankGraphs, rank: int) -> list[tuple[str, str]]:
    """(compile id, op) of every collective of the rank's graphs, in the order compiled."""
    return [(cid, op) for cid, runs in graphs.schedules.get(rank, {}).items()
            for ops in runs for op in ops if is_collective(op)]


def executed_collectives(graphs: RankGraphs, rank: int) -> list[tuple[str, str]] | None:
    """(compile id, op) of every collective the rank issued: each graph's schedule every time it
    ran, in its graph execution order; None when the rank logged no order."""
    order = graphs.execution.get(rank)
    if order is None:
        return None
    by_key: dict[str, list] = {}
    for cid, runs in graphs.schedules.get(rank, {}).items():
        by_key.setdefault(compile_key(cid), []).extend(op for ops in runs for op in ops if is_collective(op))
    return [(cid, op) for cid in order for op in by_key.get(cid, ())]


def sequences(graphs: RankGraphs) -> dict | None:
    """The ranks grouped by the collectives of all their graphs (`groups`, compiled) and by those
    they ran (`executed`, when two ranks logged their order; `executed_collectives`: how many
    each ran when those agree; `no_order_ranks`: the ranks left out, no order logged); None when
    the ranks agree in all (or no rank logged a schedule)."""
    if not graphs.schedules:
        return None
    compiled = _compare({r: compiled_collectives(graphs, r) for r in graphs.ranks})
    executed = ran_alike = None
    if len(graphs.execution) >= 2:
        issued = {r: seq for r in graphs.ranks if (seq := executed_collectives(graphs, r)) is not None}
        executed = _compare(issued)
        if executed is None:
            ran_alike = len(next(iter(issued.values())))
    orders_differ = len({tuple(o) for o in graphs.execution.values()}) > 1
    if compiled is None and executed is None and not orders_differ:
        return None
    return {"groups": compiled["groups"] if compiled else [],
            "first_difference": compiled["first_difference"] if compiled else None,
            "executed": executed, "executed_collectives": ran_alike,
            # not in `executed`: what they ran is not known (compared by what they compiled)
            "no_order_ranks": [r for r in graphs.ranks if r not in graphs.execution] if graphs.execution else []}


def _compare(tagged: dict[int, list[tuple[str, str]]]) -> dict | None:
    """Groups of ranks with the same op sequence, and where the groups first part."""
    groups = group_by_key({r: tuple(op for _, op in seq) for r, seq in tagged.items()})
    if len(groups) < 2:
        return None
    firsts = [tagged[g[0]] for g in groups]
    at = next((i for i in range(max(map(len, firsts)))
               if len({seq[i][1] if i < len(seq) else None for seq in firsts}) > 1), 0)
    return {
        "groups": [{"ranks": g, "ops": len(seq), "graphs": list(dict.fromkeys(cid for cid, _ in seq))}
                   for g, seq in zip(groups, firsts)],
        "first_difference": {
            "position": at + 1,  # the n-th collective of the sequence
            "groups": [{"ranks": g, "compile_id": seq[at][0] if at < len(seq) else None,
                        "op": seq[at][1] if at < len(seq) else None,
                        "after": seq[at - 1][0] if 0 < at <= len(seq) else None}
                       for g, seq in zip(groups, firsts)],
        },
    }


def _normalized(op: str) -> str | None:
    op = op.rstrip("_")
    name = next((n for n in COLLECTIVE_NAMES if n in op), None)
    if name is None and "reduce" in op:
        name = "reduce"
    return name


def _calls(code: str) -> tuple[dict[str, int], int]:
    """The collectives an output code calls, by name, and its `wait_tensor` calls."""
    called: dict[str, int] = {}
    waits = 0
    for match in CALL.finditer(COMMENT.sub("", TAG.sub("", code))):
        op = match.group(1)
        if op == "wait_tensor":
            waits += 1
        elif (name := _normalized(op)) is not None:
            called[name] = called.get(name, 0) + 1
    return called, waits


def parity(graphs: RankGraphs) -> list[dict]:
    """Graphs whose output code calls other collectives than their schedule lists, or fewer
    `wait_tensor`s than collectives (a collective never waited on). Ranks with the same finding
    for a compile id are one entry."""
    found: dict[tuple, list[int]] = {}
    calls: dict[str, tuple[dict, int]] = {}  # output code's calls, by its content (ranks alike: read once)
    for rank in graphs.ranks:
        for cid, runs in graphs.schedules.get(rank, {}).items():
            code_art = graphs.output_code.get((rank, cid))
            if code_art is None:
                continue
            key = code_art.content_key()
            counted = calls.get(key) if key is not None else None
            if counted is None:
                try:
                    counted = _calls(code_art.load().text)
                except (OSError, UnicodeError):
                    continue
                if key is not None:
                    calls[key] = counted
            called, waits = counted
            scheduled: dict[str, int] = {}
            for op in runs[0]:  # tlparse reads one schedule per graph folder
                if (name := _normalized(op)) is not None:
                    scheduled[name] = scheduled.get(name, 0) + 1
            offset = sum(abs(scheduled.get(n, 0) - called.get(n, 0)) for n in set(scheduled) | set(called))
            missing_waits = max(0, sum(called.values()) - waits)
            if offset or missing_waits:
                finding = (cid, offset, missing_waits, tuple(sorted(scheduled.items())),
                           tuple(sorted(called.items())))
                found.setdefault(finding, []).append(rank)
    return [{"compile_id": cid, "ranks": ranks, "offset": offset, "missing_waits": missing,
             "schedule_counts": dict(sched), "code_counts": dict(code)}
            for (cid, offset, missing, sched, code), ranks in found.items()]
