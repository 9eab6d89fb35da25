"""What the multi-rank diagnostics compare, gathered in one pass over the compile ids of all
ranks: each graph's collective schedule, its runtime estimates and tensor metadata, its output
code, its cache outcome, and each rank's graph execution order.

Torch logs them with `torch._inductor.config.log_tlparse = True` (`inductor_collective_schedule`
also without) and, for the order, inside `torch._inductor.debug.record_and_log_graph_execution_order()`.
Payloads are small JSON documents, read from disk here and not kept by the index.
"""

from __future__ import annotations

import hashlib
import sys
import weakref
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

import orjson

from tlview.domain.compile_id import CompileId
from tlview.domain.ddp_split import SPLIT_CHILD
from tlview.index.index import Index
from tlview.index.registry import cache_outcome

if TYPE_CHECKING:
    from tlview.domain.artifacts import Artifact

SCHEDULE = "inductor_collective_schedule"
RUNTIME_META = "inductor_runtime_and_tensor_meta"
EXECUTION = "graph_execution"
OUTPUT_CODE = "inductor_output_code"
# tlparse keeps the strongest outcome of a graph's caches: one miss makes it a miss
CACHE_STRENGTH = {"miss": 3, "hit": 2, "bypass": 1}


class GraphMeta(NamedTuple):
    """One `inductor_runtime_and_tensor_meta` payload, in brief: the payload stays on disk (20,000
    ranks' payloads held at once took gigabytes); `load_meta` reads it again when needed."""

    digest: bytes  # of the whole payload, keys sorted: tlparse compares the whole of it
    ops: int
    runtime_ns: float  # the sum of the ops' estimates
    artifact: Artifact
    graph: str | None = None  # which of its compile id's graphs, where DDPOptimizer split it: `submod_1`,
    # `backward 2` (a backward is compiled when first run, after the compile's metrics)


def load_meta(meta: GraphMeta) -> dict:
    payload = _json(meta.artifact)
    return payload if isinstance(payload, dict) else {}


def meta_ops(payload) -> list[dict]:
    ops = payload.get("ops") if isinstance(payload, dict) else None
    return [op for op in ops if isinstance(op, dict)] if isinstance(ops, list) else []


def _brief(payload, artifact) -> GraphMeta:
    ops = meta_ops(payload)
    runtime = 0.0
    for op in ops:
        try:
            runtime += float(op.get("estimated_runtime_ns") or 0)
        except (TypeError, ValueError):
            pass
    digest = hashlib.blake2b(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()
    return GraphMeta(digest, len(ops), runtime, artifact)


@dataclass
class RankGraphs:
    ranks: list[int]
    # rank -> compile id (with its attempt, as tlparse's graph folders) -> payloads, in the order logged
    schedules: dict[int, dict[str, list[list[str]]]] = field(default_factory=dict)
    runtime_meta: dict[int, dict[str, list[GraphMeta]]] = field(default_factory=dict)
    output_code: dict[tuple[int, str], Artifact] = field(default_factory=dict)  # the first, not loaded
    cache: dict[tuple[int, str], str] = field(default_factory=dict)  # (rank, compile key) -> outcome
    execution: dict[int, list[str]] = field(default_factory=dict)  # rank -> compile ids run, in order

    def schedule_ops(self, rank: int, cid: str) -> list[str]:
        return [op for ops in self.schedules.get(rank, {}).get(cid, ()) for op in ops]


def _json(artifact, parsed: dict | None = None):
    """The payload parsed; `parsed` holds what was parsed by content (Artifact.content_key): ranks
    alike log the same payloads, read and parsed once (the callers do not change them)."""
    key = artifact.content_key() if parsed is not None else None
    if parsed is not None and key is not None and key in parsed:
        return parsed[key]
    try:
        value = orjson.loads(artifact.load().text)
    except (orjson.JSONDecodeError, OSError, UnicodeError):
        value = None
    if parsed is not None and key is not None:
        parsed[key] = value
    return value


def _split_graph_names(node) -> dict[int, str]:
    """Where DDPOptimizer split the compile id's graph: each runtime estimate's graph by record,
    `submod_0` ... for the forwards (compiled in the split's order, before the compile's metrics),
    `backward 1` ... for the backwards (compiled as backward first reaches them), in the order
    compiled. Empty for a graph not split."""
    children = [str((a.info or {}).get("name") or "") for a in node.artifacts if a.name == SPLIT_CHILD]
    if len(children) < 2:
        return {}
    names, forwards, backwards, compiled = {}, 0, 0, False
    for art in sorted(node.artifacts, key=lambda a: a.rec):
        if art.name == "compilation_metrics":
            compiled = True
        elif art.name == RUNTIME_META:
            if compiled:
                backwards += 1
                names[art.rec] = f"backward {backwards}"
            else:
                names[art.rec] = children[forwards] if forwards < len(children) else f"forward {forwards + 1}"
                forwards += 1
    return names


@lru_cache(maxsize=4096)  # (1,024 real ranks asked it 5,122 times of a handful of ids: 0.05 s)
def compile_key(cid: str) -> str:
    """`0/0_1` -> `0/0`: the compile a graph execution names (torch logs no attempt there)."""
    parsed = CompileId.parse(cid)
    return str(parsed.compile_key) if parsed is not None else cid


def execution_order(payload) -> list[str] | None:
    """The compile ids of a `graph_execution` payload, as tlparse reads it (strings, or objects
    with a `compile_id`)."""
    order = payload.get("graph_execution_order") if isinstance(payload, dict) else None
    if not isinstance(order, list):
        return None
    ids = [item if isinstance(item, str) else item.get("compile_id") if isinstance(item, dict) else None
           for item in order]
    return [compile_key(i) for i in ids if isinstance(i, str)]


# The last gathering, and of what: rank_groups (the tree, --json's groups) and divergence each ask
# for it of one state of the index (1,024 real ranks: 0.15 s of CPU each time).
_last: tuple[weakref.ref[Index], tuple, RankGraphs] | None = None


def collect(index: Index, ranks: list[int], nodes: list | None = None) -> RankGraphs:
    """One pass over the nodes (and each rank's records of no compile id), never one per rank.
    `nodes`: (node, rank) pairs of these ranks' compile ids, when the caller has them. Made once
    per state of the index (what it read, its compile ids, its problems) and ranks asked for;
    callers only read it."""
    global _last
    state = (index.bytes_read, len(index.nodes), len(index.problems), tuple(ranks))
    last = _last
    if last is not None and last[0]() is index and last[1] == state:
        return last[2]
    graphs = _collect(index, ranks, nodes)
    _last = (weakref.ref(index), state, graphs)
    return graphs


def _collect(index: Index, ranks: list[int], nodes: list | None) -> RankGraphs:
    graphs = RankGraphs(ranks)
    rank_set = set(ranks)
    parsed: dict = {}  # payloads by content
    briefs: dict[str, GraphMeta] = {}  # runtime metadata in brief, by its payload's content
    if nodes is None:
        nodes = [(n, rank) for n in index.iter_nodes() if (rank := n.rank) in rank_set and n.cid.frame is not None]
    for node, rank in nodes:
        cid = node.id
        graph_names = _split_graph_names(node)
        for art in node.artifacts:
            name = art.name
            if name == SCHEDULE:
                ops = _json(art, parsed)
                ops = [sys.intern(op) for op in ops if isinstance(op, str)] if isinstance(ops, list) else []
                if ops:  # tlparse leaves out empty schedules
                    graphs.schedules.setdefault(rank, {}).setdefault(cid, []).append(ops)
            elif name == RUNTIME_META:
                key = art.content_key()
                brief = briefs.get(key) if key is not None else None
                if brief is None and (meta := _json(art)) is not None:
                    brief = _brief(meta, art)
                    if key is not None:
                        briefs[key] = brief
                if brief is not None:
                    graph = graph_names.get(art.rec) if graph_names else None
                    graphs.runtime_meta.setdefault(rank, {}).setdefault(cid, []).append(
                        brief._replace(artifact=art, graph=graph))
            elif name == OUTPUT_CODE:
                graphs.output_code.setdefault((rank, cid), art)
            elif (outcome := cache_outcome(name)) is not None:
                key = (rank, compile_key(cid))
                if CACHE_STRENGTH[outcome] > CACHE_STRENGTH.get(graphs.cache.get(key, ""), 0):
                    graphs.cache[key] = outcome
    for group, node in list(index.outside.items()):
        if group.rank not in rank_set:
            continue
        executions = [a for a in node.artifacts if a.name == EXECUTION]
        if executions:  # the latest one, as tlparse
            order = execution_order(_json(executions[-1], parsed))
            if order is not None:
                graphs.execution[group.rank] = order
    return graphs
