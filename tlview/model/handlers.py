"""One handler per trace record kind, registered in one table: adding a kind is adding an entry.

A handler receives the index, the compile node of the record (or None), the source file, the
record number and its metadata. Handlers that need the payload text (small artifacts such as
recompile reasons) are registered in PAYLOAD_HANDLERS and run once the record is complete.
Record kinds with no handler are kept as generic artifacts, so nothing in a trace is dropped.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

import orjson

from tlview.model.compile_id import REASON_CID_RE, CompileId
from tlview.model.compile_node import (
    Artifact,
    CompileNode,
    DynamicEvent,
    GraphBreak,
    RecompileReason,
)

if TYPE_CHECKING:
    from tlview.model.index import Index

# Metadata-only kinds that carry no artifact of their own.
SILENT_KINDS = frozenset({"str", "chromium_event", "describe_tensor", "describe_storage",
                          "describe_source"})

# Payload-carrying kinds shown as graphs or code (tlparse writes each as a file).
GRAPH_KINDS = frozenset({
    "dynamo_output_graph", "aot_forward_graph", "aot_backward_graph", "aot_inference_graph",
    "aot_joint_graph", "inductor_pre_grad_graph", "inductor_post_grad_graph",
    "compiled_autograd_graph", "optimize_ddp_split_graph", "optimize_ddp_split_child",
    "inductor_output_code", "graph_dump", "dump_file", "exported_program",
})
GUARD_KINDS = frozenset({"dynamo_cpp_guards_str", "dynamo_guards"})
DYNAMIC_KINDS = frozenset({"create_symbol", "create_unbacked_symbol",
                           "symbolic_shape_specialization", "guard_added_fast", "guard_added",
                           "propagate_real_tensors_provenance", "expression_created",
                           "guard_on_data_dependent_error"})
METRICS_KINDS = frozenset({"compilation_metrics", "bwd_compilation_metrics",
                           "aot_autograd_backward_compilation_metrics",
                           "compilation_metrics_runtime", "bwd_compilation_metrics_runtime"})
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

Handler = Callable[["Index", "CompileNode | None", object, int, str, dict], None]
PayloadHandler = Callable[["Index", "CompileNode | None", object, int, str, dict, str], None]


def _event(meta: dict, kind: str) -> dict:
    value = meta.get(kind)
    return value if isinstance(value, dict) else {}


# Returned by a handler that needs the record's payload (a PAYLOAD_HANDLERS entry) when complete.
WANTS_PAYLOAD = object()
# One string object per artifact name: thousands of artifacts share a few dozen names.
_NAMES: dict[str, str] = {}


def on_dynamo_start(index: "Index", node, source, rec: int, kind: str, meta: dict) -> None:
    if node is None:
        return
    stack = _event(meta, "dynamo_start").get("stack")
    if isinstance(stack, list):
        # Only the frame being compiled stays in memory; the whole stack is read when shown.
        node.stack = [f for f in stack[-1:] if isinstance(f, dict)]
        node.stack_source = source
        node.start_rec = rec


def on_metrics(index: "Index", node, source, rec: int, kind: str, meta: dict) -> None:
    event = _event(meta, kind)
    summary = {k: event[k] for k in METRICS_KEPT if event.get(k) is not None}
    if node is not None:
        if kind == "compilation_metrics":
            node.metrics = summary
        elif kind in ("bwd_compilation_metrics", "aot_autograd_backward_compilation_metrics"):
            node.bwd_metrics = summary
        node.artifacts.append(Artifact(kind, kind, source, rec))
        if summary.get("restart_reasons") == []:
            del summary["restart_reasons"]


def on_graph(index: "Index", node, source, rec: int, kind: str, meta: dict) -> None:
    info = _event(meta, kind)
    _attach(index, node, Artifact(kind, kind, source, rec, _small(info) if info else None))


def on_artifact(index: "Index", node, source, rec: int, kind: str, meta: dict):
    info = _event(meta, "artifact")
    name = info.get("name")
    name = _NAMES.setdefault(name, name) if isinstance(name, str) else "artifact"
    _attach(index, node, Artifact(name, "artifact", source, rec))
    if name.endswith(("_cache_hit", "_cache_miss", "_cache_bypass")):
        index.count_cache_event(name)
    if "artifact:" + name in PAYLOAD_HANDLERS:
        return WANTS_PAYLOAD
    return None


def on_dynamic(index: "Index", node, source, rec: int, kind: str) -> None:
    """Lazy: the event's fields (and its user stack) are read from disk when shown."""
    if node is None:
        index.add_unattached(kind, source, rec)
        return
    node.dynamic.append(DynamicEvent(kind, None, source=source, rec=rec))
    if kind in ("guard_added", "propagate_real_tensors_provenance"):
        node.artifacts.append(Artifact(kind, kind, source, rec))


def on_lazy_graph(index: "Index", node, source, rec: int, kind: str) -> None:
    _attach(index, node, Artifact(kind, kind, source, rec))


def dynamic_summary(kind: str, info: dict) -> str:
    if kind == "create_symbol":
        return f"{info.get('symbol')} = {info.get('val')} for {info.get('source')} (range {info.get('vr')})"
    if kind == "create_unbacked_symbol":
        return f"{info.get('symbol')} (unbacked, range {info.get('vr')}) from {info.get('node_id') or ''}".rstrip()
    if kind == "symbolic_shape_specialization":
        sources = info.get("sources")
        where = ", ".join(sources) if isinstance(sources, list) else ""
        return f"{info.get('symbol')} specialized to {info.get('value')} ({where}): {info.get('reason')}"
    if kind in ("guard_added_fast", "guard_added"):
        return f"guard added: {info.get('expr')}"
    return ", ".join(f"{k}={v}" for k, v in list(info.items())[:4] if not isinstance(v, (list, dict)))


def on_generic(index: "Index", node, source, rec: int, kind: str, meta: dict) -> None:
    index.unknown_kinds[kind] = index.unknown_kinds.get(kind, 0) + 1
    _attach(index, node, Artifact(kind, kind, source, rec, _small(_event(meta, kind))))


def _attach(index: "Index", node, artifact: Artifact) -> None:
    if node is not None:
        node.artifacts.append(artifact)
    else:
        index.add_unattached(artifact.name, artifact.source, artifact.rec, artifact)


def _small(info: dict) -> dict | None:
    small = {k: v for k, v in info.items() if isinstance(v, (str, int, float, bool)) and
             (not isinstance(v, str) or len(v) < 300)}
    return small or None


# ---- payload handlers: run once the record is complete ------------------------------------

def on_recompile_reasons(index: "Index", node, source, rec: int, kind: str, meta: dict, text: str) -> None:
    if node is not None:
        node.recompile_reasons = parse_recompile_reasons(text)


def on_graph_break_reason(index: "Index", node, source, rec: int, kind: str, meta: dict, text: str) -> None:
    if node is not None:
        node.graph_breaks.append(parse_graph_break(text, source, rec))


def on_dynamo_error(index: "Index", node, source, rec: int, kind: str, meta: dict, text: str) -> None:
    if node is not None:
        node.errors.append(text)


def on_torch_version(index: "Index", node, source, rec: int, kind: str, meta: dict, text: str) -> None:
    try:
        version = orjson.loads(text)
    except orjson.JSONDecodeError:
        return
    if isinstance(version, dict) and isinstance(version.get("pytorch_version"), str):
        index.pytorch_version = version["pytorch_version"]


HANDLERS: dict[str, Handler] = {
    "dynamo_start": on_dynamo_start,
    "artifact": on_artifact,
    "link": on_graph,
    **{kind: on_metrics for kind in METRICS_KINDS},
    **{kind: on_graph for kind in GRAPH_KINDS | GUARD_KINDS},
}

# Kinds whose metadata is not parsed while indexing: only their place and compile id are kept
# (their fields, e.g. a graph's node sizes or a guard's stack, are read when a pane shows them).
LAZY_HANDLERS: dict[str, Callable] = {
    **{kind: on_dynamic for kind in DYNAMIC_KINDS},
    **{kind: on_lazy_graph for kind in ("dynamo_output_graph", "aot_forward_graph",
                                        "aot_backward_graph", "aot_inference_graph",
                                        "aot_joint_graph", "inductor_pre_grad_graph",
                                        "inductor_post_grad_graph", "compiled_autograd_graph",
                                        "dynamo_cpp_guards_str", "dynamo_guards")},
}
LAZY_KINDS = frozenset(SILENT_KINDS - {"str"}) | frozenset(LAZY_HANDLERS)

# Keyed by record kind, or `artifact:<name>` for artifacts.
PAYLOAD_HANDLERS: dict[str, PayloadHandler] = {
    "artifact:recompile_reasons": on_recompile_reasons,
    "artifact:dynamo_graph_break_reason": on_graph_break_reason,
    "artifact:dynamo_error": on_dynamo_error,
    "artifact:torch_version": on_torch_version,
}


def payload_handler_key(kind: str, meta: dict) -> str:
    if kind == "artifact":
        name = _event(meta, "artifact").get("name")
        return f"artifact:{name}"
    return kind


# ---- parsing the text of reasons (shared by trace artifacts and TORCH_LOGS text) ------------

def parse_recompile_reasons(text: str) -> list[RecompileReason]:
    """The `recompile_reasons` payload: a JSON list for several reasons, bare text for one."""
    reasons: list[str]
    stripped = text.strip()
    try:
        value = orjson.loads(stripped) if stripped[:1] in ("[", '"') else None
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, list):
        reasons = [r if isinstance(r, str) else str(r) for r in value]
    elif isinstance(value, str):
        reasons = [value]
    else:
        reasons = [text] if stripped else []
    return [reason_with_id(r) for r in reasons]


def reason_with_id(text: str) -> RecompileReason:
    m = REASON_CID_RE.match(text)
    return RecompileReason(text, CompileId.parse(m.group("cid")) if m else None)


_GB_LOCATION = re.compile(r"Graph break(?: \(.*?\))? in user code at (?P<loc>\S+)")


def parse_graph_break(text: str, source=None, rec: int = -1) -> GraphBreak:
    """A `dynamo_graph_break_reason` message: location, reason, explanation, hints, user stack."""
    lines = text.split("\n")
    location = None
    reason = ""
    detail = None
    explanation = None
    hints: list[str] = []
    url = None
    user_stack: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if location is None and (m := _GB_LOCATION.search(line)):
            location = m.group("loc")
        elif stripped.startswith("Graph Break Reason:") and not reason:
            reason = stripped[len("Graph Break Reason:"):].strip()
            if reason.endswith(":"):
                j = i + 1
                while j < len(lines) and not lines[j].strip():
                    j += 1
                if j < len(lines):
                    detail = lines[j].strip()
        elif stripped.startswith("Explanation:") and explanation is None:
            explanation = stripped[len("Explanation:"):].strip()
        elif stripped.startswith("Hint:"):
            hints.append(stripped[len("Hint:"):].strip())
        elif "graph break, please visit:" in stripped and url is None:
            url = stripped.rsplit(" ", 1)[-1]
        elif stripped == "User code traceback:":
            j = i + 1
            while j < len(lines) and lines[j].strip():
                user_stack.append(lines[j].rstrip())
                j += 1
            i = j
            continue
        elif stripped.startswith("Traceback (most recent call last)"):
            break
        i += 1
    if not reason:
        reason = next((ln.strip() for ln in lines[1:] if ln.strip()), lines[0].strip())
    return GraphBreak(location, reason, detail, explanation, hints, user_stack, url, source, rec)


# ---- TORCH_LOGS text records, by channel ----------------------------------------------------

_RECOMPILE_ENTRY = re.compile(r"^\s*- (?P<cid>!?\d+(?:/\d+){1,2}(?:_\d+)?): ")
_LIMIT_HIT = re.compile(r"hit config\.(?:recompile|cache_size)_limit|recompile_limit exceeded")


def text_recompiles(index: "Index", node, record, lines: list[str]) -> None:
    """`Recompiling function f ... triggered by the following guard failure(s): - 0/0: reason`."""
    if node is None or node.text_recompile_reasons:
        return  # `recompiles` and `recompiles_verbose` both say it: keep the first
    reasons: list[str] = []
    for line in lines:
        if _RECOMPILE_ENTRY.match(line):
            reasons.append(line.strip()[2:])
        elif reasons and line.strip().startswith("-"):
            reasons[-1] += "\n" + line.strip()[2:]
    node.text_recompile_reasons = [reason_with_id(r) for r in reasons]


def text_graph_breaks(index: "Index", node, record, lines: list[str]) -> None:
    if node is not None and any("Graph break" in ln for ln in lines[:2]):
        node.text_graph_breaks.append(parse_graph_break("\n".join(lines), record.source, record.rec))


def text_perf_hints(index: "Index", node, record, lines: list[str]) -> None:
    if node is not None:
        node.perf_hints.append("\n".join(lines))


def text_dynamic(index: "Index", node, record, lines: list[str]) -> None:
    if node is None or not lines:
        return
    first = lines[0]
    for prefix, kind in (("create_symbol", "create_symbol"),
                         ("create_unbacked_symbol", "create_unbacked_symbol"),
                         ("set_replacement", "symbolic_shape_specialization")):
        if first.startswith(prefix + " "):
            node.dynamic.append(DynamicEvent(kind, first[len(prefix) + 1:]))
            return
    if first.startswith("eval ") and "[guard added]" in first:
        node.dynamic.append(DynamicEvent("guard_added", first[5:].split(" [guard added]")[0]))


def text_dynamo(index: "Index", node, record, lines: list[str]) -> None:
    """Plain dynamo lines: where a compile starts, restarts, and the recompile limit."""
    if node is None or not lines:
        return
    first = lines[0]
    if first.startswith("torchdynamo start compiling "):
        node.text_start = first[len("torchdynamo start compiling "):].split(", stack")[0]
    elif first.startswith("Restarting analysis due to"):
        node.text_restarts.append(first)
    elif first.startswith("Step 2: calling compiler function"):
        node.text_compiled = True
    elif first.startswith("COMPILING GRAPH due to"):
        node.text_graph_compiled = True
    elif _LIMIT_HIT.search(first):
        node.errors.append("\n".join(lines))


TEXT_HANDLERS = {
    "recompiles": text_recompiles,
    "recompiles_verbose": text_recompiles,
    "graph_breaks": text_graph_breaks,
    "perf_hints": text_perf_hints,
    "dynamic": text_dynamic,
    "dynamo": text_dynamo,
}
