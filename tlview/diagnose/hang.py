""""Why did my job hang": the divergences that stop a distributed job, said first, ranks grouped
("ranks 0-2 vs rank 3"), naming the first graph and op where they part, and how the job died.

A rank that issues another collective than its peers (or none) waits for them forever. A hang is
claimed only from the collectives the ranks ran (each graph's schedule in the rank's graph
execution order); the compile ids only some ranks compiled, the schedules and the execution
order then say why. Where the ranks ran the same collectives, the same differences are told as
differences. Lines are built from `divergence()`'s document, so `--json` says the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from tlview.diagnose.collectives import is_collective, short_op
from tlview.diagnose.job_death import EXCEPTION, where_text
from tlview.diagnose.rank_groups import ordinal
from tlview.domain.rank_runs import ranks_text  # (not report/rich_text.py: --json never imports rich)

MOST_GROUPS = 4
MOST_IDS = 6
MOST_DEATHS = 8

@dataclass(frozen=True)
class JobVerdict:
    """The job's own verdict, in one line: hung, may hang, or died, and where to look (the rank
    that parted from the others or died first, and its compile id if one is named). Read by the
    explorer's first screen and status line, and by --report and --json."""

    state: str  # "hung", "may hang", "died"
    said: str  # "hung: ranks 0-1 vs rank 2 at the 4th collective (all_reduce_ in [0/0])"
    rank: int | None
    compile_id: str | None
    exception: str | None = None  # the class a process died of (`torch._dynamo.exc.BackendCompilerFailed`)


def job_verdict(div: dict) -> JobVerdict | None:
    """What happened to the job, from `divergence()`'s document: a rank's own death first (an
    exception is the cause; the timeouts of its peers follow from it), then the collectives the
    ranks ran parting (hung when the job died of it, else it may hang); None when neither."""
    death = div.get("job_death") or {}
    deaths = death.get("deaths") or []
    # a rank's own exception: the others' timeouts and lost peers follow from it
    cause = next((d for d in deaths if d["kind"] == EXCEPTION), None)
    if cause is not None and not cause["ranks"]:  # one process of no rank: its exception is all
        return JobVerdict("died", f"died: {cause['message']}{_at(cause)}", None, None, cause.get("exception"))
    if cause is not None:
        return JobVerdict("died", f"died: {ranks_text(cause['ranks'])}: {cause['message']}{_at(cause)}",
                          cause["ranks"][0], None)
    sequences = div.get("collective_sequences") or {}
    executed = sequences.get("executed")
    if executed and executed.get("first_difference"):
        state = "hung" if deaths or death.get("root_cause") else "may hang"
        return _parted(state, executed, "")
    if sequences.get("first_difference") and any(d["kind"] == "timeout" for d in deaths):
        # no order logged, but ranks timed out waiting: what they compiled apart is where
        return _parted("hung", sequences, " compiled")
    if deaths:
        first_death = deaths[0]
        return JobVerdict("died", f"died: {ranks_text(first_death['ranks'])}: {first_death['kind']}: "
                          f"{first_death['message']}", first_death["ranks"][0], None)
    return None


def _parted(state: str, found: dict, how: str) -> JobVerdict:
    """`hung: ranks 0-1 vs rank 2 at the 4th collective (all_reduce_ in [0/0])`, and the rank
    that parted: the smallest group (the others agree), the last of equal ones."""
    first = found["first_difference"]
    named = next((g for g in first["groups"] if g["op"] is not None), None)
    ops = " vs ".join(dict.fromkeys(short_op(g["op"]) for g in first["groups"] if g["op"] is not None))
    where = f" ({ops} in [{named['compile_id']}])" if named else ""
    odd = min(reversed(first["groups"]), key=lambda g: len(g["ranks"]))
    return JobVerdict(state, f"{state}: {versus(found['groups'])} at the {ordinal(first['position'])} "
                      f"collective{how}{where}", odd["ranks"][0], odd["compile_id"] or odd.get("after"))


def versus(groups: list[dict]) -> str:
    """`ranks 0-2 vs rank 3` (a few groups, then how many more)."""
    said = " vs ".join(ranks_text(g["ranks"]) for g in groups[:MOST_GROUPS])
    return said + (f" vs … ({len(groups)} groups)" if len(groups) > MOST_GROUPS else "")


def ran_apart(div: dict) -> bool:
    """The ranks ran different collectives (in their logged graph execution order): the only
    ground for a hang claim here. What they compiled alone never is (a rank may compile graphs
    it never runs, or the others run elsewhere)."""
    sequences = div.get("collective_sequences")
    return bool(sequences and sequences.get("executed"))


def _first_collective(found: dict, how: str) -> str:
    first = found["first_difference"]
    parts = []
    for g in first["groups"][:MOST_GROUPS]:
        if g["op"] is not None:
            parts.append(f"{short_op(g['op'])} in [{g['compile_id']}] on {ranks_text(g['ranks'])}")
        else:
            after = f" after [{g['after']}]" if g.get("after") else ""
            parts.append(f"none on {ranks_text(g['ranks'])} (its collectives end{after})")
    return f"{versus(found['groups'])}; the {ordinal(first['position'])} collective {how}: " + "; ".join(parts)


def hang_lines(div: dict) -> list[str]:
    """What can hang the job, from what the ranks ran: a rank's own exception (before what it did
    to the others), the collectives, then what explains them (execution order, schedules, compile
    ids on some ranks only); and how the job died."""
    death = div.get("job_death")
    lines = raised_lines(death)
    if ran_apart(div):
        executed = div["collective_sequences"]["executed"]
        lines.append("collectives differ (can hang the job): "
                     + _first_collective(executed, "run (in graph execution order)")
                     + _unordered(div["collective_sequences"]))
        lines += _why_lines(div)
    lines += death_lines(death)
    return lines


def agreement_lines(div: dict) -> list[str]:
    """Where the ranks did not run apart: that they ran the same collectives, and what differs
    all the same (compiled collectives, execution order, schedules, compile ids), told as
    differences, not hangs."""
    if ran_apart(div):
        return []
    lines = []
    sequences = div.get("collective_sequences")
    if sequences and sequences.get("executed_collectives") is not None:
        lines.append(f"ranks ran the same collectives ({sequences['executed_collectives']:,}, "
                     f"in graph execution order){_unordered(sequences)}")
    if sequences and sequences["groups"]:
        unknown = "" if sequences.get("executed_collectives") is not None else \
            _unordered(sequences) or "; no rank logged its graph execution order"
        lines.append("collectives compiled differ: "
                     + _first_collective(sequences, f"compiled (over all graphs{unknown})"))
    return lines + _why_lines(div)


def _unordered(sequences: dict) -> str:
    """The ranks that logged no execution order: out of the comparison of what ran, said."""
    missing = sequences.get("no_order_ranks")
    return f"; no execution order logged on {ranks_text(missing)}" if missing else ""


def _collectives(schedule: list[str]) -> str:
    """`2 collectives (all_reduce_, all_gather_into_tensor)`: the ops named while they are few."""
    ops = [short_op(op) for op in schedule if is_collective(op)]
    named = f" ({', '.join(ops)})" if 0 < len(ops) <= MOST_GROUPS else ""
    return f"{len(ops)} collective{'s' if len(ops) != 1 else ''}{named}"


def _why_lines(div: dict) -> list[str]:
    lines = []
    for entry in div["collective_schedules"]:
        parts = "; ".join(f"{_collectives(g['schedule'])} on {ranks_text(g['ranks'])}"
                          for g in entry["groups"][:MOST_GROUPS])
        lines.append(f"collective schedule of [{entry['id']}] differs: {parts}")
    order = div.get("execution_order")
    if order and order["first_difference"]:
        first = order["first_difference"]
        parts = "; ".join(f"[{g['compile_id']}] on {ranks_text(g['ranks'])}" if g["compile_id"] else
                          f"nothing on {ranks_text(g['ranks'])} (its order ends)"
                          for g in first["groups"][:MOST_GROUPS])
        lines.append(f"graph execution order differs: the {ordinal(first['position'])} graph run is {parts}")
    if order and order["schedule_mismatch_ranks"]:
        lines.append("graphs run at the same place have different collective schedules on "
                     + ranks_text(order["schedule_mismatch_ranks"]))
    by_where: dict[tuple, list[str]] = {}  # compile ids on the same ranks: one line
    for entry in div["compile_ids"]:
        by_where.setdefault((tuple(entry["ranks"]), tuple(entry["missing_on"])), []).append(entry["id"])
    for (ranks, missing), ids in by_where.items():
        said = ", ".join(f"[{i}]" for i in ids[:MOST_IDS]) + (f", … ({len(ids)} in all)" if len(ids) > MOST_IDS else "")
        lines.append(f"compile id{'s' if len(ids) > 1 else ''} {said} only on {ranks_text(ranks)} "
                     f"(not on {ranks_text(missing)})")
    return lines


def raised_lines(death: dict | None) -> list[str]:
    """The exceptions ranks raised of their own (not a timeout or a lost peer: consequences); a
    process of no rank could hang no peer: its death is the verdict's alone."""
    if not death:
        return []
    return [f"the job died: {ranks_text(entry['ranks'])} raised {entry['message']}{_at(entry)}"
            for entry in death["deaths"][:MOST_DEATHS] if entry["kind"] == EXCEPTION and entry["ranks"]]


def death_lines(death: dict | None) -> list[str]:
    """How the other ranks died, and torchrun's account (the root cause, the signals it sent)."""
    if not death:
        return []
    lines = []
    for entry in death["deaths"][:MOST_DEATHS]:
        if entry["kind"] != EXCEPTION:
            lines.append(f"the job died: {ranks_text(entry['ranks'])}: {entry['kind']}: {entry['message']}{_at(entry)}")
    root = death.get("root_cause")
    if root:
        how = f" (exit code {root['exitcode']}{', ' + root['signal'] if root.get('signal') else ''})" \
            if root.get("exitcode") is not None else ""
        lines.append(f"torchrun: rank {root['rank']} failed first{how}")
    for entry in death.get("signals", ()):
        lines.append(f"torchrun: {ranks_text(entry['ranks'])} ended by {entry['signal']} "
                     f"(exit code {entry['exitcode']})")
    return lines


def _at(entry: dict) -> str:
    return f" (at {where_text(entry['where'])})" if entry.get("where") else ""
