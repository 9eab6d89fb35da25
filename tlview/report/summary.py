"""The headless view of an index: one plain-data document that `--json` prints and `--report` renders.

Filtering (`--filter`, `--rank`) happens here, once, for both outputs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from typing import TypeVar, cast

from tlview.diagnose.caches import cache_summary
from tlview.diagnose.classify import Diagnosis, diagnose, diagnose_node, fix_for
from tlview.diagnose.costs import run_summary, timeline
from tlview.diagnose.hang import hang_lines, job_verdict
from tlview.diagnose.ranks import describe as describe_divergence
from tlview.diagnose.ranks import divergence
from tlview.diagnose.what_ran import rank_groups
from tlview.diagnose.worst import worst_problem
from tlview.domain.compile_node import Compile, CompileNode
from tlview.domain.ddp_split import ddp_split
from tlview.domain.input_problems import InputProblem
from tlview.domain.places import user_function
from tlview.domain.rank_history import RankGroups
from tlview.domain.reasons import GraphBreak
from tlview.domain.totals import totals as index_totals
from tlview.domain.verdict import CompileProblem, Kind, place_of
from tlview.index.index import Index
from tlview.report.json_types import (
    CompileEntry,
    CompileProblemEntry,
    DdpSplitEntry,
    DiagnosisEntry,
    GraphBreakEntry,
    GraphBreakGroup,
    InputProblemEntry,
    JobVerdictEntry,
    MissingSourceEntry,
    OutsideEntry,
    SourceExcerptEntry,
    SourceFileEntry,
    Summary,
)
from tlview.source.text_log import TextLog
from tlview.source.trace_file import TraceFile
from tlview.source.user_source import SourceFiles
from tlview.views.filters import Filter


def build_summary(index: Index, flt: Filter | None = None, sources: SourceFiles | None = None,
                  streamed: bool = False) -> Summary:
    """`sources`: the user's files, for the lines at each problem (none read without it).
    `streamed`: the compile ids' entries are made as they are read (CompileEntries), for an output
    that reads them once (--json writes each, --report folds them), and `source_missing` (what
    making them found) is a function called after."""
    flt = flt or Filter()
    rank = flt.rank if flt.rank is not None else ...
    nodes = [n for n in index.iter_nodes(rank) if flt.matches(n)]
    # the totals of what is listed: with a filter, of the compiles it keeps (and the run's beside)
    totals = asdict(index_totals(index, rank, flt.matches if flt.active else None))
    groups = rank_groups(index)  # ranks alike in compile history and in what they ran (report and markdown fold them)
    summary: Summary = {
        "tlview_summary_version": 1,
        "pytorch_version": index.pytorch_version,
        "sources": [_source(s, groups) for s in index.sources],
        "ranks": [r for r in index.ranks() if r is not None],
        "rank_groups": groups.as_data(),
        "filter": flt.describe() or None,
        "totals": totals,
        "run_totals": asdict(index_totals(index, rank)) if flt.active else totals,
        "compiles": (CompileEntries(nodes, lambda n: compile_entry(index, n, sources)) if streamed
                     else [compile_entry(index, n, sources) for n in nodes]),
        "outside_compiles": [outside_entry(n, sources) for n in index.outside.values()
                             if (n.outside_items() or compile_of(n).verdict.problems)
                             and (rank is ... or n.rank == rank) and (not flt.active or flt.matches(n))],
        "graph_break_summary": graph_break_summary(nodes),
        "run_summary": (costs := run_summary(index, rank, rows := timeline(index, rank))),
        "timeline": rows,
        "caches": cache_summary(index, rank),
        "divergence": (div := divergence(index)),
        "divergence_summary": describe_divergence(div),  # what can hang the job first
        "hang_summary": hang_lines(div),
        "job_verdict": _job_verdict(div),
        # what happened, in one line: the worst problem (worst.py), the explorer's first screen's
        "headline": worst_problem(index, job_verdict(div), rank, costs).headline,
        "problems": [_input_problem(p) for p in index.problems],
        "source_missing": (lambda: _missing(sources)) if streamed else _missing(sources),
        "notes": list(index.notes),
        "unknown_record_kinds": dict(index.unknown_kinds),
    }
    return summary


def _job_verdict(div: dict) -> JobVerdictEntry | None:
    verdict = job_verdict(div)
    if verdict is None:
        return None
    return {"state": verdict.state, "said": verdict.said, "rank": verdict.rank, "compile_id": verdict.compile_id}


def compile_of(node: CompileNode) -> Compile:
    """The compile a node of an index is an attempt of (the index gives each node one)."""
    assert node.compile is not None, node.id
    return node.compile


class CompileEntries:
    """The compile ids' entries, each made as it is read and not kept: 100,000 recompiles of one
    frame held 410 MB of entries beside the index until --json was written. Each reading makes
    them again (read once); `map` is a reading of each (None leaves one out)."""

    def __init__(self, nodes: list[CompileNode], make: Callable[[CompileNode], CompileEntry],
                 keep: Callable[[CompileEntry], CompileEntry | None] | None = None) -> None:
        self._nodes, self._make, self._keep = nodes, make, keep

    def __iter__(self) -> Iterator[CompileEntry]:
        for node in self._nodes:
            entry = self._make(node)
            if self._keep is None:
                yield entry
            elif (kept := self._keep(entry)) is not None:
                yield kept

    def map(self, keep: Callable[[CompileEntry], CompileEntry | None]) -> CompileEntries:
        before = self._keep
        if before is None:
            return CompileEntries(self._nodes, self._make, keep)

        def both(entry: CompileEntry) -> CompileEntry | None:
            kept = before(entry)
            return None if kept is None else keep(kept)

        return CompileEntries(self._nodes, self._make, both)

    def listed(self) -> set[tuple[int | None, int | None]]:
        """(rank, process) of each compile id, without making the entries (of all, before `map`)."""
        return {(n.rank, n.group.pid) for n in self._nodes}


def listed(compiles: Iterable[CompileEntry]) -> set[tuple[int | None, int | None]]:
    """(rank, process) of the compile ids listed: a list's, or CompileEntries' without making them."""
    if isinstance(compiles, CompileEntries):
        return compiles.listed()
    return {(c["rank"], c["process"]) for c in compiles}


T = TypeVar("T")


def later(value: T | Callable[[], T]) -> T:
    """A value of a streamed summary that is known only once its compile entries were read."""
    return value() if callable(value) else value


def compile_entry(index: Index, node: CompileNode, sources: SourceFiles | None = None) -> CompileEntry:
    """One compile id. Its problems are its part of its compile's verdict (the problems whose
    record is in this attempt); `status` is the compile's."""
    entry = _compile_entry(index, node, sources)
    if (split := ddp_split([node])) is not None:
        entry["ddp_split"] = cast(DdpSplitEntry, split.as_dict())
    return entry


def _compile_entry(index: Index, node: CompileNode, sources: SourceFiles | None) -> CompileEntry:
    compile_ = compile_of(node)
    verdict = compile_.verdict
    mine = [p for p in verdict.problems if p.node is node]
    metrics = node.metrics or {}
    failure = next((p for p in mine if p.kind is Kind.FAILURE), None)
    recompile = next((p for p in mine if p.kind is Kind.RECOMPILE), None)
    function, location = place_of(compile_)
    function = "torch.export" if verdict.export else node.function() or function
    return {
        "id": node.id,
        "rank": node.rank,
        "process": node.group.pid,  # when the compile's file has no rank: its process
        "source": node.source.name if node.source is not None else None,
        "status": verdict.status.word,
        "function": function,
        "user_function": user_function(function),  # a resume function's parent
        "location": node.location() or location,
        "graph_breaks": [_graph_break(p) for p in mine if p.kind is Kind.GRAPH_BREAK],
        "restart_reasons": [p.message if p.logged else f"(not logged) {p.why}"
                            for p in mine if p.kind is Kind.RESTART],
        "recompile_reasons": [r.text for r in node.reasons],
        "recompile_of": sorted({str(r.failed_id) for r in node.reasons if r.failed_id is not None}),
        "against": recompile.against.id if recompile is not None and recompile.against is not None else None,
        "fail_type": (failure.evidence.fail_type or None) if failure else None,
        "fail_reason": failure.evidence.fail_reason if failure else None,
        "errors": [e.split("\n", 1)[0] for e in node.errors],
        "artifacts": node.artifact_names(),
        "guard_count": metrics.get("guard_count"),
        "guard_checks": node.text.guard_checks or None,  # TORCH_LOGS=guards: its tree's leaves
        "shape_env_guard_count": metrics.get("shape_env_guard_count"),
        "graph_op_count": metrics.get("graph_op_count"),
        "compile_time_s": metrics.get("entire_frame_compile_time_s"),
        "dynamic": [{"kind": d.kind, "summary": d.summary} for d in node.dynamic],
        "perf_hints": list(node.perf_hints),
        "verdict": [problem_entry(p, sources) for p in mine],
        "diagnosis": [diagnosis_entry(d, sources) for d in diagnose_node(node)],
        "problems": [_input_problem(p) for p in node.problems],
    }


def diagnosis_entry(diagnosis: Diagnosis, sources: SourceFiles | None) -> DiagnosisEntry:
    """A diagnosis, with the user's lines at its place (`source`: None where not read)."""
    # (Diagnosis.as_dict, in tlview.diagnose, makes the fields DiagnosisEntry declares)
    return {**cast(DiagnosisEntry, diagnosis.as_dict()), "source": _source_lines(diagnosis.place, sources)}


def _source_lines(place: tuple[str, int] | None, sources: SourceFiles | None) -> SourceExcerptEntry | None:
    excerpt = sources.excerpt(*place) if sources is not None and place else None
    # (Excerpt.as_dict, in tlview.source, makes the fields SourceExcerptEntry declares)
    return cast(SourceExcerptEntry, excerpt.as_dict()) if excerpt is not None else None


def _missing(sources: SourceFiles | None) -> list[MissingSourceEntry]:
    """The user's files a problem's lines were not read from, once each, and why."""
    if sources is None:
        return []
    return [{"path": path, "why": why} for path, why in sources.missing.items()]


def _graph_break(problem: CompileProblem) -> GraphBreakEntry:
    if not problem.logged:
        return {"location": None, "reason": problem.why, "detail": None, "explanation": None,
                "hints": [], "logged": False, "cause": problem.cause}
    gb = problem.evidence
    return {"location": gb.location, "reason": gb.reason, "detail": gb.detail,
            "explanation": gb.explanation, "hints": gb.hints, "logged": True, "cause": problem.cause}


def problem_entry(problem: CompileProblem, sources: SourceFiles | None = None) -> CompileProblemEntry:
    """A problem of the verdict as --json gives it (and --report, markdown and --fail-on read)."""
    entry: CompileProblemEntry = {"kind": problem.kind.key, "cause": problem.cause, "why": problem.why,
                                  "fix": fix_for(problem), "compile_id": problem.compile_id,
                                  "function": problem.function, "resumed_at": problem.resumed_at,
                                  "location": problem.user_location,
                                  "against": problem.against.id if problem.against is not None else None,
                                  "logged": problem.logged, "primary": problem.primary,
                                  "follows": problem.follows.compile_id if problem.follows is not None else None,
                                  "message": problem.message.split("\n", 1)[0],
                                  "exception": problem.evidence.fail_type if problem.kind is Kind.FAILURE else None,
                                  "fail_reason": problem.evidence.fail_reason if problem.kind is Kind.FAILURE else None,
                                  # the records it is read from: record numbers in the compile id's own log
                                  "evidence": [rec for src, rec in problem.records if src is not None],
                                  # (a perf problem torch told no line of, as a long compile: none)
                                  "source": _source_lines(problem.source_place, sources)
                                  if problem.kind is not Kind.PERF or problem.place_told else None}
    if problem.kind is Kind.PERF and problem.severity is not None:
        entry["severity"] = problem.severity
    return entry


def outside_entry(node: CompileNode, sources: SourceFiles | None = None) -> OutsideEntry:
    """A rank's or process's records of no compile id (torch.export's): what there is, and its
    verdict (a failed export)."""
    kinds = Counter([a.name for a in node.artifacts if a.kind.role.value not in ("dynamic", "version", "string")]
                    + [d.kind for d in node.dynamic])
    verdict = compile_of(node).verdict
    return {"rank": node.rank, "process": node.group.pid,
            "source": node.source.name if node.source is not None else None,
            "status": verdict.status.word,
            "records": dict(kinds.most_common()), "artifacts": node.artifact_names(),
            "verdict": [problem_entry(p, sources) for p in verdict.problems],
            "diagnosis": [diagnosis_entry(d, sources) for d in diagnose(verdict.problems)]}


def graph_break_summary(nodes: list[CompileNode]) -> list[GraphBreakGroup]:
    """Graph breaks de-duplicated by location and reason, with a count and the compile ids (those
    not logged, known from their restarts, under one entry)."""
    groups: dict[tuple, GraphBreakGroup] = {}
    for node in nodes:
        for problem in compile_of(node).verdict.of(Kind.GRAPH_BREAK):
            if problem.node is not node:
                continue
            gb = problem.evidence if problem.logged else GraphBreak(None, "not logged (known from a restart)")
            key = (node.group, gb.location, gb.reason, gb.detail)
            entry = groups.get(key)
            if entry is None:
                entry = groups[key] = {"rank": node.rank, "process": node.group.pid, "location": gb.location,
                                       "reason": gb.reason, "detail": gb.detail,
                                       "explanation": gb.explanation, "hints": gb.hints,
                                       "count": 0, "compile_ids": []}
            entry["count"] += 1
            entry["compile_ids"].append(node.id)
    return list(groups.values())


def _source(source: TraceFile | TextLog, groups: RankGroups) -> SourceFileEntry:
    kind, size, records = ("trace" if isinstance(source, TraceFile) else "text"), source.size, len(source.offsets)
    if isinstance(source, TraceFile):
        group = groups.of(source.rank)
        return {"path": source.name, "kind": kind, "bytes": size, "records": records,
                "rank": source.rank, "rank_group": group.rank if group is not None else None,
                "pid": source.pid, "started": source.started,
                "md5_ok": source.md5_ok, "md5_bad": source.md5_bad,
                "record_kinds": {source.kind_names[k]: n for k, n in Counter(source.kinds).items()}}
    return {"path": source.name, "kind": kind, "bytes": size, "records": records,
            "lines": source.lines, "glog_lines": source.glog_lines, "ranks": sorted(source.ranks),
            "pids": sorted(source.pids)}


def _input_problem(problem: InputProblem) -> InputProblemEntry:
    return {"file": problem.path, "line": problem.line, "kind": problem.kind,
            "message": problem.message,
            "compile_id": problem.node.id if isinstance(problem.node, CompileNode) else None}
