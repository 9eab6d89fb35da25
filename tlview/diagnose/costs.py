"""Where compile time goes, and which problems cost the most: the run's summary and timeline."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tlview.diagnose.classify import diagnose_node
from tlview.diagnose.stepping import stepping
from tlview.diagnose.timeline import line_span
from tlview.domain.verdict import Kind, place_of
from tlview.index.index import Index


def timeline(index: Index, rank=..., between=None) -> list[dict]:
    """Compiles by compile time, longest first. (`between`: stepping.py)"""
    rows: list[dict[str, Any]] = []
    for (group, _key), compile_ in stepping(list(index.compiles.items()), between):
        if rank is not ... and group.rank != rank:
            continue
        p = compile_.phases()
        if p["total"] <= 0:
            continue
        head = compile_.attempts[0]
        rows.append({"id": str(compile_.key), "rank": group.rank, "process": group.pid,
                     "function": head.function(),
                     "status": compile_.status.word, **{k: round(v, 6) for k, v in p.items()}})
    rows.sort(key=lambda r: -r["total"])
    return rows


def _sum(values: list) -> float | None:
    """Seconds added up; None (unknown) when no compile among them has a time: TORCH_LOGS text
    has no compile times, and a missing time is not a zero."""
    known = [v for v in values if v is not None]
    return round(sum(known), 3) if known else None


# Where the costs' seconds come from: a trace's compilation metrics, else (TORCH_LOGS text has no
# compile times) the time from a compile id's first to its last line, which is said with them.
METRICS, LINE_TIMES = "compilation metrics", "TORCH_LOGS line times (a compile id's first to last line)"


def _line_times(index: Index, rank, known: dict) -> dict:
    """(rank, process, id) -> seconds between the first and last lines of each compile that only
    TORCH_LOGS text tells of (its metrics, had there been any, are in `known`)."""
    found = {}
    for (group, _key), compile_ in list(index.compiles.items()):
        key = (group.rank, group.pid, str(compile_.key))
        if (rank is not ... and group.rank != rank) or key in known or compile_.final_metrics is not None:
            continue
        # (one line, or lines of one moment, tell no time: unknown, not 0 s)
        if (span := line_span(compile_)) is not None and span[1] > span[0]:
            found[key] = round(span[1] - span[0], 6)
    return found


def run_summary(index: Index, rank=..., rows: list[dict] | None = None, between=None) -> dict:
    """The problems of the run ranked by what they cost. `rows`: timeline(index, rank), if the
    caller has it; `between`: stepping.py (at 10,000 ids the loop reads each fix's config from
    disk, 0.5 s)."""
    rows = timeline(index, rank, between) if rows is None else rows
    time_of = {(r["rank"], r["process"], r["id"]): r["total"] for r in rows}
    from_lines = _line_times(index, rank, time_of)
    time_of.update(from_lines)
    frames: dict = defaultdict(lambda: {"compiles": 0, "recompiles": 0, "times": [], "recompile_times": [],
                                        "causes": defaultdict(int)})
    breaks: dict = defaultdict(lambda: {"count": 0, "compile_ids": [], "times": []})
    failures = []
    for node in stepping(index.iter_nodes(rank), between):
        if node.cid.frame is None or node.compile is None:  # (the index gives every node its compile)
            continue
        frame = frames[(node.group, node.cid.frame_key)]
        if not frame.get("function"):
            function, location = place_of(node.compile)
            frame["function"], frame["location"] = node.function() or function, node.location() or location
        seconds = time_of.get((node.rank, node.group.pid, str(node.cid.compile_key)))
        if node.cid.attempt == 0:
            frame["compiles"] += 1
            frame["times"].append(seconds)
            if node.compile.verdict.has(Kind.RECOMPILE):
                frame["recompiles"] += 1
                frame["recompile_times"].append(seconds)
        for d in diagnose_node(node):
            if d.kind == "recompile" and node.cid.attempt == 0:
                frame["causes"][d.cause] += 1
            elif d.kind == "graph_break":
                b = breaks[(node.group, d.cause, d.why)]
                b["count"] += 1
                b["compile_ids"].append(node.id)
                b["times"].append(seconds)
                b["fix"] = d.fix
            elif d.kind == "failure":
                failures.append({"id": node.id, "rank": node.rank, "process": node.group.pid,
                                 "cause": d.cause, "why": d.why, "fix": d.fix})
    recompiling = [
        {"rank": g.rank, "process": g.pid, "frame": f"{fk[1]}" if fk[0] is None else f"!{fk[0]}/{fk[1]}",
         "function": v["function"], "location": v["location"], "compiles": v["compiles"],
         "recompiles": v["recompiles"], "seconds": _sum(v["times"]),
         "recompile_seconds": _sum(v["recompile_times"]), "causes": dict(v["causes"])}
        for (g, fk), v in frames.items() if v["recompiles"]]
    # ranked by what the recompiles cost (the first compile would be paid anyway)
    recompiling.sort(key=lambda f: (-(f["recompile_seconds"] or 0.0), -f["recompiles"]))
    repeated = [{"rank": g.rank, "process": g.pid, "cause": cause, "why": why, "count": v["count"],
                 "compile_ids": v["compile_ids"], "fix": v["fix"], "seconds": _sum(v["times"])}
                for (g, cause, why), v in breaks.items()]
    repeated.sort(key=lambda b: (-b["count"], -(b["seconds"] or 0.0)))
    return {
        "total_compile_seconds": _sum(list(time_of.values())),
        "times_from": [what for what, used in ((METRICS, rows), (LINE_TIMES, from_lines)) if used],
        "recompiling_frames": recompiling,
        "graph_breaks": repeated,
        "failures": failures,
    }
