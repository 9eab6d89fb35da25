"""What the index knows of one compile id, and of one compile (its attempts together), and the
domain's rules about them, written once: the status, what counts as a graph break, a failure and
a recompile, where a compile is in the user's code.

A folder with a trace and the TORCH_LOGS text of the same run fills the same nodes from both:
what the trace says wins, the text fills in what only it has (perf hints, the log lines).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tlview.model.artifacts import Artifact, DynamicEvent, TextRecord, resolve_stack
from tlview.model.compile_id import CompileId
from tlview.model.reasons import Failure, GraphBreak, RecompileReason, parse_recompile_reasons
from tlview.model.status import Status


@dataclass(slots=True, eq=False)
class TextEvidence:
    """What TORCH_LOGS text says of a compile id; used where no trace says it."""

    start: str | None = None  # "fn /path/file.py:12" from "torchdynamo start compiling"
    restarts: list[str] = field(default_factory=list)
    compiled: bool = False  # a backend compiler was called
    graph_compiled: bool = False  # dynamo finished a graph (maybe empty)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompile_reasons: list[RecompileReason] = field(default_factory=list)
    failure: Failure | None = None


@dataclass(eq=False)
class CompileNode:
    """One compile id (`0/0`, `0/0_1`) of one rank."""

    rank: int | None
    cid: CompileId
    seq: int  # order of first appearance in the index
    compile: "Compile | None" = None
    frame: dict | None = None  # the compiled frame (dynamo_start's last), its file a string id
    start: tuple[Any, int] | None = None  # (source, record) of dynamo_start: the whole stack
    artifacts: list[Artifact] = field(default_factory=list)
    metrics: dict | None = None
    bwd_metrics: dict | None = None
    graph_breaks: list[GraphBreak] = field(default_factory=list)  # from the trace
    recompile_reasons: list[RecompileReason] = field(default_factory=list)  # from the trace
    dynamic: list[DynamicEvent] = field(default_factory=list)
    perf_hints: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # dynamo_error artifacts, failure text
    problems: list = field(default_factory=list)
    text_records: list[TextRecord] = field(default_factory=list)
    text: TextEvidence = field(default_factory=TextEvidence)
    in_trace: bool = False  # seen in a trace file (else only in a text log)

    @property
    def id(self) -> str:
        return str(self.cid)

    # ---- where ---------------------------------------------------------------------------------

    def full_stack(self) -> list[str]:
        """The user stack that led to this compile (`file:line in function`), read from disk."""
        if self.start is None:
            return []
        source, rec = self.start
        return resolve_stack(source, source.load_event(rec).get("stack"))

    def location(self) -> str | None:
        """The user code being compiled: the last frame of the dynamo_start stack."""
        if self.frame is not None and self.start is not None:
            return f"{self.start[0].frame_filename(self.frame.get('filename'))}:{self.frame.get('line')}"
        if self.metrics and self.metrics.get("co_filename"):
            return f"{self.metrics['co_filename']}:{self.metrics.get('co_firstlineno')}"
        if self.text.start:
            return self.text.start.rsplit(" ", 1)[-1]
        return None

    def function(self) -> str | None:
        if self.frame is not None:
            return self.frame.get("name")
        if self.metrics and self.metrics.get("co_name"):
            return self.metrics.get("co_name")
        if self.text.start:
            return self.text.start.split(" ", 1)[0]
        return None

    # ---- what happened -------------------------------------------------------------------------

    @property
    def breaks(self) -> list[GraphBreak]:
        """The graph breaks of this compile id (the trace's, else the text's)."""
        return self.graph_breaks if self.in_trace else self.text.graph_breaks

    @property
    def reasons(self) -> list[RecompileReason]:
        """Why this compile id recompiled: each guard that failed, naming the compile it failed in."""
        if not self.in_trace:
            return self.text.recompile_reasons
        if self.recompile_reasons:
            return self.recompile_reasons
        reason = (self.metrics or {}).get("recompile_reason")
        return parse_recompile_reasons(reason) if isinstance(reason, str) and reason else []

    @property
    def restart_reasons(self) -> list[str]:
        """Why this attempt restarted analysis (its metrics, else the text)."""
        if self.metrics is not None:
            reasons = self.metrics.get("restart_reasons")
            return list(reasons) if isinstance(reasons, list) else []
        return [] if self.in_trace else self.text.restarts

    @property
    def failure(self) -> Failure | None:
        """The failure of this compile id: its metrics' fail_type, else what the text shows."""
        if self.metrics is not None:
            fail_type = self.metrics.get("fail_type")
            return Failure(str(fail_type), str(self.metrics.get("fail_reason") or "")) if fail_type else None
        if self.text.failure is not None:
            return self.text.failure
        if self.errors and not self.in_trace:
            return Failure("", self.errors[0])
        return None

    @property
    def has_graph_break(self) -> bool:
        """A graph break was logged under this id, or it restarted after one."""
        return bool(self.breaks or self.restart_reasons)

    @property
    def is_recompile(self) -> bool:
        return self.cid.is_recompile

    @property
    def failed(self) -> bool:
        return self.failure is not None

    def artifact_names(self) -> list[str]:
        return list(dict.fromkeys(art.name for art in self.artifacts))

    def artifacts_in(self, *roles) -> list[Artifact]:
        return [art for art in self.artifacts if art.kind.role in roles]


PHASES = ("dynamo", "aot", "inductor", "codegen", "backward")


@dataclass(eq=False)
class Compile:
    """The attempts of one compile (`0/0` and its restart `0/0_1`): status comes from here."""

    rank: int | None
    key: CompileId  # attempt 0
    attempts: list[CompileNode] = field(default_factory=list)

    @property
    def head(self) -> CompileNode:
        return self.attempts[0]

    @property
    def final_metrics(self) -> dict | None:
        """Metrics are logged once per compile, at its final attempt."""
        for node in reversed(self.attempts):
            if node.metrics is not None:
                return node.metrics
        return None

    @property
    def status(self) -> Status:
        """tlparse's colour: error, empty, break (restarted), ok, or missing (no metrics)."""
        metrics = self.final_metrics
        if metrics is None:
            if any(n.failed or n.errors for n in self.attempts):
                return Status.ERROR
            if not any(n.in_trace for n in self.attempts):
                return self._status_from_text()
            return Status.MISSING
        if metrics.get("fail_type"):
            return Status.ERROR
        if not metrics.get("graph_op_count"):  # null counts as 0, as in tlparse
            return Status.EMPTY
        if metrics.get("restart_reasons"):
            return Status.BREAK
        return Status.OK

    def _status_from_text(self) -> Status:
        """Only TORCH_LOGS text: tlparse's rule, from what the log lines say happened."""
        final = self.attempts[-1]
        if final.text.graph_compiled and not final.text.compiled:
            return Status.EMPTY  # dynamo made a graph but called no backend: no ops
        if any(n.text.restarts for n in self.attempts):
            return Status.BREAK
        if any(n.text.compiled for n in self.attempts):
            return Status.OK
        if not any(n.text.graph_compiled or n.text.start for n in self.attempts):
            return Status.MISSING
        return Status.EMPTY

    @property
    def has_graph_break(self) -> bool:
        return any(n.has_graph_break for n in self.attempts)

    @property
    def restart_reasons(self) -> list[str]:
        reasons = (self.final_metrics or {}).get("restart_reasons")
        return list(reasons) if isinstance(reasons, list) else []

    @property
    def failure(self) -> Failure | None:
        return next((n.failure for n in reversed(self.attempts) if n.failure), None)

    def phases(self) -> dict[str, float]:
        """Seconds in Dynamo, AOT autograd, Inductor and codegen (forward), the backward compile,
        and the total."""
        m = self.final_metrics or {}
        total = _seconds(m, "entire_frame_compile_time_s")
        backend = _seconds(m, "backend_compile_time_s")
        inductor = _seconds(m, "inductor_compile_time_s")
        codegen = _seconds(m, "code_gen_time_s")
        out = {"dynamo": max(total - backend, 0.0), "aot": max(backend - inductor, 0.0),
               "inductor": max(inductor - codegen, 0.0), "codegen": codegen, "backward": 0.0}
        for node in self.attempts:
            bwd = node.bwd_metrics or {}
            out["backward"] += _seconds(bwd, "inductor_compile_time_s") or _seconds(bwd, "elapsed_time")
        out["total"] = total + out["backward"]
        return out


def _seconds(metrics: dict, key: str) -> float:
    value = metrics.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
