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
from tlview.model.group import Group
from tlview.model.kinds import Role
from tlview.model.reasons import (
    Failure,
    GraphBreak,
    RecompileReason,
    is_graph_break_restart,
    parse_recompile_reasons,
)
from tlview.model.status import Status


@dataclass(slots=True, eq=False)
class TextEvidence:
    """What TORCH_LOGS text says of a compile id; used where no trace says it."""

    start: str | None = None  # "fn /path/file.py:12" from "torchdynamo start compiling"
    restarts: list[str] = field(default_factory=list)
    graph_compiled: bool = False  # dynamo finished a graph (maybe empty)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompile_reasons: list[RecompileReason] = field(default_factory=list)
    failure: Failure | None = None
    silent_failure: bool = False  # the failure is inferred: the compile ended with no result
    debug: bool = False  # `+dynamo` lines are logged ("torchdynamo start compiling")
    backend: str | None = None  # "Step 2: calling compiler function inductor"
    backend_done: bool = False  # "Step 2: done compiler function inductor"
    no_ops: bool = False  # "skipping: f (reason: ... No ops traced for the FX graph ...)"
    inferred_id: bool = False  # the text names no compile id for it: the next frame id was taken

    @property
    def compiled(self) -> bool:
        """A backend compiler was called."""
        return self.backend is not None


@dataclass(eq=False)
class CompileNode:
    """One compile id (`0/0`, `0/0_1`) of one rank or process."""

    group: Group
    cid: CompileId
    seq: int  # order of first appearance in the index
    compile: "Compile | None" = None
    source: Any = None  # the file it came from (a trace's, else a text log's)
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

    @property
    def rank(self) -> int | None:
        return self.group.rank

    @property
    def is_outside(self) -> bool:
        """This node holds a group's records of no compile id (export's, `-/-`), not a compile."""
        return self.cid.frame is None and self.cid.autograd is None

    def outside_items(self) -> list:
        """What a node of records of no compile id has to show (the torch version aside)."""
        return [a for a in self.artifacts if a.kind.role not in (Role.VERSION, Role.STRING)] + self.dynamic

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
        return self.compile.frame.location if self.compile and self.compile.frame else None

    def function(self) -> str | None:
        if self.frame is not None:
            return self.frame.get("name")
        if self.metrics and self.metrics.get("co_name"):
            return self.metrics.get("co_name")
        if self.text.start:
            return self.text.start.split(" ", 1)[0]
        return self.compile.frame.function if self.compile and self.compile.frame else None

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
    def recompile_cause(self) -> RecompileReason | None:
        """The guard that failed against the latest compile of the frame: the cause. Torch lists
        one failure per cached entry; those of older entries are context."""
        return max(self.reasons, key=lambda r: (r.failed_id.frame_compile or 0) if r.failed_id else -1,
                   default=None)

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
        if self.in_trace:
            return None  # the trace tells failures (in the metrics of the final attempt)
        if self.text.failure is not None:
            return self.text.failure
        return Failure("", self.errors[0]) if self.errors else None

    @property
    def has_graph_break(self) -> bool:
        """A graph break was logged under this id, or it restarted after one."""
        return bool(self.breaks) or any(is_graph_break_restart(r) for r in self.restart_reasons)

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
class Frame:
    """One code object Dynamo compiled (a frame id) and its compiles. The function and place are
    the frame's: what the text says of one compile names them all."""

    group: Group
    key: tuple  # (compiled autograd id, frame id)
    compiles: list["Compile"] = field(default_factory=list)
    function: str | None = None  # from TORCH_LOGS text, for compiles that do not say it themselves
    location: str | None = None
    named_by: int = 0  # how sure that name is: a better source replaces it

    def name(self, function: str, location: str | None, certainty: int) -> bool:
        """Take a name from text; True if it changed."""
        if certainty <= self.named_by:
            return False
        self.function, self.location, self.named_by = function, location, certainty
        return True

    def latest(self) -> CompileNode | None:
        return max((n for c in list(self.compiles) for n in c.attempts), key=lambda n: n.seq, default=None)


@dataclass(eq=False)
class Compile:
    """The attempts of one compile (`0/0` and its restart `0/0_1`): status comes from here."""

    group: Group
    key: CompileId  # attempt 0
    attempts: list[CompileNode] = field(default_factory=list)
    frame: Frame | None = None

    @property
    def head(self) -> CompileNode:
        return self.attempts[0]

    @property
    def rank(self) -> int | None:
        return self.group.rank

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
        reasons = metrics.get("restart_reasons")
        if reasons:
            return Status.BREAK if any(is_graph_break_restart(str(r)) for r in reasons) else Status.RESTART
        return Status.OK

    def _status_from_text(self) -> Status:
        """Only TORCH_LOGS text: tlparse's order (empty, break, ok), from what any set of TORCH_LOGS
        can show: the `+dynamo` lines, or the graphs and guards a typical set logs."""
        final = self.attempts[-1]
        evidence = [n.text for n in self.attempts]
        guarded = any(n.artifacts_in(Role.GUARDS) for n in self.attempts)
        traced = any(n.artifacts_in(Role.GRAPH, Role.CODE) for n in self.attempts)
        if (final.text.no_ops or (final.text.graph_compiled and not final.text.compiled)
                or (guarded and not traced and self._text_logs_graphs())):
            return Status.EMPTY  # no ops: skipped, or a graph but no backend, or guards but no graph
        if not (guarded or traced or any(e.compiled or e.graph_compiled for e in evidence)):
            return Status.MISSING  # no sign that it finished
        if len(self.attempts) > 1 or any(e.restarts for e in evidence):
            restarts = [r for e in evidence for r in e.restarts]
            if restarts and not any(is_graph_break_restart(r) for r in restarts):
                return Status.RESTART  # e.g. a float made a tensor, then specialized
            return Status.BREAK  # analysis restarted after a graph break
        return Status.OK

    def _text_logs_graphs(self) -> bool:
        """Whether the text logs of this compile carry traced graphs at all (`graph_code`)."""
        logs = {r.source for n in self.attempts for r in n.text_records}
        return any("graph_code" in log.channels for log in logs)

    @property
    def has_graph_break(self) -> bool:
        return any(n.has_graph_break for n in self.attempts)

    def attempt_with_graphs(self) -> CompileNode:
        """The attempt whose graphs and code the compile is shown with: after a restart
        (`0/1` then `0/1_1`) the graphs are in the last attempt that traced, not in `0/1`."""
        for node in reversed(self.attempts):
            if any(a.kind.role.in_graphs_pane for a in node.artifacts):
                return node
        return self.head

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
