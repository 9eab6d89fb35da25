"""The headless view of an index: one plain-data document that `--json` prints and `--report` renders.

Filtering (`--filter`, `--rank`) happens here, once, for both outputs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict

from tlview.diagnose.caches import cache_summary
from tlview.diagnose.classify import diagnose_node
from tlview.diagnose.costs import run_summary, timeline
from tlview.diagnose.ranks import describe as describe_divergence
from tlview.diagnose.ranks import divergence
from tlview.model.compile_node import CompileNode
from tlview.model.filters import Filter
from tlview.model.index import Index
from tlview.model.totals import totals as index_totals
from tlview.source.trace_file import TraceFile


def build_summary(index: Index, flt: Filter | None = None) -> dict:
    flt = flt or Filter()
    rank = flt.rank if flt.rank is not None else ...
    nodes = [n for n in index.iter_nodes(rank) if flt.matches(n)]
    totals = asdict(index_totals(index, rank))
    return {
        "tlview_summary_version": 1,
        "pytorch_version": index.pytorch_version,
        "sources": [_source(s) for s in index.sources],
        "ranks": [r for r in index.ranks() if r is not None],
        "filter": flt.describe() or None,
        "totals": totals,
        "compiles": [compile_entry(index, n) for n in nodes],
        "outside_compiles": [outside_entry(n) for n in index.outside.values()
                             if n.outside_items() and (rank is ... or n.rank == rank)],
        "graph_break_summary": graph_break_summary(nodes),
        "run_summary": run_summary(index, rank),
        "timeline": timeline(index, rank),
        "caches": cache_summary(index, rank),
        "divergence": (div := divergence(index)),
        "divergence_summary": describe_divergence(div),
        "problems": [_problem(p) for p in index.problems],
        "notes": list(index.notes),
        "unknown_record_kinds": dict(index.unknown_kinds),
    }


def compile_entry(index: Index, node: CompileNode) -> dict:
    compile_ = node.compile
    metrics = node.metrics or {}
    failure = node.failure
    return {
        "id": node.id,
        "rank": node.rank,
        "process": node.group.pid,  # when the compile's file has no rank: its process
        "source": node.source.name if node.source is not None else None,
        "status": compile_.status.word,
        "function": node.function(),
        "location": node.location(),
        "graph_breaks": [
            {"location": gb.location, "reason": gb.reason, "detail": gb.detail,
             "explanation": gb.explanation, "hints": gb.hints}
            for gb in node.breaks
        ],
        "restart_reasons": list(metrics.get("restart_reasons") or []),
        "recompile_reasons": [r.text for r in node.reasons],
        "recompile_of": sorted({str(r.failed_id) for r in node.reasons if r.failed_id is not None}),
        "fail_type": metrics.get("fail_type") if node.metrics is not None else (
            failure.fail_type or None if failure else None),
        "fail_reason": metrics.get("fail_reason") if node.metrics is not None else (
            failure.fail_reason if failure else None),
        "errors": [e.split("\n", 1)[0] for e in node.errors],
        "artifacts": node.artifact_names(),
        "guard_count": metrics.get("guard_count"),
        "shape_env_guard_count": metrics.get("shape_env_guard_count"),
        "graph_op_count": metrics.get("graph_op_count"),
        "compile_time_s": metrics.get("entire_frame_compile_time_s"),
        "dynamic": [{"kind": d.kind, "summary": d.summary} for d in node.dynamic],
        "perf_hints": list(node.perf_hints),
        "diagnosis": [d.as_dict() for d in diagnose_node(node)],
        "problems": [_problem(p) for p in node.problems],
    }


def outside_entry(node: CompileNode) -> dict:
    """A rank's or process's records of no compile id (torch.export's): what there is."""
    kinds = Counter([a.name for a in node.artifacts if a.kind.role.value not in ("dynamic", "version", "string")]
                    + [d.kind for d in node.dynamic])
    return {"rank": node.rank, "process": node.group.pid,
            "source": node.source.name if node.source is not None else None,
            "records": dict(kinds.most_common()), "artifacts": node.artifact_names()}


def graph_break_summary(nodes: list[CompileNode]) -> list[dict]:
    """Graph breaks de-duplicated by location and reason, with a count and the compile ids."""
    groups: dict[tuple, dict] = {}
    for node in nodes:
        for gb in node.breaks:
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


def _source(source) -> dict:
    entry = {"path": source.name, "kind": "trace" if isinstance(source, TraceFile) else "text",
             "bytes": source.size, "records": len(source.offsets)}
    if isinstance(source, TraceFile):
        entry.update(rank=source.rank, pid=source.pid, started=source.started,
                     md5_ok=source.md5_ok, md5_bad=source.md5_bad,
                     record_kinds={source.kind_names[k]: n for k, n in Counter(source.kinds).items()})
    else:
        entry.update(lines=source.lines, glog_lines=source.glog_lines, ranks=sorted(source.ranks),
                     pids=sorted(source.pids))
    return entry


def _problem(problem) -> dict:
    return {"file": problem.path, "line": problem.line, "kind": problem.kind,
            "message": problem.message, "compile_id": problem.node.id if problem.node else None}
