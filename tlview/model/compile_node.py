"""What the index knows of one compile id, and of one compile (its attempts together)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tlview.model.compile_id import CompileId

if TYPE_CHECKING:
    from tlview.source.trace_file import TraceFile


STATUSES = ("ok", "break", "error", "empty", "missing")


@dataclass(slots=True, eq=False)
class Artifact:
    """A record whose payload a pane can show (a graph, output code, guards, an artifact)."""

    name: str
    kind: str
    source: Any  # the TraceFile or TextLog that holds it
    rec: int  # record number in that source
    info: dict | None = None  # small metadata (e.g. the output code's file name)

    @property
    def label(self) -> str:
        """The name to show: DDP split children, dumps and output code say which one they are."""
        info = self.info or {}
        extra = info.get("name") if self.kind != "artifact" else None
        if extra is None and self.kind == "inductor_output_code":
            extra = (info.get("filename") or "").rsplit("/", 1)[-1][:10] or None
        return f"{self.name} {extra}" if extra else self.name

    def load(self):
        """Read the payload from disk now (a LoadedPayload: text, md5 check, problems)."""
        return self.source.load_payload(self.rec)


@dataclass(slots=True)
class GraphBreak:
    location: str | None
    reason: str
    detail: str | None = None
    explanation: str | None = None
    hints: list[str] = field(default_factory=list)
    user_stack: list[str] = field(default_factory=list)
    url: str | None = None
    source: Any = None  # where the whole message is (read from disk when shown)
    rec: int = -1

    def load(self):
        return self.source.load_payload(self.rec)


@dataclass(slots=True)
class RecompileReason:
    text: str
    failed_id: CompileId | None  # the earlier compile whose guard failed

    @property
    def summary(self) -> str:
        return reason_summary(self.text)


def reason_summary(text: str) -> str:
    """First line of a recompile reason without the guard's source comment (`n == 2  # return ...`)."""
    return text.split("\n", 1)[0].split("  #", 1)[0].rstrip()


@dataclass(slots=True)
class DynamicEvent:
    """A dynamic-shape event: from the trace (fields read from disk when asked) or a text line."""

    kind: str  # create_symbol, symbolic_shape_specialization, guard_added_fast, ...
    text: str | None  # the summary, known up front for text logs
    source: Any = None
    rec: int = -1

    @property
    def summary(self) -> str:
        if self.text is None:
            from tlview.model.handlers import dynamic_summary

            self.text = dynamic_summary(self.kind, self.fields())
        return self.text

    def fields(self) -> dict:
        """The event's metadata (symbol, sources, expr, user_stack, ...)."""
        if self.source is None or not hasattr(self.source, "load_record"):
            return {}
        meta, _line, _payload = self.source.load_record(self.rec)
        value = (meta or {}).get(self.kind)
        return value if isinstance(value, dict) else {}


@dataclass(slots=True)
class TextRecord:
    """A group of TORCH_LOGS lines with one prefix (one logging call)."""

    source: Any
    rec: int
    channel: str  # artifact name (`recompiles`, `graph_breaks`) or the logger's area
    level: str
    first_line: str


@dataclass(eq=False)
class CompileNode:
    """One compile id (`0/0`, `0/0_1`) of one rank."""

    rank: int | None
    cid: CompileId
    seq: int  # order of first appearance in the index
    stack: list | None = None  # the compiled frame (last of dynamo_start's stack), filename interned
    stack_source: "TraceFile | None" = None
    start_rec: int = -1  # the dynamo_start record, for the whole stack
    artifacts: list[Artifact] = field(default_factory=list)
    metrics: dict | None = None
    bwd_metrics: dict | None = None
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    text_graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompile_reasons: list[RecompileReason] = field(default_factory=list)
    text_recompile_reasons: list[RecompileReason] = field(default_factory=list)
    dynamic: list[DynamicEvent] = field(default_factory=list)
    text_records: list[TextRecord] = field(default_factory=list)
    perf_hints: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # dynamo_error artifacts, failure text
    problems: list = field(default_factory=list)
    in_trace: bool = False  # seen in a trace file (else only in a text log)
    text_start: str | None = None  # "fn file:line" from "torchdynamo start compiling"
    text_restarts: list[str] = field(default_factory=list)
    text_compiled: bool = False  # a backend compiler was called
    text_graph_compiled: bool = False  # dynamo finished a graph (maybe empty)
    compile: "Compile | None" = None

    @property
    def id(self) -> str:
        return str(self.cid)

    def full_stack(self) -> list[str]:
        """The user stack that led to this compile (`file:line in function`), read from disk."""
        if self.stack_source is None or self.start_rec < 0:
            return []
        meta, _line, _payload = self.stack_source.load_record(self.start_rec)
        frames = ((meta or {}).get("dynamo_start") or {}).get("stack") or []
        return [f"{self.stack_source.frame_filename(f.get('filename'))}:{f.get('line')} in "
                f"{f.get('name')}" for f in frames if isinstance(f, dict)]

    def merge_from(self, later: "CompileNode") -> None:
        """Fold in what a later part of the same file said of this compile id."""
        if self.stack is None:
            self.stack, self.stack_source = later.stack, later.stack_source
            self.start_rec = later.start_rec
        self.artifacts += later.artifacts
        self.metrics = later.metrics or self.metrics
        self.bwd_metrics = later.bwd_metrics or self.bwd_metrics
        self.graph_breaks += later.graph_breaks
        self.recompile_reasons = later.recompile_reasons or self.recompile_reasons
        self.dynamic += later.dynamic
        self.errors += later.errors
        self.in_trace = self.in_trace or later.in_trace

    def artifact_names(self) -> list[str]:
        names: list[str] = []
        for art in self.artifacts:
            if art.name not in names:
                names.append(art.name)
        return names

    def location(self) -> str | None:
        """The user code being compiled: the last frame of the dynamo_start stack."""
        if self.stack and self.stack_source is not None:
            frame = self.stack[-1]
            return f"{self.stack_source.frame_filename(frame.get('filename'))}:{frame.get('line')}"
        if self.metrics and self.metrics.get("co_filename"):
            return f"{self.metrics['co_filename']}:{self.metrics.get('co_firstlineno')}"
        if self.text_start:
            return self.text_start.rsplit(" ", 1)[-1]
        return None

    def function(self) -> str | None:
        if self.stack:
            return self.stack[-1].get("name")
        if self.metrics:
            return self.metrics.get("co_name")
        if self.text_start:
            return self.text_start.split(" ", 1)[0]
        return None

    def effective_graph_breaks(self) -> list[GraphBreak]:
        return self.graph_breaks if self.in_trace else self.text_graph_breaks

    def effective_recompile_reasons(self) -> list[RecompileReason]:
        if self.in_trace:
            if self.recompile_reasons:
                return self.recompile_reasons
            reason = (self.metrics or {}).get("recompile_reason")
            if isinstance(reason, str) and reason:
                from tlview.model.handlers import parse_recompile_reasons

                return parse_recompile_reasons(reason)
            return []
        return self.text_recompile_reasons


@dataclass(eq=False)
class Compile:
    """The attempts of one compile (`0/0` and its restart `0/0_1`): status comes from here."""

    rank: int | None
    key: CompileId  # attempt 0
    attempts: list[CompileNode] = field(default_factory=list)

    @property
    def final_metrics(self) -> dict | None:
        for node in reversed(self.attempts):
            if node.metrics is not None:
                return node.metrics
        return None

    @property
    def status(self) -> str:
        """tlparse's colour: error, empty, break (restarted), ok, or missing (no metrics)."""
        metrics = self.final_metrics
        if metrics is None:
            if any(n.errors for n in self.attempts):
                return "error"
            if not any(n.in_trace for n in self.attempts):
                return self._status_from_text()
            return "missing"
        if metrics.get("fail_type"):
            return "error"
        if not metrics.get("graph_op_count"):  # null counts as 0, as in tlparse
            return "empty"
        if metrics.get("restart_reasons"):
            return "break"
        return "ok"

    def _status_from_text(self) -> str:
        """Only TORCH_LOGS text: as tlparse's rule, from what the log lines say happened."""
        final = self.attempts[-1]
        if final.text_graph_compiled and not final.text_compiled:
            return "empty"  # dynamo made a graph but called no backend: no ops
        if any(n.text_restarts for n in self.attempts):
            return "break"
        if any(n.text_compiled for n in self.attempts):
            return "ok"
        if not any(n.text_graph_compiled or n.text_start for n in self.attempts):
            return "missing"
        return "empty"

    @property
    def has_graph_break(self) -> bool:
        return any(n.effective_graph_breaks() for n in self.attempts) or bool(
            (self.final_metrics or {}).get("restart_reasons"))

    @property
    def restart_reasons(self) -> list[str]:
        reasons = (self.final_metrics or {}).get("restart_reasons")
        return list(reasons) if isinstance(reasons, list) else []
