"""What the index knows of one compile id, and of one compile (its attempts together), and the
domain's rules about them, written once: the status, what counts as a graph break, a failure and
a recompile, where a compile is in the user's code.

A folder with a trace and the TORCH_LOGS text of the same run fills the same nodes from both:
what the trace says wins, the text fills in what only it has (perf hints, the log lines).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tlview.domain.artifacts import Artifact, DynamicEvent, TextRecord, resolve_stack
from tlview.domain.compile_id import CompileId
from tlview.domain.group import Group
from tlview.domain.reasons import (
    Failure,
    GraphBreak,
    RecompileReason,
    failure_of_traceback,
    is_library_path,
    parse_recompile_reasons,
)
from tlview.domain.role import Role
from tlview.domain.status import Status
from tlview.domain.verdict import Verdict, judge, may_be_export

if TYPE_CHECKING:
    from tlview.domain.input_problems import InputProblem
    from tlview.domain.perf import PerfEvidence
    from tlview.domain.settings import CompileSettings


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
    failure_in_backend: bool = False  # the failure is an ERROR record logged while its backend ran
    errors_caught: int = 0  # its first ERROR records, logged before its backend returned: caught
    debug: bool = False  # `+dynamo` lines are logged ("torchdynamo start compiling")
    backend: str | None = None  # "Step 2: calling compiler function inductor"
    backend_done: bool = False  # "Step 2: done compiler function inductor"
    ended: bool = False  # "run_gc_after_compile": Dynamo's compile is over (logged in its `finally`)
    no_ops: bool = False  # "skipping: f (reason: ... No ops traced for the FX graph ...)"
    inferred_id: bool = False  # the text names no compile id for it: the next frame id was taken
    guard_checks: int = 0  # the leaves of its logged guard tree (TORCH_LOGS=guards)
    ddp_buckets: tuple[int, int] | None = None  # DDPOptimizer's bucket cap (bytes) and bucket count

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
    compile: Compile | None = None
    source: Any = None  # the file it came from (a trace's, else a text log's)
    frame: dict[str, Any] | None = None  # the compiled frame (dynamo_start's last), its file a string id
    start: tuple[Any, int] | None = None  # (source, record) of dynamo_start: the whole stack
    last_start: tuple[Any, int] | None = None  # of its latest dynamo_start (the first is kept)
    artifacts: list[Artifact] = field(default_factory=list)
    metrics: dict[str, Any] | None = None
    bwd_metrics: dict[str, Any] | None = None
    graph_breaks: list[GraphBreak] = field(default_factory=list)  # from the trace
    recompile_reasons: list[RecompileReason] = field(default_factory=list)  # from the trace
    dynamic: list[DynamicEvent] = field(default_factory=list)
    perf_hints: list[str] = field(default_factory=list)  # the perf_hints lines as logged
    perf: PerfEvidence | None = None  # what torch told of its speed, typed (domain/perf.py)
    errors: list[str] = field(default_factory=list)  # dynamo_error artifacts, failure text
    problems: list[InputProblem] = field(default_factory=list)
    text_records: list[TextRecord] = field(default_factory=list)
    text: TextEvidence = field(default_factory=TextEvidence)
    in_trace: bool = False  # seen in a trace file (else only in a text log)
    export_failures: list[tuple[Failure, tuple[Any, int]]] = field(default_factory=list)  # an Export entry's
    # (source, record) of its latest tensor description: an export's compile id has little else,
    # and which export's outcome (the metrics of no compile id after it) is its own is told by it
    described_at: tuple[Any, int] | None = None

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

    def outside_items(self) -> list[Artifact | DynamicEvent]:
        """What a node of records of no compile id has to show (the torch version aside)."""
        items: list[Artifact | DynamicEvent] = [a for a in self.artifacts
                                                if a.kind.role not in (Role.VERSION, Role.STRING)]
        return items + self.dynamic

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
        # (the trace's JSON says a str; as written, whatever it holds)
        if self.frame is not None:
            name: str | None = self.frame.get("name")
            return name
        if self.metrics and self.metrics.get("co_name"):
            co_name: str | None = self.metrics.get("co_name")
            return co_name
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
            if not fail_type:
                return None
            file, line = self.metrics.get("fail_user_frame_filename"), self.metrics.get("fail_user_frame_lineno")
            place = f"{file}:{line}" if file and line and not is_library_path(str(file)) else None
            return Failure(str(fail_type), str(self.metrics.get("fail_reason") or ""), place)
        if self.in_trace:
            # The trace tells failures in the metrics of the final attempt; a trace cut short
            # after a dynamo_error (the job died) has only that.
            final = self.compile.final_metrics if self.compile is not None else None
            return failure_of_traceback(self.errors[0]) if self.errors and final is None else None
        if self.text.failure is not None:
            return self.text.failure
        uncaught = self.errors[self.text.errors_caught:]
        return failure_of_traceback(uncaught[0]) if uncaught else None

    def artifact_names(self) -> list[str]:
        return list(dict.fromkeys(art.name for art in self.artifacts))

    def artifacts_in(self, *roles: Role) -> list[Artifact]:
        return [art for art in self.artifacts if art.kind.role in roles]


PHASES = ("dynamo", "aot", "inductor", "codegen", "backward")


@dataclass(eq=False)
class Frame:
    """One code object Dynamo compiled (a frame id) and its compiles. The function and place are
    the frame's: what the text says of one compile names them all."""

    group: Group
    key: tuple[int | None, int | None]  # (compiled autograd id, frame id)
    compiles: list[Compile] = field(default_factory=list)
    # its compiles by key, and its newest attempt (the index keeps both as compiles come: a scan
    # of `compiles` per compile was quadratic, minutes at 100,000 recompiles of one frame)
    by_key: dict[CompileId, Compile] = field(default_factory=dict, repr=False)
    newest: CompileNode | None = field(default=None, repr=False)
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
        """Its newest attempt (the highest seq: the index makes nodes in seq order)."""
        return self.newest


@dataclass(eq=False)
class Compile:
    """The attempts of one compile (`0/0` and its restart `0/0_1`): status comes from here."""

    group: Group
    key: CompileId  # attempt 0
    attempts: list[CompileNode] = field(default_factory=list)
    frame: Frame | None = None
    exports: dict[Group, CompileNode] | None = field(default=None, repr=False)  # the index's Export entries, by group
    guards_failed_later: bool = False  # a later compile's reason names a guard of this one (index.py)

    @property
    def head(self) -> CompileNode:
        return self.attempts[0]

    @property
    def rank(self) -> int | None:
        return self.group.rank

    @property
    def final_metrics(self) -> dict[str, Any] | None:
        """Metrics are logged once per compile, at its final attempt."""
        for node in reversed(self.attempts):
            if node.metrics is not None:
                return node.metrics
        return None

    revision: int = 0  # bumped by the index whenever a record changes this compile

    @property
    def verdict(self) -> Verdict:
        """Its status and problems (verdict.py), decided once per change of the compile."""
        cached = self._verdict
        revision = self._revisions()  # read first: a change while judging leaves the cache stale
        if cached is not None and cached[0] == revision:
            return cached[1]
        verdict = judge(self)
        self._verdict = (revision, verdict)
        return verdict

    _verdict: tuple[tuple[int, int], Verdict] | None = field(default=None, repr=False)

    def _revisions(self) -> tuple[int, int]:
        """This compile's revision, and its Export entry's where the verdict may be the export's
        (a compile id of torch.export's). Not for every compile: each record outside compile ids
        changes the Export entry, and the verdicts of all 10,000 compiles were judged again."""
        exports = self.exports  # (export_entry, inline: asked at every look at the verdict)
        entry = exports.get(self.group) if exports is not None else None
        if entry is None or self.head.is_outside:
            return (self.revision, -1)
        own = self._may_be_export  # asked on every look at the verdict: decided once per revision
        if own is None or own[0] != self.revision:
            own = self._may_be_export = (self.revision, may_be_export(self))
        # (an Export entry has its Compile from its making: the None test is for mypy)
        return (self.revision, entry.compile.revision if own[1] and entry.compile is not None else -1)

    _may_be_export: tuple[int, bool] | None = field(default=None, repr=False)
    settings_read: tuple[int, CompileSettings] | None = field(default=None, repr=False)  # (revision, settings)

    def export_entry(self) -> CompileNode | None:
        return self.exports.get(self.group) if self.exports is not None else None

    @property
    def status(self) -> Status:
        return self.verdict.status

    def attempt_with_graphs(self) -> CompileNode:
        """The attempt whose graphs and code the compile is shown with: after a restart
        (`0/1` then `0/1_1`) the graphs are in the last attempt that traced, not in `0/1`."""
        return self._last_attempt(lambda node: any(a.kind.role.in_graphs_pane for a in node.artifacts))

    def attempt_with_guards(self) -> CompileNode:
        """The attempt whose guards the compile is shown with: after a restart, the last one
        that built guards (the attempts thrown away built none)."""
        return self._last_attempt(lambda node: node.artifacts_in(Role.GUARDS) or any(d.is_guard for d in node.dynamic))

    def _last_attempt(self, has: Callable[[CompileNode], object]) -> CompileNode:
        return next((node for node in reversed(self.attempts) if has(node)), self.head)

    @property
    def failure(self) -> Failure | None:
        return next((n.failure for n in reversed(self.attempts) if n.failure), None)

    def function(self) -> str | None:
        """The compiled frame's function, as any attempt names it."""
        return next((f for n in self.attempts if (f := n.function())), None)

    def location(self) -> str | None:
        return next((loc for n in self.attempts if (loc := n.location())), None)

    @property
    def guard_checks(self) -> int:
        """The leaves of the guard trees TORCH_LOGS=guards logged for its attempts (text alone:
        torch's guard_count counts the guards it built, which the text does not print)."""
        return sum(node.text.guard_checks for node in self.attempts)

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


def _seconds(metrics: dict[str, Any], key: str) -> float:
    value = metrics.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
