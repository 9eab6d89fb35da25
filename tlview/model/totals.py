"""The counts of a run, with the meanings of shared/corpus/README.md, from the model's own rules."""

from __future__ import annotations

from dataclasses import dataclass, field

from tlview.source.trace_file import TraceFile


@dataclass
class Totals:
    compile_ids: int = 0
    frames: int = 0
    compiles: int = 0
    recompiles: int = 0
    graph_breaks: int = 0
    compiles_with_graph_break: int = 0
    errors: int = 0
    restarts: int = 0
    records: int = 0
    problems: int = 0
    md5_bad: int = 0
    cache_events: dict = field(default_factory=dict)


def totals(index, rank=...) -> Totals:
    """Summed over ranks, or for one rank."""
    t = Totals()
    nodes = [n for n in index.iter_nodes(rank) if n.cid.frame is not None or n.cid.autograd is not None]
    t.compile_ids = len(nodes)
    t.frames = len({(n.group, n.cid.frame) for n in nodes if n.cid.frame is not None})
    compiles = {(n.group, n.cid.compile_key): n.compile for n in nodes}
    # a compiled-autograd capture with no frame (`!0/-/-`) is not a compile
    t.compiles = sum(1 for _, key in compiles if key.frame is not None)
    t.recompiles = sum(1 for _, key in compiles if key.is_recompile)
    for node in nodes:
        t.graph_breaks += len(node.breaks)
        t.errors += node.failed
        t.restarts += len(node.restart_reasons)
    t.compiles_with_graph_break = sum(1 for c in compiles.values() if c.has_graph_break)
    sources = [s for s in index.sources if rank is ... or getattr(s, "rank", None) == rank]
    t.records = sum(len(s.offsets) for s in sources)
    t.md5_bad = sum(s.md5_bad for s in sources if isinstance(s, TraceFile))
    t.problems = len(index.problems)
    t.cache_events = dict(list(index.cache_events.items()))
    return t
