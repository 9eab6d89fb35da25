"""Where compile time goes, and which problems cost the most: the run's summary and timeline."""

from __future__ import annotations

from collections import defaultdict

from tlview.diagnose.classify import diagnose_node
from tlview.model.index import Index


def timeline(index: Index, rank=...) -> list[dict]:
    """Compiles by compile time, longest first."""
    rows = []
    for (node_rank, _key), compile_ in list(index.compiles.items()):
        if rank is not ... and node_rank != rank:
            continue
        p = compile_.phases()
        if p["total"] <= 0:
            continue
        head = compile_.attempts[0]
        rows.append({"id": str(compile_.key), "rank": node_rank, "function": head.function(),
                     "status": compile_.status.word, **{k: round(v, 6) for k, v in p.items()}})
    rows.sort(key=lambda r: -r["total"])
    return rows


def run_summary(index: Index, rank=...) -> dict:
    """The problems of the run ranked by what they cost."""
    rows = timeline(index, rank)
    time_of = {(r["rank"], r["id"]): r["total"] for r in rows}
    frames: dict = defaultdict(lambda: {"compiles": 0, "recompiles": 0, "seconds": 0.0, "causes": defaultdict(int)})
    breaks: dict = defaultdict(lambda: {"count": 0, "compile_ids": [], "seconds": 0.0})
    failures = []
    for node in index.iter_nodes(rank):
        if node.cid.frame is None:
            continue
        key = (node.rank, node.cid.frame_key)
        frame = frames[key]
        frame.setdefault("function", node.function())
        frame.setdefault("location", node.location())
        compile_seconds = time_of.get((node.rank, str(node.cid.compile_key)), 0.0) if node.cid.attempt == 0 else 0.0
        if node.cid.attempt == 0:
            frame["compiles"] += 1
            frame["seconds"] += compile_seconds
            if node.cid.is_recompile:
                frame["recompiles"] += 1
        for d in diagnose_node(node):
            if d.kind == "recompile" and node.cid.attempt == 0:
                frame["causes"][d.cause] += 1
            elif d.kind == "graph_break":
                b = breaks[(node.rank, d.cause, d.why)]
                b["count"] += 1
                b["compile_ids"].append(node.id)
                b["seconds"] += time_of.get((node.rank, str(node.cid.compile_key)), 0.0)
                b["fix"] = d.fix
            elif d.kind == "failure":
                failures.append({"id": node.id, "rank": node.rank, "cause": d.cause, "why": d.why,
                                 "fix": d.fix})
    recompiling = [
        {"rank": r, "frame": f"{fk[1]}" if fk[0] is None else f"!{fk[0]}/{fk[1]}",
         "function": v["function"], "location": v["location"], "compiles": v["compiles"],
         "recompiles": v["recompiles"], "seconds": round(v["seconds"], 3), "causes": dict(v["causes"])}
        for (r, fk), v in frames.items() if v["recompiles"]]
    recompiling.sort(key=lambda f: (-f["recompiles"], -f["seconds"]))
    repeated = [{"rank": r, "cause": cause, "why": why, **v, "seconds": round(v["seconds"], 3)}
                for (r, cause, why), v in breaks.items()]
    repeated.sort(key=lambda b: (-b["count"], -b["seconds"]))
    return {
        "total_compile_seconds": round(sum(r["total"] for r in rows), 3),
        "recompiling_frames": recompiling,
        "graph_breaks": repeated,
        "failures": failures,
    }
