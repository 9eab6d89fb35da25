"""One handler per record kind: what a record adds to its compile node. registry.py says which
handler serves which kind; a handler reads a trace record and its TORCH_LOGS text twin alike
(`record.text` is set for text), so every pane works on both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from tlview.model.artifacts import Artifact, DynamicEvent
from tlview.model.kinds import Record
from tlview.model.reasons import (
    is_graph_break_message,
    is_recompile_limit_message,
    parse_graph_break,
    parse_recompile_reasons,
)

if TYPE_CHECKING:
    from tlview.model.index import Index

# The metrics fields the index keeps in memory (status, tree badges, report, timeline); the whole
# record (about 100 fields, 40 KB with the configs) is read from disk when a pane shows it.
METRICS_KEPT = (
    "co_name", "co_filename", "co_firstlineno", "compile_id", "cache_size", "guard_count",
    "shape_env_guard_count", "graph_op_count", "graph_node_count", "entire_frame_compile_time_s",
    "backend_compile_time_s", "inductor_compile_time_s", "code_gen_time_s",
    "dynamo_time_before_restart_s", "fail_type", "fail_reason", "fail_user_frame_filename",
    "fail_user_frame_lineno", "restart_reasons", "recompile_reason", "num_graph_breaks",
    "start_time", "elapsed_time",
)
# One string object per artifact name: thousands of artifacts share a few dozen names.
_NAMES: dict[str, str] = {}


def _small(info: dict) -> dict | None:
    small = {k: v for k, v in info.items() if isinstance(v, (str, int, float, bool)) and
             (not isinstance(v, str) or len(v) < 300)}
    return small or None


def attach(index: "Index", record: Record, info: dict | None = None) -> Artifact:
    """Keep the record as an artifact of its compile id (or of the run, if it has none)."""
    name = _NAMES.setdefault(record.name, record.name)
    artifact = Artifact(name, record.kind, record.source, record.rec, info)
    index.attach(record.node, artifact)
    return artifact


# ---- trace records --------------------------------------------------------------------------------

def on_nothing(index: "Index", record: Record) -> None:
    """String-table entries (read by the scanner) and records only counted."""


def on_artifact(index: "Index", record: Record) -> None:
    """A graph, code, guards or any other payload: kept by place, shown on demand (with the small
    metadata of a record kind, e.g. the output code's file; an artifact's is only its name)."""
    attach(index, record, _small(record.event) if record.meta and record.kind.event_key is None else None)


def on_unknown(index: "Index", record: Record) -> None:
    index.count_unknown(record.name)
    on_artifact(index, record)


def on_cache(index: "Index", record: Record) -> None:
    attach(index, record)
    index.count_cache_event(record.name)


def on_dynamo_start(index: "Index", record: Record) -> None:
    node = record.node
    if node is None:
        return
    stack = record.event.get("stack")
    if isinstance(stack, list):
        # Only the frame being compiled stays in memory; the whole stack is read when shown.
        node.frame = next((f for f in reversed(stack) if isinstance(f, dict)), None)
        node.start = (record.source, record.rec)


def on_metrics(index: "Index", record: Record) -> None:
    event = record.event
    summary = {k: event[k] for k in METRICS_KEPT if event.get(k) is not None}
    if summary.get("restart_reasons") == []:
        del summary["restart_reasons"]
    node = record.node
    if node is not None:
        if record.name == "compilation_metrics":
            node.metrics = summary
        elif record.name in ("bwd_compilation_metrics", "aot_autograd_backward_compilation_metrics"):
            node.bwd_metrics = summary
    attach(index, record)


def on_dynamic(index: "Index", record: Record) -> None:
    """A dynamic-shape event: its fields (and user stack) are read from disk when shown."""
    node = record.node
    if record.text is not None:
        on_dynamic_text(index, record)
        return
    if node is None:
        attach(index, record)
        return
    node.dynamic.append(DynamicEvent(record.name, None, record.source, record.rec))
    if record.name in ("guard_added", "propagate_real_tensors_provenance"):
        attach(index, record)


def on_recompile_reasons(index: "Index", record: Record) -> None:
    node = record.node
    if record.text is None:
        attach(index, record)
        if node is not None:
            node.recompile_reasons = parse_recompile_reasons(record.payload or "")
            index.note_recompile_reasons(node)
    elif node is not None and not node.text.recompile_reasons:
        # `recompiles` and `recompiles_verbose` both say it: keep the first
        node.text.recompile_reasons = parse_recompile_reasons(record.payload or "")
        index.note_recompile_reasons(node)


def on_graph_break(index: "Index", record: Record) -> None:
    node = record.node
    if record.text is None:
        attach(index, record)
        if node is not None:
            node.graph_breaks.append(parse_graph_break(record.payload or "", record.source, record.rec))
    elif node is not None and is_graph_break_message(record.text.lines):
        node.text.graph_breaks.append(parse_graph_break(record.payload or "", record.source, record.rec))


def on_dynamo_error(index: "Index", record: Record) -> None:
    attach(index, record)
    if record.node is not None:
        record.node.errors.append(record.payload or "")


def on_torch_version(index: "Index", record: Record) -> None:
    attach(index, record)
    try:
        version = orjson.loads(record.payload or "")
    except orjson.JSONDecodeError:
        return
    if isinstance(version, dict) and isinstance(version.get("pytorch_version"), str):
        index.pytorch_version = version["pytorch_version"]


# ---- TORCH_LOGS text ------------------------------------------------------------------------------

def on_text_artifact(index: "Index", record: Record) -> None:
    """A tagged block of text (`[__graph_code]`, `[__guards]`, `[__output_code]`, ...): an artifact
    under its TORCH_LOGS name, read back from disk when shown."""
    attach(index, record)


def on_perf_hint(index: "Index", record: Record) -> None:
    if record.node is not None:
        record.node.perf_hints.append(record.payload or "")


_DYNAMIC_TEXT = (("create_symbol", "create_symbol"), ("create_unbacked_symbol", "create_unbacked_symbol"),
                 ("set_replacement", "symbolic_shape_specialization"))


def on_dynamic_text(index: "Index", record: Record) -> None:
    node = record.node
    lines = record.text.lines
    if node is None or not lines:
        return
    first = lines[0]
    for prefix, kind in _DYNAMIC_TEXT:
        if first.startswith(prefix + " "):
            node.dynamic.append(DynamicEvent(kind, first[len(prefix) + 1:]))
            return
    if first.startswith("eval ") and "[guard added]" in first:
        node.dynamic.append(DynamicEvent("guard_added", first[5:].split(" [guard added]")[0]))


def on_dynamo_text(index: "Index", record: Record) -> None:
    """Plain dynamo lines: where a compile starts, restarts, compiles, and the recompile limit."""
    node = record.node
    lines = record.text.lines
    if node is None or not lines:
        return
    first = lines[0]
    evidence = node.text
    if first.startswith("torchdynamo start compiling "):
        evidence.start = first[len("torchdynamo start compiling "):].split(", stack")[0]
    elif first.startswith("Restarting analysis due to"):
        evidence.restarts.append(first)
    elif first.startswith("Step 2: calling compiler function"):
        evidence.compiled = True
    elif first.startswith("COMPILING GRAPH due to"):
        evidence.graph_compiled = True
    elif is_recompile_limit_message(first):
        node.errors.append("\n".join(lines))
