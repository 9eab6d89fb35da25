"""One handler per record kind: what a record adds to its compile node. registry.py says which
handler serves which kind; a handler reads a trace record and its TORCH_LOGS text twin alike
(`record.text` is set for text), so every pane works on both.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import orjson

from tlview.domain.artifacts import Artifact, DynamicEvent
from tlview.domain.compile_id import CompileId
from tlview.domain.ddp_split import BUCKETS_LINE
from tlview.domain.group import Group
from tlview.domain.perf import (
    RERECORD,
    HostSync,
    PerfEvidence,
    graph_host_ops,
    is_sizes_warning,
    is_skip,
    perf_hint,
    read_cudagraphs,
    user_frame,
)
from tlview.domain.reasons import (
    RECOMPILE_LIMIT,
    Failure,
    compiled_frame_in,
    failure_in,
    is_graph_break_message,
    is_recompile_limit_message,
    parse_graph_break,
    parse_recompile_reasons,
    wont_convert,
)
from tlview.domain.role import Role
from tlview.index.field_types import METRICS, STACK_FRAME, checked
from tlview.index.kinds import Record
from tlview.source.text_log import TORCH_EXCEPTIONS

if TYPE_CHECKING:
    from tlview.domain.compile_node import CompileNode
    from tlview.index.index import Index
    from tlview.source.text_log import TextLines

# One string object per artifact name: thousands of artifacts share a few dozen names.
_NAMES: dict[str, str] = {}


def _small(info: dict) -> dict | None:
    small = {k: v for k, v in info.items() if isinstance(v, (str, int, float, bool)) and
             (not isinstance(v, str) or len(v) < 300)}
    return small or None


def attach(index: Index, record: Record, info: dict | None = None) -> Artifact:
    """Keep the record as an artifact of its compile id (or of the run, if it has none)."""
    node = record.node
    if node is None:  # (a trace record of no compile id has its group's node; a text handler checks)
        raise ValueError("an artifact of no node")
    name = _NAMES.setdefault(record.name, record.name)
    artifact = Artifact(name, record.kind, record.source, record.rec, info)
    index.attach(node, artifact)
    return artifact


def _text(record: Record) -> TextLines:
    """The lines of a text log's record (a text kind's handler is given no other)."""
    if record.text is None:
        raise ValueError(f"{record.name}: a text handler was given a trace record")
    return record.text


# ---- trace records --------------------------------------------------------------------------------

def on_nothing(index: Index, record: Record) -> None:
    """String-table entries (read by the scanner) and records only counted."""


def on_description(index: Index, record: Record) -> None:
    """A tensor, storage or source description: only where it was (an export's compile id)."""
    if record.node is not None:
        record.node.described_at = (record.source, record.rec)


def on_artifact(index: Index, record: Record) -> None:
    """A graph, code, guards or any other payload: kept by place, shown on demand (with the small
    metadata of a record kind, e.g. the output code's file; an artifact's is only its name)."""
    if record.text is not None:
        on_text_artifact(index, record)
        return
    attach(index, record, _small(record.event) if record.meta and record.kind.event_key is None else None)


def on_post_grad_graph(index: Index, record: Record) -> None:
    """Inductor's post-grad graph: kept by place as any graph, and the ops in it that CUDA graphs
    would keep out (domain/perf.py graph_host_ops), read while its bytes are in hand."""
    on_artifact(index, record)
    if record.text is None and record.node is not None and (ops := graph_host_ops(record.payload or "")):
        _perf(record.node).graph_ops += ops


def on_unknown(index: Index, record: Record) -> None:
    index.count_unknown(record.name)
    on_artifact(index, record)


def on_cache(index: Index, record: Record) -> None:
    attach(index, record)
    index.count_cache_event(record.name)


def on_dynamo_start(index: Index, record: Record) -> None:
    """A compile begins. A compile id that starts again in the same process (torch._dynamo.reset()
    numbers compiles from 0/0 again; two runs appended to one file) keeps its first start and its
    first compilation_metrics, so nothing told earlier is lost; the start again is a problem of
    its record, and what follows it is shown with the first."""
    node = record.node
    if node is None:
        return
    stack = record.event.get("stack")
    if isinstance(stack, list):
        # Only the frame being compiled stays in memory; the whole stack is read when shown.
        frame = next((f for f in reversed(stack) if isinstance(f, dict)), None)
        if frame is not None:
            frame, wrong = checked(frame, STACK_FRAME, "dynamo_start: the compiled frame")
            _report_wrong_types(index, record, wrong)
        here = (record.source, record.rec)
        if node.start is None or node.is_outside:  # (the run's records of no compile id: any start)
            node.frame, node.start = frame, here
        elif message := started_again(node, *here):
            index.add_problem(record.source, record.source.offsets[record.rec], "repeated compile id", message)
        node.last_start = here


def started_again(node, source, rec: int) -> str | None:
    """What a dynamo_start of `node`'s compile id (record `rec` of `source`) tells when it already
    started: None unless the same process (the envelope's pid) wrote the start before it, and
    wrote another one (a file appended to itself repeats every line: nothing is lost)."""
    before = node.last_start[0].envelope_line(node.last_start[1])
    now = source.envelope_line(rec)
    if now == before or now.split(b" ", 3)[2:3] != before.split(b" ", 3)[2:3]:
        return None
    return (f"{node.id} started again in the same process (torch._dynamo.reset() numbers compiles "
            "from 0/0 again, or two runs went into one file): its first dynamo_start and "
            "compilation_metrics are kept; the records after this one are shown with them")


def _report_wrong_types(index: Index, record: Record, wrong: list[str]) -> None:
    for message in wrong:
        index.add_problem(record.source, record.source.offsets[record.rec], "wrong type", message)


def on_metrics(index: Index, record: Record) -> None:
    # Only the fields the index needs stay in memory (status, badges, report, timeline): the whole
    # record (about 100 fields, 40 KB with the configs) is read from disk when a pane shows it.
    summary, wrong = checked(record.event, METRICS, record.name)
    _report_wrong_types(index, record, wrong)
    if summary.get("restart_reasons") == []:
        del summary["restart_reasons"]
    node = record.node
    if node is not None:
        if record.name == "compilation_metrics":
            if node.metrics is None or node.is_outside:  # a compile's first is kept (on_dynamo_start)
                node.metrics = summary
            if node.is_outside and summary.get("fail_type"):  # each strict export's outcome is its own
                index.export_failed(node, Failure(str(summary["fail_type"]), str(summary.get("fail_reason") or "")),
                                    (record.source, record.rec))
        elif record.name in ("bwd_compilation_metrics", "aot_autograd_backward_compilation_metrics"):
            node.bwd_metrics = summary
    attach(index, record)


def on_dynamic(index: Index, record: Record) -> None:
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


def on_recompile_reasons(index: Index, record: Record) -> None:
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
        if m := _RECOMPILING.match(record.text.lines[0] if record.text.lines else ""):
            index.name_frame(node, m.group("fn"), m.group("loc"), SURE)


def on_graph_break(index: Index, record: Record) -> None:
    node = record.node
    if record.text is None:
        attach(index, record)
        if node is not None:
            node.graph_breaks.append(parse_graph_break(record.payload or "", record.source, record.rec))
    elif node is not None and is_graph_break_message(record.text.lines):
        graph_break = parse_graph_break(record.payload or "", record.source, record.rec)
        node.text.graph_breaks.append(graph_break)
        if function := graph_break.user_function():
            index.name_frame(node, *function, FIRST_OP)


def on_dynamo_error(index: Index, record: Record) -> None:
    attach(index, record)
    if record.node is not None:
        record.node.errors.append(record.payload or "")


def on_export_failure(index: Index, record: Record) -> None:
    """torch.export failed while make_fx traced the program: a failure of the group's Export entry
    (the artifact stays with its compile id, where a pane shows the partial graph)."""
    attach(index, record)
    if record.node is not None:
        index.export_failed(record.node, Failure(
            "", "torch.export could not trace the program (make_fx failed; the exception went to the "
                "program): the graph traced until then is the make_fx_fail_partial artifact"),
            (record.source, record.rec))


def on_torch_version(index: Index, record: Record) -> None:
    attach(index, record)
    try:
        version = orjson.loads(record.payload or "")
    except orjson.JSONDecodeError:
        return
    if isinstance(version, dict) and isinstance(version.get("pytorch_version"), str):
        index.pytorch_version = version["pytorch_version"]


# ---- TORCH_LOGS text ------------------------------------------------------------------------------

# How sure a text line is of a frame's function and place: "torchdynamo start compiling f x.py:12"
# and "Recompiling function f in x.py:12" say it; WON'T CONVERT gives the decorator's line; a
# traced graph only the line of its first op.
SURE, DECORATOR, FIRST_OP = 3, 2, 1
_START = re.compile(r"^(?:torchdynamo start compiling|Step 1: torchdynamo start tracing) (?P<fn>\S+) (?P<loc>[^\s,]+)")
_RECOMPILING = re.compile(r"^Recompiling function (?P<fn>\S+) in (?P<loc>\S+)")
_IN_COMPILE = re.compile(r'^\s*File "[^"]*convert_frame\.py", line \d+, in _compile$')
_NO_OPS = re.compile(r"^skipping: (?P<fn>\S+) \(reason: .*No ops traced")
_GRAPH_FILE = re.compile(r"# File: (?P<loc>\S+?:\d+) in (?P<fn>[^,\s]+)")


def on_text_artifact(index: Index, record: Record) -> None:
    """A tagged block of text (`[__graph_code]`, `[__guards]`, `[__output_code]`, ...): an artifact
    under its TORCH_LOGS name, read back from disk when shown (what a trace says wins)."""
    node = record.node
    if node is None or node.in_trace or index.has_traces:
        return  # the trace of the same run has these records (and their md5)
    attach(index, record)
    text = _text(record)
    node.text.guard_checks += text.counted
    if record.kind.name == "dynamo_output_graph":
        for line in text.lines:  # the first lines of a traced graph (kept for this)
            if m := _GRAPH_FILE.search(line):
                index.name_frame(node, m.group("fn"), m.group("loc"), FIRST_OP)
                break


def on_perf_hint(index: Index, record: Record) -> None:
    if record.node is not None:
        record.node.perf_hints.append(record.payload or "")
        _perf(record.node).hints.append(perf_hint(record.payload or ""))


def _perf(node: CompileNode) -> PerfEvidence:
    if node.perf is None:
        node.perf = PerfEvidence()
    return node.perf


def on_cudagraphs_text(index: Index, record: Record) -> None:
    """A `cudagraphs` record: partitions, skips, a graph per size, re-recordings (domain/perf.py).
    Some lines name no compile id: a re-recording names it in its message; a skip is the
    compile's of the function its stack names, else (and a size warning) the latest compile of
    that process."""
    lines = _text(record).lines
    first = lines[0] if lines else ""
    node = record.node
    if node is None and (m := RERECORD.match(first)) and m.group("cid"):
        cid = CompileId.parse(m.group("cid"))
        node = index.nodes.get((_group(record), cid)) if cid is not None else None
    if node is None and is_skip(first) and (frame := user_frame(lines[1:])) is not None:
        node = index.latest_compile_of(_group(record), frame[1])
    if node is None and (is_skip(first) or is_sizes_warning(first)):
        group = _group(record)
        node = max((n for n in list(index.nodes.values()) if n.group == group), key=lambda n: n.seq, default=None)
    if node is None:
        return
    record.node = node
    read_cudagraphs(_perf(node), lines)


def on_unbacked_symbol(index: Index, record: Record) -> None:
    """An unbacked symbol made in the user's code (`.item()`, `nonzero` inside the graph): a
    value read on the host; and a dynamic-shape event, as the others. Its file stays a
    string-table id until judged (a part of a file may not have the table's entry)."""
    on_dynamic(index, record)
    node = record.node
    stack = record.event.get("user_stack")
    if node is None or record.text is not None or not isinstance(stack, list) or not stack:
        return
    frame = stack[-1]
    if not isinstance(frame, dict) or not isinstance(file := frame.get("filename"), (int, str)):
        return
    line, code = frame.get("line"), frame.get("loc")
    _perf(node).host_syncs.append(HostSync(str(record.event.get("symbol") or "?"), file,
                                           line if isinstance(line, int) else None,
                                           code if isinstance(code, str) and code else None))


_DYNAMIC_TEXT = (("create_symbol", "create_symbol"), ("create_unbacked_symbol", "create_unbacked_symbol"),
                 ("set_replacement", "symbolic_shape_specialization"))


def on_dynamic_text(index: Index, record: Record) -> None:
    node = record.node
    lines = _text(record).lines
    if node is None or not lines:
        return
    first = lines[0]
    for prefix, kind in _DYNAMIC_TEXT:
        if first.startswith(prefix + " "):
            node.dynamic.append(DynamicEvent(kind, first[len(prefix) + 1:]))
            return
    if first.startswith("eval ") and "[guard added]" in first:
        node.dynamic.append(DynamicEvent("guard_added", first[5:].split(" [guard added]")[0]))


def on_dynamo_text(index: Index, record: Record) -> None:
    """Plain dynamo lines: where a compile starts, restarts, compiles, gives up, hits the limit."""
    lines = _text(record).lines
    first = lines[0] if lines else ""
    if (gave_up := wont_convert(first)) is not None:
        on_wont_convert(index, record, *gave_up)
        return
    if (m := _NO_OPS.match(first)) and (node := index.latest_compile_of(_group(record), m.group("fn"))):
        record.node = node
        node.text.no_ops = True
        if node.text.silent_failure:  # it did not fail: it had nothing to compile
            node.text.failure, node.text.silent_failure = None, False
        return
    node = record.node
    if node is None or not lines:
        return
    evidence = node.text
    if m := BUCKETS_LINE.match(first or (lines[1] if len(lines) > 1 else "")):  # (its message starts "\n")
        evidence.ddp_buckets = (int(m.group("cap")), int(m.group("count")))
    elif m := _START.match(first):
        evidence.start = f"{m.group('fn')} {m.group('loc')}"
        evidence.debug = evidence.debug or first.startswith("torchdynamo start compiling")
        index.name_frame(node, m.group("fn"), m.group("loc"), SURE)
    elif first.startswith("Received signal to skip frame") and "No ops traced" in first:
        # torch 2.11's word for the `skipping: f (reason: ... No ops traced` above, with its id
        evidence.no_ops = True
        if evidence.silent_failure:  # it did not fail: it had nothing to compile
            evidence.failure, evidence.silent_failure = None, False
    elif first.startswith("Restarting analysis due to"):
        evidence.restarts.append(first)
    elif first.startswith("Step 2: calling compiler function"):
        evidence.backend = first.rsplit(" ", 1)[-1]
    elif first.startswith("Step 2: done compiler function"):
        evidence.backend_done = True
        # The backend returned: the errors it logged meanwhile it caught (autotuning's choices
        # that failed to compile: "No valid triton configs. OutOfMemoryError: out of resource").
        evidence.errors_caught = len(node.errors)
        if evidence.failure_in_backend:
            evidence.failure, evidence.failure_in_backend = None, False
    elif first.startswith("run_gc_after_compile"):
        evidence.ended = True
        on_compile_ended(node)
    elif first.startswith("COMPILING GRAPH due to"):
        evidence.graph_compiled = True
    elif is_recompile_limit_message(first):
        node.errors.append("\n".join(lines))
        evidence.failure = evidence.failure or Failure(RECOMPILE_LIMIT.fail_type,
                                                       f"{RECOMPILE_LIMIT.fail_reason}\n" + "\n".join(lines))


def on_compile_ended(node) -> None:
    """"run_gc_after_compile": the compile is over. One that left no guards, no graph and no
    reason failed with its exception sent to the program (not logged): a backend that was
    called and never returned raised BackendCompilerFailed; otherwise (e.g. fullgraph=True) the
    class is not in the text. Told only of `+dynamo` logs, where an empty frame says so."""
    attempts = node.compile.attempts
    evidence = [n.text for n in attempts]
    if any(e.failure or e.no_ops for e in evidence) or any(n.artifacts_in(Role.GUARDS) for n in attempts):
        return
    backend = next((e.backend for e in evidence if e.backend and not e.backend_done), None)
    if backend is not None:
        failure = Failure("BackendCompilerFailed", f"backend='{backend}' raised:\n(the exception went to "
                          "the program: the log does not show it)")
    elif any(e.debug for e in evidence) and not any(e.backend_done for e in evidence):
        failure = Failure("", "the compile stopped while tracing and logged no reason: its exception "
                          "went to the program (with fullgraph=True, a graph break raises)")
    else:
        return
    node.text.failure, node.text.silent_failure = failure, True


def _group(record: Record) -> Group:
    text = _text(record)
    return Group.of(text.rank, text.pid)


def on_wont_convert(index: Index, record: Record, function: str, location: str) -> None:
    """"WON'T CONVERT f x.py line 12" and the exception: Dynamo gave up on a compile. It belongs
    to the latest compile of that function in that rank (or to a compile the text never tagged,
    when it failed before logging anything)."""
    # A tag on these lines is the compile under way (Dynamo refusing a generator frame that runs
    # inside it): the owner is the compile of the function the line names.
    group, lines = _group(record), _text(record).lines
    node = index.latest_compile_of(group, function)
    if node is None:
        record.node = None
        if not any(_IN_COMPILE.search(line) for line in lines):
            return  # refused before a compile began (e.g. a generator): no compile id, as in a trace
        node = index.infer_compile(group, function, location, record.source)
    record.node = node
    index.name_frame(node, function, location, DECORATOR)
    node.text.failure = failure_in(lines) or Failure("", lines[0])


def on_text_error(index: Index, record: Record) -> None:
    """An ERROR record of a compile id: a failure when it shows an exception."""
    node = record.node
    if node is None:  # (called only for a record of a compile id)
        return
    node.errors.append(record.payload or "")
    if node.text.failure is None:
        node.text.failure = failure_in(_text(record).lines)
        node.text.failure_in_backend = node.text.compiled and not node.text.backend_done


def on_plain_text(index: Index, record: Record) -> None:
    """Lines with no log prefix: user prints, warnings, and the traceback of a job that died. A
    torch compile exception there failed the compile under way (told only of a one-process log);
    with no compile told before it, the compile its "from user code:" frame names (a new frame id)."""
    lines = _text(record).lines
    if not any(line.startswith(TORCH_EXCEPTIONS) for line in lines) or len(record.source.pids) > 1:
        return
    failure = failure_in(lines)
    if failure is None:
        return
    node = index.latest_node()
    if node is None and (frame := compiled_frame_in(lines)) is not None:
        node = index.infer_compile(_group(record), *frame, record.source)
    if node is not None:
        record.node = node
        node.text.failure = failure
