"""The run's worst problem, and what happened in one line (the headline): what the explorer's
first screen opens on, and what --report, markdown and --json say near their top.

One ranking: the job's verdict (a hang or a death stops everything) > a frame skipped (it runs
eagerly: none of it is compiled) > a failure > the costliest recompile, graph break or perf problem
that costs time. The cost of the first two is costs.run_summary's own ranking (its first
recompiling frame and its first graph break), weighed in compile seconds: a frame's recompiles cost
their compile time summed (each one pays the whole compile again), a graph break the compile time
of the compile ids it split (each compiled in pieces, run eagerly between them); where no time is
known (TORCH_LOGS text), the counts decide, and a recompile wins a tie. Graph breaks PyTorch makes
by design are never the worst. A perf problem weighs in the same seconds only where it has them
(a long compile: its compile time), and beats a recompile or break only by more; one with no cost
in seconds (a CUDA graph split: a cost of every call, which the logs do not time) comes after them.
Informational perf problems never weigh.
"""

from __future__ import annotations

from dataclasses import dataclass

from tlview.diagnose.costs import run_summary
from tlview.diagnose.hang import JobVerdict
from tlview.domain.compile_node import CompileNode
from tlview.domain.perf import COSTS_TIME, CompileTime
from tlview.domain.places import short_path
from tlview.domain.rank_runs import ref, whose
from tlview.domain.totals import totals
from tlview.domain.verdict import CompileProblem, Kind
from tlview.index.index import Index
from tlview.textsafe import one_line

JOB = "job"  # the worst problem's `kind` when the job hung or died (else a Kind's key, or None)
WHY_WIDTH = 200  # a problem's own words in the headline at most (a screen cuts it to its width)


@dataclass(frozen=True)
class WorstProblem:
    """The run's worst problem: its kind (JOB, a Kind's key, None for a run with none), the
    headline that says it, and where it is (its rank and compile id; None where nothing is)."""

    kind: str | None
    headline: str
    rank: int | None = None
    compile_id: str | None = None
    node: CompileNode | None = None  # the compile id's node, where one is named


def worst_problem(index: Index, verdict: JobVerdict | None, rank=..., costs: dict | None = None) -> WorstProblem:
    """The worst problem of the run (of one rank, with `rank`). `costs`: run_summary(index, rank)
    if the caller has it."""
    firsts = _first_problems(index, rank) if verdict is None or verdict.rank is None else None
    if verdict is not None:
        if verdict.state == "died" and verdict.rank is None and firsts is not None and \
                (failed := _died_of(verdict, firsts.get_all(Kind.FAILURE))) is not None:
            # one process that died of a compile's failure: the failure says which compile and
            # what to do, the death only that it reached the program (fixtures/generated/crash)
            said = _said_once(Kind.FAILURE, failed, 1, _Naming(index.grouped))
            return WorstProblem(said.kind, f"{said.headline}; the program died of it", said.rank,
                                said.compile_id, said.node)
        return WorstProblem(JOB, verdict.said, verdict.rank, verdict.compile_id)
    assert firsts is not None
    named = _Naming(index.grouped)
    for kind in (Kind.FRAME_SKIPPED, Kind.FAILURE):
        if problem := firsts.get(kind):
            return _said_once(kind, problem, len(firsts.get_all(kind)), named)
    costs = run_summary(index, rank) if costs is None else costs
    frame = next(iter(costs["recompiling_frames"]), None)
    broke = next((b for b in costs["graph_breaks"] if b["cause"] != "by_design"), None)
    perf = _worst_perf(firsts.get_all(Kind.PERF))
    if perf is not None and perf[2] is not None and (frame is not None or broke is not None):
        timed = [t for t in (frame and frame["recompile_seconds"], broke and broke["seconds"]) if t is not None]
        if timed and perf[2] > max(timed):  # (untimed recompiles and breaks come first)
            return _said_once(Kind.PERF, perf[0], perf[1], named)
    if frame is not None and (broke is None or _recompiles_cost_more(frame, broke)):
        return _recompiles(frame, firsts.recompile_of(frame), named)
    if broke is not None:
        return _graph_breaks(broke, firsts.break_of(broke), named)
    if perf is not None:
        return _said_once(Kind.PERF, perf[0], perf[1], named)
    count = totals(index, rank).compile_ids
    return WorstProblem(None, f"no problems: {count:,} compile id{'s' if count != 1 else ''}, all ok"
                        if count else "no compile ids in these logs")


def _died_of(verdict: JobVerdict, failures: list[CompileProblem]) -> CompileProblem | None:
    """The failure a process died of: its exception's class (`BackendCompilerFailed`, the
    failure's fail_type) is the one the death names."""
    died_of = (verdict.exception or "").rsplit(".", 1)[-1]
    return next((p for p in failures if died_of and p.message and p.message.rsplit(".", 1)[-1] == died_of), None)


def _recompiles_cost_more(frame: dict, broke: dict) -> bool:
    """The recompiles' compile seconds against the break's; the counts where neither is timed."""
    if frame["recompile_seconds"] is not None or broke["seconds"] is not None:
        return (frame["recompile_seconds"] or 0.0) >= (broke["seconds"] or 0.0)
    return frame["recompiles"] >= broke["count"]


def _worst_perf(problems: list[CompileProblem]) -> tuple[CompileProblem, int, float | None] | None:
    """The perf problem that costs time most, as (its first, how many alike (cause and line), its
    seconds): the longest compile where one is long, else those said most often, first first."""
    costly = [p for p in problems if p.severity == COSTS_TIME]
    if not costly:
        return None
    alike: dict[tuple, list[CompileProblem]] = {}
    for p in costly:
        alike.setdefault((p.cause, p.user_location), []).append(p)
    timed = [(p.facts.seconds, p) for p in costly if isinstance(p.facts, CompileTime)]
    if timed:
        seconds, longest = max(timed, key=lambda t: t[0])
        return longest, len(alike[(longest.cause, longest.user_location)]), seconds
    group = max(alike.values(), key=len)  # (max keeps the first of equals: the run's order)
    return group[0], len(group), None


class _Firsts:
    """The first problem of each kind in the run's order, every one of them, and the first
    recompile of each frame and first break of each cause (run_summary's keys)."""

    def __init__(self) -> None:
        self.of_kind: dict[Kind, list[CompileProblem]] = {}
        self.recompiles: dict[tuple, CompileProblem] = {}
        self.breaks: dict[tuple, CompileProblem] = {}

    def get(self, kind: Kind) -> CompileProblem | None:
        return next(iter(self.of_kind.get(kind, ())), None)

    def get_all(self, kind: Kind) -> list[CompileProblem]:
        return self.of_kind.get(kind, [])

    def recompile_of(self, frame: dict) -> CompileProblem | None:
        return self.recompiles.get((frame["rank"], frame["process"], frame["frame"]))

    def break_of(self, broke: dict) -> CompileProblem | None:
        return self.breaks.get((broke["rank"], broke["process"], broke["cause"], broke["why"]))


def _first_problems(index: Index, rank) -> _Firsts:
    found = _Firsts()
    for node in index.iter_nodes(rank):
        if node.compile is None or node.cid.frame is None:  # (as run_summary: frames' compile ids only)
            continue
        for p in node.compile.verdict.problems:
            if p.node is not node or not p.primary:
                continue
            found.of_kind.setdefault(p.kind, []).append(p)
            key = (node.rank, node.group.pid)
            if p.kind is Kind.RECOMPILE:
                fk = node.cid.frame_key
                found.recompiles.setdefault((*key, f"{fk[1]}" if fk[0] is None else f"!{fk[0]}/{fk[1]}"), p)
            elif p.kind is Kind.GRAPH_BREAK:
                found.breaks.setdefault((*key, p.cause, p.why), p)
    return found


class _Naming:
    """Compile ids as the report names them: with their rank or process in a run of several."""

    def __init__(self, grouped: bool) -> None:
        self.grouped = grouped

    def of(self, problem: CompileProblem) -> str:
        node = problem.node
        return ref(node.id, node.rank, node.group.pid) if self.grouped else ref(node.id)

    def whose(self, found: dict) -> str:
        """` (rank 1)` of a run_summary row whose compile id is not known, in a run of several."""
        said = whose(found["rank"], found["process"]) if self.grouped else ""
        return f" ({said})" if said else ""


def _at(problem: CompileProblem) -> str:
    """` at model.py:30`, where its words do not say it already."""
    place = short_path(problem.user_location) if problem.user_location else None
    return f" at {place}" if place and place not in problem.why else ""


def _said_once(kind: Kind, problem: CompileProblem, count: int, named: _Naming) -> WorstProblem:
    """`frame skipped [1/0]: ... at model.py:9`, `2 failures, first [2/0]: ... at model.py:30`."""
    what = "frame skipped" if kind is Kind.FRAME_SKIPPED else kind.noun  # (its words say it runs eagerly)
    if count > 1:
        what = f"{kind.count(count)}, first"
    return _placed(kind, problem, f"{what} {named.of(problem)}: {one_line(problem.why, WHY_WIDTH)}{_at(problem)}")


def _recompiles(frame: dict, first: CompileProblem | None, named: _Naming) -> WorstProblem:
    """`4 recompiles of forward at model.py:18: guard on L['x'].size()[0] changed (first [0/1])`."""
    where = f" at {short_path(frame['location'])}" if frame.get("location") else ""
    said = f"{Kind.RECOMPILE.count(frame['recompiles'])} of {frame['function'] or 'a frame'}{where}"
    if first is None:
        return WorstProblem(Kind.RECOMPILE.key, said + named.whose(frame), frame["rank"])
    return _placed(Kind.RECOMPILE, first, f"{said}: {one_line(first.why, WHY_WIDTH)} (first {named.of(first)})")


def _graph_breaks(broke: dict, first: CompileProblem | None, named: _Naming) -> WorstProblem:
    """`2 graph breaks: a tensor turned into a Python number ... at model.py:33 (first [3/0])`."""
    said = Kind.GRAPH_BREAK.count(broke["count"])
    if first is None:
        return WorstProblem(Kind.GRAPH_BREAK.key, f"{said}: {one_line(broke['why'], WHY_WIDTH)}{named.whose(broke)}",
                            broke["rank"])
    return _placed(Kind.GRAPH_BREAK, first,
                   f"{said}: {one_line(first.why, WHY_WIDTH)}{_at(first)} (first {named.of(first)})")


def _placed(kind: Kind, problem: CompileProblem, said: str) -> WorstProblem:
    return WorstProblem(kind.key, said, problem.node.rank, problem.compile_id, problem.node)
