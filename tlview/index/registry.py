"""The table of record kinds: every trace record kind, artifact name and TORCH_LOGS artifact that
tlview knows, with its role, label, what indexing reads of it, its handler and its place in the
Graphs pane. Adding a kind is adding a row here (and a handler in handlers.py if none fits).

Kinds not in the table are kept as artifacts too (and counted as unknown), so nothing is dropped.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tlview.domain.role import Role
from tlview.index import handlers as H
from tlview.index.kinds import Reads, RecordKind, Registry

PLACE, METADATA, PAYLOAD = Reads.PLACE, Reads.METADATA, Reads.PAYLOAD
# A leaf of the guard tree TORCH_LOGS=guards prints (`| | +- TENSOR_MATCH: ...`): guards are named
# in capitals, the managers they hang from in CamelCase (`+- GuardManager: source=L['x']`).
GUARD_LEAF = re.compile(r"^[| ]*\+- [A-Z][A-Z0-9_]*:")
CACHE_OUTCOMES = {"_cache_hit": "hit", "_cache_miss": "miss", "_cache_bypass": "bypass"}


@lru_cache(maxsize=1024)  # (artifact names are few; 1,024 real ranks asked 14,350 times)
def cache_outcome(name: str) -> str | None:
    """hit, miss or bypass for a cache artifact (`fx_graph_cache_miss`), else None."""
    for suffix, outcome in CACHE_OUTCOMES.items():
        if name.endswith(suffix):
            return outcome
    return None


def _graph(name, label, order, reads=PLACE, text=(), role=Role.GRAPH, language="python"):
    return RecordKind(name, role, label, H.on_artifact, reads, order, text, language)


def _artifact(name, role, label, handler=H.on_artifact, reads=METADATA, order=1000, text=(),
              language="python"):
    return RecordKind(f"artifact:{name}", role, label, handler, reads, order, text, language, "artifact")


def _dynamic(name, label):
    return RecordKind(name, Role.DYNAMIC, label, H.on_dynamic, PLACE, language=None)


def _metrics(name, label):
    return RecordKind(name, Role.METRICS, label, H.on_metrics, METADATA, language=None)


def _silent(name, label):
    return RecordKind(name, Role.SILENT, label, H.on_nothing, PLACE, language=None)


def _text(name, role, label, handler, reads=METADATA, order=1000, language=None):
    return RecordKind(f"text:{name}", role, label, handler, reads, order, (name,), language)


KINDS = Registry(
    kinds=[
        RecordKind("str", Role.STRING, "string table", H.on_nothing, METADATA, language=None),
        _silent("chromium_event", "chromium event"),
        _silent("describe_tensor", "tensor description"),
        _silent("describe_storage", "storage description"),
        # heard (one per input, the last of its three descriptions): where an export's compile id
        # was, to tell which export's outcome is its own (verdict._export_of)
        RecordKind("describe_source", Role.SILENT, "source description", H.on_description, PLACE, language=None),
        RecordKind("dynamo_start", Role.START, "Dynamo start", H.on_dynamo_start, METADATA),
        # The order a user walks a compile: Dynamo -> AOT -> Inductor -> code.
        _graph("dynamo_output_graph", "Dynamo output graph", 0, text=("graph_code",)),
        _graph("optimize_ddp_split_graph", "DDP split graph", 1, METADATA, ("ddp_graphs",)),
        _graph("optimize_ddp_split_child", "DDP split child", 2, METADATA),
        _graph("compiled_autograd_graph", "compiled autograd graph", 3),
        _artifact("before_pre_grad_graph", Role.GRAPH, "graph before pre-grad passes", order=4),
        _artifact("after_pre_grad_graph", Role.GRAPH, "graph after pre-grad passes", order=5),
        _graph("inductor_pre_grad_graph", "Inductor pre-grad graph", 6, text=("pre_grad_graphs",)),
        _graph("aot_joint_graph", "AOT joint graph", 7, text=("aot_joint_graph",)),
        _artifact("before_joint_graph", Role.GRAPH, "joint graph before passes", order=8),
        _artifact("after_joint_graph", Role.GRAPH, "joint graph after passes", order=9),
        _text("aot_graphs", Role.GRAPH, "AOT graphs", H.on_text_artifact, PLACE, 10, "python"),
        _graph("aot_forward_graph", "AOT forward graph", 10),
        _graph("aot_backward_graph", "AOT backward graph", 11),
        _graph("aot_inference_graph", "AOT inference graph", 12),
        _artifact("before_post_grad_graph", Role.GRAPH, "graph before post-grad passes", order=13),
        # Its payload read at once, while the bytes are in hand: the ops CUDA graphs keep out
        # (handlers.on_post_grad_graph). Read lazily it would need a CUDA compile told first, and
        # the only record that tells CUDA graphs on is the FX cache key, 4x the graph's bytes in
        # the model trace. Measured on bench/index.py's 270 MB model trace (CPU graphs: none
        # parsed past `"cuda" not in`): one process 0.61-0.63 s -> 0.66-0.69 s (+8%); the
        # bench's ratio lines, tlview/grep 6.99x (one process 11.87x) -> 10.48x (12.04x), two
        # processes noisy on a 2-core box beside other work.
        RecordKind("inductor_post_grad_graph", Role.GRAPH, "Inductor post-grad graph", H.on_post_grad_graph,
                   PAYLOAD, 14, ("post_grad_graphs",)),
        # torch 2.13 writes some graphs as artifacts by name, older torch as record kinds
        _artifact("inductor_post_grad_graph", Role.GRAPH, "Inductor post-grad graph", H.on_post_grad_graph,
                  PAYLOAD, order=14),
        _artifact("compiled_autograd_graph_pre_reordering", Role.GRAPH,
                  "compiled autograd graph before reordering", order=3),
        _graph("inductor_output_code", "output code", 15, METADATA, ("output_code",), Role.CODE),
        _artifact("fx_graph_runnable", Role.CODE, "FX graph runnable", order=16),
        _artifact("aot_autograd_runtime_wrappers", Role.CODE, "AOT runtime wrappers", order=16),
        _graph("graph_dump", "graph dump", 17, METADATA, role=Role.CODE),
        _graph("dump_file", "dumped file", 18, METADATA, role=Role.CODE),
        _graph("exported_program", "exported program", 19, METADATA, role=Role.EXPORT),
        _graph("export", "export started", 20, METADATA, role=Role.EXPORT, language=None),
        _graph("link", "link", 1000, METADATA, role=Role.ARTIFACT, language=None),
        RecordKind("dynamo_cpp_guards_str", Role.GUARDS, "guards", H.on_artifact, PLACE,
                   text_names=("guards",), counted_lines=GUARD_LEAF),
        RecordKind("dynamo_guards", Role.GUARDS, "guards (JSON)", H.on_artifact, PLACE),
        _metrics("compilation_metrics", "compilation metrics"),
        _metrics("bwd_compilation_metrics", "backward compilation metrics"),
        _metrics("aot_autograd_backward_compilation_metrics", "AOT backward compilation metrics"),
        _metrics("compilation_metrics_runtime", "runtime metrics"),
        _metrics("bwd_compilation_metrics_runtime", "backward runtime metrics"),
        _dynamic("create_symbol", "symbol created"),
        # (its user stack read at once: a value read on the host in the user's code, domain/perf.py)
        RecordKind("create_unbacked_symbol", Role.DYNAMIC, "unbacked symbol created", H.on_unbacked_symbol,
                   METADATA, language=None),
        _dynamic("symbolic_shape_specialization", "specialization"),
        _dynamic("guard_added_fast", "guard added"),
        _dynamic("guard_added", "guard added"),
        _dynamic("propagate_real_tensors_provenance", "data-dependent error"),
        _dynamic("expression_created", "expression created"),
        _dynamic("guard_on_data_dependent_error", "guard on a data-dependent error"),
        RecordKind("artifact", Role.ARTIFACT, "artifact", H.on_artifact, METADATA),
        _artifact("recompile_reasons", Role.RECOMPILE, "recompile reasons", H.on_recompile_reasons,
                  PAYLOAD, text=("recompiles", "recompiles_verbose"), language=None),
        _artifact("dynamo_graph_break_reason", Role.BREAK, "graph break", H.on_graph_break, PAYLOAD,
                  text=("graph_breaks",), language=None),
        _artifact("dynamo_error", Role.FAILURE, "Dynamo error", H.on_dynamo_error, PAYLOAD,
                  language=None),
        # torch.export's make_fx failed: the partial graph it traced (the exception is not logged)
        _artifact("make_fx_fail_partial", Role.FAILURE, "export's partial graph (its trace failed)",
                  H.on_export_failure, PAYLOAD, language="python"),
        _artifact("torch_version", Role.VERSION, "torch version", H.on_torch_version, PAYLOAD,
                  language=None),
        _artifact("inductor_collective_schedule", Role.ARTIFACT, "collective schedule", language=None),
        _text("perf_hints", Role.PERF, "perf hint", H.on_perf_hint),
        _text("cudagraphs", Role.PERF, "CUDA graphs", H.on_cudagraphs_text),
        _text("dynamic", Role.DYNAMIC, "dynamic shapes", H.on_dynamic_text),
        _text("dynamo", Role.LOG, "Dynamo log", H.on_dynamo_text),
        _text("other", Role.LOG, "other output", H.on_plain_text),
        *[_text(name, Role.LOG, "tracing log", H.on_nothing, PLACE)
          for name in ("trace_bytecode", "trace_source", "trace_call", "bytecode", "side_effects",
                       "graph_sizes", "kernel_code")],
    ],
    unknown=RecordKind("unknown", Role.ARTIFACT, "record of an unknown kind", H.on_unknown),
    unknown_artifact=RecordKind("artifact:*", Role.ARTIFACT, "artifact", H.on_artifact,
                                event_key="artifact"),
    cache=RecordKind("artifact:*_cache_*", Role.CACHE, "cache", H.on_cache, language=None,
                     event_key="artifact"),
    text_log=RecordKind("text:*", Role.LOG, "log lines", H.on_nothing, language=None),
    cache_outcome=cache_outcome,
)


def kind_named(name: str) -> RecordKind:
    """The registry's kind of this name (how a pickled kind comes back: RecordKind.__reduce__)."""
    return KINDS.named(name)


KINDS.unpickles_kinds(kind_named)
LAZY_KINDS = KINDS.by_reads(PLACE)
SILENT_KINDS = frozenset(k.name for k in KINDS.kinds if k.role is Role.SILENT and k.handler is H.on_nothing)
LAZY_TEXT_CHANNELS = KINDS.lazy_text_channels()
COUNTED_TEXT_LINES = KINDS.counted_text_lines()
