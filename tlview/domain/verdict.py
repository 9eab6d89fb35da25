"""The one verdict on a compile: its status and its typed problems, decided here and read by every
view (the tree's symbols and badges, the status line, totals, filters, jumps, toasts, panes,
--report, --json, --compare, --fail-on).

The words, as the README defines them:
- a **recompile** is a compile of a frame after its first (`0/1`, `0/2`, ...): a guard of every
  earlier compile failed. One per compile, whether or not its reason was logged; its cause is the
  guard that failed against the latest compile of the frame (`against`).
- a **graph break** is a place where Dynamo stopped the graph and ran Python: each one logged,
  and each restart after a graph break that was not logged (TORCH_LOGS without `graph_breaks`).
- a **restart** is an attempt thrown away (`0/0` -> `0/0_1`): after a graph break (the restart
  `follows` that break and is no problem of its own to act on), a float specialized
  (TensorifyScalarRestartAnalysis), or for a reason not logged.
- a **failure** is a compile that raised (fail_type in its metrics, a dynamo_error, the exception
  in the text), and an export that failed (the Export entry's).
- a **perf problem** is what torch told makes the compiled code slower than it could be (a CUDA
  graph split, skipped, recorded per size or again, a fallback kernel, grads copied into a CUDA
  graph, a host sync in the graph, a long compile: domain/perf.py), each with a severity (`costs
  time` or `informational`). It does not change the compile's status (as tlparse, which has no
  such kind): a compile with only perf problems is `ok`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING, Any

from tlview.domain.causes import (
    Cause,
    break_cause,
    breaks_next_attempt,
    failure_cause,
    gave_up_the_frame,
    is_graph_break_restart,
    recompile_cause,
    recompile_not_logged,
    restart_break_cause,
    restart_cause,
    skipped_frame_cause,
)
from tlview.domain.perf import cudagraphs_said, perf_findings
from tlview.domain.places import resumed, split_place, user_function
from tlview.domain.reasons import Failure, failure_of_traceback, is_library_path
from tlview.domain.role import Role
from tlview.domain.status import Status

if TYPE_CHECKING:
    from tlview.domain.compile_node import Compile, CompileNode
    from tlview.domain.reasons import RecompileReason

Record = tuple[Any, int]  # (source, record number): a TraceFile's or TextLog's record


class Kind(Enum):
    """A closed set: what a problem of a compile is. A frame run eagerly comes first: it costs the
    most (none of the frame is compiled), and the report and the Summary lead with it."""

    FRAME_SKIPPED = ("frame_skipped", "skipped_frames", "frame run eagerly", "frames run eagerly")
    RECOMPILE = ("recompile", "recompiles", "recompile", "recompiles")
    GRAPH_BREAK = ("graph_break", "graph_breaks", "graph break", "graph breaks")
    RESTART = ("restart", "restarts", "restart", "restarts")
    FAILURE = ("failure", "errors", "failure", "failures")
    PERF = ("perf", "perf", "perf problem", "perf problems")

    def __init__(self, key: str, word: str, noun: str, plural: str) -> None:
        self.key = key  # in --json (`kind`)
        self.word = word  # the filter and --fail-on word, and the totals' field
        self.noun = noun
        self.plural = plural

    def count(self, n: int) -> str:
        """`1 recompile`, `2 graph breaks`."""
        return f"{n:,} {self.noun if n == 1 else self.plural}"

    @property
    def said_when_none(self) -> bool:
        """Whether a count of none is said (`0 failures`): of a frame run eagerly and of perf
        problems, only those that happened are (most runs have none, and a line of counts has
        little room)."""
        return self not in (Kind.FRAME_SKIPPED, Kind.PERF)


@dataclass(eq=False, slots=True)
class CompileProblem:
    """One recompile, graph break, restart, failure or perf problem of one compile."""

    kind: Kind
    cause: str  # the class (causes.py)
    why: str  # one line, in the user's terms
    node: CompileNode  # the attempt it happened in
    function: str | None  # the user's function (a resume function counts as its parent)
    resumed_at: int | None  # a resume function's own line
    location: str | None  # the user's place (a break inside a library: the user's line that called it)
    against: CompileNode | None = None  # a recompile: the compile whose guard failed (its first attempt)
    evidence: Any = None  # the RecompileReason, GraphBreak, Failure or restart reason it is read from
    records: tuple[Record, ...] = ()  # the records that tell it
    logged: bool = True  # False: implied by what was logged (an id, an attempt), not told
    follows: CompileProblem | None = None  # a restart that follows this graph break
    subject: str | None = None  # what a fix names (a logging call, a custom op)
    facts: Any = None  # what its fix is chosen from: causes.Guarded, LoggingCall or SkippedCall
    message: str = ""  # what torch said, first line
    registry: Any = None  # its entry in PyTorch's graph-break registry (break_registry.RegistryEntry)
    place_told: bool = True  # whether `location` is the problem's own line, not its compile's place
    _found_place: str | None = None  # user_location, once looked up ("" for none found)
    severity: str | None = None  # a perf problem's: perf.COSTS_TIME or perf.INFORMATIONAL

    @property
    def compile_id(self) -> str:
        return self.node.id

    @property
    def user_location(self) -> str | None:
        """`file:line` of the user's line this problem is about, the same in every view: the line
        its own message names (decided in judge), else the one the compile's other records tell
        (user_lines.py: read from disk once, when a view asks), else the compile's place."""
        if self.place_told:
            return self.location
        if self._found_place is None:
            self._found_place = _look_up_place(self) or ""
        return self._found_place or self.location

    @property
    def source_place(self) -> tuple[str, int] | None:
        """(file, line) of user_location."""
        file, line = split_place(self.user_location)
        return (file, line) if file and line else None

    @property
    def counted_as(self) -> str:
        """The total it counts in, and the --fail-on word that finds it: its kind's
        (`graph_breaks`), but `graph_breaks_by_design` for PyTorch's own breaks."""
        return "graph_breaks_by_design" if self.by_design else self.kind.word

    @property
    def by_design(self) -> bool:
        """A graph break PyTorch makes on purpose in its own code: told, and kept apart from the
        user's breaks in the totals and --fail-on graph_breaks."""
        return self.kind is Kind.GRAPH_BREAK and self.cause == "by_design"

    @property
    def primary(self) -> bool:
        """A problem to act on: a restart that follows a graph break is that break's."""
        return self.follows is None


@dataclass(eq=False, slots=True)
class Verdict:
    status: Status
    problems: tuple[CompileProblem, ...]
    export: bool = False  # a compile id of torch.export's: its problems are its Export entry's

    def owned_by(self, compile_: Compile) -> list[CompileProblem]:
        """The problems counted for this compile (an export's failure is counted at its Export entry)."""
        return [p for p in self.problems if p.node.compile is compile_]

    def of(self, kind: Kind) -> list[CompileProblem]:
        return [p for p in self.problems if p.kind is kind]

    def count(self, kind: Kind) -> int:
        return sum(1 for p in self.problems if p.kind is kind)

    def has(self, kind: Kind) -> bool:
        return any(p.kind is kind for p in self.problems)

    @property
    def recompile(self) -> CompileProblem | None:
        return next((p for p in self.problems if p.kind is Kind.RECOMPILE), None)

    @property
    def failure(self) -> CompileProblem | None:
        return next((p for p in self.problems if p.kind is Kind.FAILURE), None)


def judge(compile_: Compile) -> Verdict:
    """The verdict on one compile (all its attempts), or on a group's Export entry."""
    if compile_.head.is_outside:
        return _judge_outside(compile_)
    if is_export(compile_):
        entry = compile_.export_entry()
        assert entry is not None and entry.compile is not None  # is_export found the entry and its Compile
        failures = [p for p in entry.compile.verdict.of(Kind.FAILURE) if _export_of(compile_, p)]
        return Verdict(Status.ERROR if failures else Status.OK, tuple(failures), export=True)
    problems: list[CompileProblem] = []
    text_only = not any(n.in_trace for n in compile_.attempts)
    code_function, location = place_of(compile_)
    found = resumed(code_function)
    function, resumed_at = user_function(code_function), found.line if found else None

    def problem(kind: Kind, cause: Cause, node: CompileNode, **more: Any) -> CompileProblem:
        own = more.pop("location", None)
        told = bool(own) and not is_library_path(split_place(own)[0])
        found = CompileProblem(kind, cause.cause, cause.why, node, function, resumed_at,
                               own if told else location, subject=cause.subject,
                               facts=cause.facts, registry=cause.registry, place_told=told, **more)
        problems.append(found)
        return found

    head = compile_.head
    if compile_.key.is_recompile or head.reasons:
        reason = head.recompile_cause
        if reason is not None:
            problem(Kind.RECOMPILE, recompile_cause(reason), head, against=_against(compile_, reason),
                    evidence=reason, message=reason.guard, records=_records(head, Role.RECOMPILE),
                    location=_guard_place(reason, location))
        else:
            problem(Kind.RECOMPILE, recompile_not_logged(text_only), head, logged=False)

    breaks_by_attempt: list[list[CompileProblem]] = []
    for node in compile_.attempts:
        broke: list[CompileProblem] = []
        for gb in node.breaks:
            broke.append(problem(Kind.GRAPH_BREAK, break_cause(gb), node, location=gb.where,
                                 evidence=gb, message=gb.detail or gb.reason,
                                 records=((gb.source, gb.rec),) if gb.rec >= 0 else ()))
        breaks_by_attempt.append(broke)
    _restarts(compile_, breaks_by_attempt, problem, text_only)

    failure, failed = compile_.failure, None
    if failure is None and compile_.final_metrics is None:
        failure, failed = _gave_up_in_text(compile_)
    if failure is not None:
        failed = failed or next(n for n in reversed(compile_.attempts) if n.failure)
        gave_up = any(gave_up_the_frame(gb) for n in compile_.attempts for gb in n.breaks)
        # a trace logs every graph break: none that skipped the frame means Dynamo did not fall back
        cause = failure_cause(failure.fail_type, failure.fail_reason, place=failure.place,
                              fell_back=True if gave_up else (None if text_only else False))
        if cause.cause == "recompile_limit" and (recompiled := next(
                (p for p in problems if p.kind is Kind.RECOMPILE), None)):
            cause = Cause(cause.cause, f"compile #{(compile_.key.frame_compile or 0) + 1} of this frame "
                          f"was refused (the recompile limit): it recompiled each time for "
                          f"{recompiled.cause}; the frame now runs eagerly")
        if cause.cause == "unsupported" and gave_up:
            # the exception did not reach the program: Dynamo ran the frame eagerly instead
            cause = skipped_frame_cause(cause.registry, failure.fail_reason.split("\n", 1)[0], False)
        kind = Kind.FRAME_SKIPPED if cause.cause == "frame_skipped" else Kind.FAILURE
        problem(kind, cause, failed, evidence=failure, location=failure.place,
                message=failure.fail_type or failure.fail_reason.split("\n", 1)[0],
                records=_records(failed, Role.FAILURE, Role.METRICS))
    for node in compile_.attempts:
        skip = (node.metrics or {}).get("cudagraph_skip_reason")
        file_name = getattr(node.source, "frame_filename", str) if node.in_trace else str
        for finding in perf_findings(node.perf, node.metrics, skip if isinstance(skip, str) else None, file_name,
                                     partial(_cudagraphs_on, node)):
            told = problem(Kind.PERF, Cause(finding.cause, finding.why, finding.subject), node,
                           location=finding.place, message=finding.message, severity=finding.severity,
                           evidence=finding)
            told.facts = finding.facts
    return Verdict(_status(compile_, problems), tuple(problems))


def _cudagraphs_on(node: CompileNode) -> bool | None:
    """Whether CUDA graphs were on for a compile: its FX graph cache's key says (the cache
    artifact's payload, read from disk here: asked only of a graph with ops they keep out)."""
    for artifact in node.artifacts_in(Role.CACHE):
        if artifact.name.startswith("fx_graph_cache_") and hasattr(artifact.source, "load_payload"):
            said = cudagraphs_said(artifact.source.load_payload(artifact.rec).text)
            if said is not None:
                return said
    return None


def is_export(compile_: Compile) -> bool:
    """A compile id of torch.export's, not a Dynamo compile of a frame: its rank's Export entry
    shows an export (metrics of no compile id, a failure of the export's), and it is a first
    compile with no dynamo_start (a Dynamo compile's first record, though a recompile's reason
    comes before it), no metrics and no recompile reason of its own."""
    entry = compile_.export_entry()
    if entry is None or not may_be_export(compile_):
        return False
    return bool(entry.metrics is not None or entry.export_failures or entry.artifacts_in(Role.EXPORT))


def _export_of(compile_: Compile, failure: CompileProblem) -> bool:
    """Whether an export's failure is this compile id's: told under it (make_fx_fail_partial, a
    non-strict export's), or the first outcome after its records (the metrics of no compile id
    that close a strict export; strict exports in one process reuse one compile id, and each
    takes its own export's outcome)."""
    records = {(a.source, a.rec) for n in compile_.attempts for a in n.artifacts}
    records |= {n.described_at for n in compile_.attempts if n.described_at is not None}
    if any(r in records for r in failure.records):
        return True
    entry = compile_.export_entry()
    if entry is None:  # (judge asks only where is_export found it)
        return False
    for source, rec in failure.records:
        mine = [r for s, r in records if s is source]
        if not mine:
            continue
        # (of a compile id several exports used, the latest's outcome)
        outcomes = [a.rec for a in entry.artifacts_in(Role.METRICS) if a.source is source and max(mine) < a.rec]
        if outcomes and min(outcomes) == rec:
            return True
    return False


def may_be_export(compile_: Compile) -> bool:
    """What is_export asks of the compile itself (not of its Export entry): a compile that fails
    this has a verdict of its own, whatever the Export entry holds."""
    key = compile_.key
    if key.autograd is not None or key.frame is None or key.is_recompile:
        return False
    return all(n.in_trace and n.start is None and n.metrics is None and not n.reasons and not n.breaks
               and not n.errors for n in compile_.attempts)


def _restarts(compile_: Compile, breaks_by_attempt: list[list[CompileProblem]],
              problem: Callable[..., CompileProblem], text_only: bool) -> None:
    """One restart per attempt thrown away: its reason from the metrics (trace) or the
    "Restarting analysis" line (text), else not logged. A restart after a graph break follows the
    break logged in the attempt it threw away; with none logged, the break is implied."""
    attempts = compile_.attempts
    reasons = [(n, r) for n in attempts for r in n.restart_reasons]
    paired: set[int] = set()
    for i in range(max(len(reasons), len(attempts) - 1)):
        # the i-th restart is the attempt that replaced the one thrown away (`0/0_1`), whichever
        # record told it: the trace's metrics of the last attempt, or the text's line of `[0/0]`
        node, reason = attempts[min(i + 1, len(attempts) - 1)], reasons[i][1] if i < len(reasons) else None
        thrown_away = breaks_by_attempt[i] if i < len(breaks_by_attempt) else []
        unpaired = [b for b in thrown_away if id(b) not in paired]
        if reason is not None and breaks_next_attempt(reason):
            # (it is that break's, as a restart after a break is: the break's own restart pairs it too)
            made = breaks_by_attempt[i + 1] if i + 1 < len(breaks_by_attempt) else []
            problem(Kind.RESTART, restart_cause(reason, text_only), node, follows=made[0] if made else None,
                    evidence=reason, message=reason, logged=True)
        elif reason is not None and is_graph_break_restart(reason) or reason is None and unpaired:
            broke = unpaired[0] if unpaired else None
            if broke is None:  # the break is known only from its restart: it was in the attempt thrown away
                broke = problem(Kind.GRAPH_BREAK, restart_break_cause(reason or ""),
                                attempts[min(i, len(attempts) - 1)], logged=False,
                                message=reason or "", evidence=reason)
            paired.add(id(broke))
            cause = restart_cause(reason or "graph break", text_only)
            problem(Kind.RESTART, cause, node, follows=broke, evidence=reason, message=reason or "",
                    logged=reason is not None)
        else:
            problem(Kind.RESTART, restart_cause(reason, text_only), node, evidence=reason,
                    message=reason or "", logged=reason is not None)


def _status(compile_: Compile, problems: list[CompileProblem]) -> Status:
    """tlparse's order (error, empty, break, ok; missing without metrics), with two differences:
    a compile that broke the graph without a restart is a break too, and a restart that followed
    no graph break is `restart`. A frame Dynamo gave up (it runs eagerly) is an error, as tlparse
    has it (its metrics have a fail_type), though no exception reached the program."""
    kinds = {p.kind for p in problems}
    if Kind.FAILURE in kinds or Kind.FRAME_SKIPPED in kinds:
        return Status.ERROR
    metrics = compile_.final_metrics
    if metrics is None:
        if any(n.in_trace for n in compile_.attempts):
            return Status.MISSING
        if (text := _text_status(compile_)) is not None:
            return text
    elif not metrics.get("graph_op_count"):  # null counts as 0, as in tlparse
        return Status.EMPTY
    if Kind.GRAPH_BREAK in kinds:
        return Status.BREAK
    if Kind.RESTART in kinds:
        return Status.RESTART
    return Status.OK


def _text_status(compile_: Compile) -> Status | None:
    """Only TORCH_LOGS text: empty or missing from what any set of TORCH_LOGS can show (the
    `+dynamo` lines, or the graphs and guards a typical set logs); None when it finished."""
    final = compile_.attempts[-1]
    evidence = [n.text for n in compile_.attempts]
    if final.text.compiled and not (final.text.backend_done or final.text.ended or final.text.failure):
        # its backend was called and never returned, and Dynamo never reached the end of the
        # compile: the process was killed inside it (a trace of it has no metrics: missing too)
        return Status.MISSING
    guarded = any(n.artifacts_in(Role.GUARDS) for n in compile_.attempts)
    traced = any(n.artifacts_in(Role.GRAPH, Role.CODE) for n in compile_.attempts)
    if (final.text.no_ops or (final.text.graph_compiled and not final.text.compiled)
            or (guarded and not traced and _text_logs_graphs(compile_))):
        return Status.EMPTY  # no ops: skipped, or a graph but no backend, or guards but no graph
    if not (guarded or traced or len(compile_.attempts) > 1 or _guards_checked_later(compile_)
            or any(e.compiled or e.graph_compiled or e.restarts or e.graph_breaks for e in evidence)):
        return Status.UNLOGGED  # no sign that it finished, in a text that may not log it
    return None


def _guards_checked_later(compile_: Compile) -> bool:
    """A later compile of the frame recompiled because this one's guard failed: it had guards,
    so it compiled (TORCH_LOGS=recompiles alone says so of all but a frame's last compile). Kept
    by the index as reasons come (a scan of the frame's compiles per compile: 57 s at 5,000
    recompiles of one frame)."""
    return compile_.guards_failed_later


def _text_logs_graphs(compile_: Compile) -> bool:
    """Whether the text logs of this compile carry traced graphs at all (`graph_code`)."""
    logs = {r.source for n in compile_.attempts for r in n.text_records}
    return any("graph_code" in log.channels for log in logs)


def _against(compile_: Compile, reason: RecompileReason) -> CompileNode | None:
    """The compile whose guard failed: its first attempt, in the same frame."""
    if reason.failed_id is None or compile_.frame is None:  # (every compile of a frame has its Frame)
        return None
    # (by key: a scan of the frame's compiles per recompile was quadratic, 56 s of 86 for --json
    # at 20,000 recompiles of one frame)
    found = compile_.frame.by_key.get(reason.failed_id.compile_key)
    return found.head if found is not None else None


def _look_up_place(problem: CompileProblem) -> str | None:
    """The user's line from the compile's other records (user_lines.py), or None."""
    from tlview.domain import user_lines  # (reads from disk: only once a view asks)

    compile_place = problem.location or ""
    compile_file = split_place(compile_place)[0]
    if problem.kind is Kind.RECOMPILE and problem.logged and problem.against is not None:
        facts = problem.facts
        name = getattr(facts, "name", None)
        if name and (found := user_lines.guard_line(problem.against, name, compile_file)):
            return found
        if getattr(facts, "source", None) == "input_tensor" and name and (
                found := user_lines.graph_input_line(problem.against, name) or user_lines.caller_line(problem.node)):
            return found
    if is_library_path(compile_file):  # a compile of torch's own code: the user's call into it
        return user_lines.deepest_user_line(problem.node)
    return None


def _gave_up_in_text(compile_: Compile) -> tuple[Failure | None, CompileNode | None]:
    """A compile the text tells Dynamo gave up ("Failed to handle graph break gracefully. Skipping
    the function and falling back to eager"), where no metrics tell its failure: the failure the
    trace's metrics would have (fail_type Unsupported, the break's message), and its attempt."""
    for node in compile_.attempts:
        for gb in node.breaks:
            if gave_up_the_frame(gb):
                links = " ".join(f"gb/{gb_id}.html" for gb_id in gb.gb_ids)
                message = f"{gb.detail or ''}\n  Explanation: {gb.explanation or ''}\n{links}"
                return Failure("Unsupported", message, gb.where), node
    return None, None


def _guard_place(reason: RecompileReason, compile_place: str | None) -> str | None:
    """The user's line a recompile's failed guard came from (the innermost of the user's frames
    torch logged for it), its path completed from the compile's place where torch cut it short;
    None where torch logged none in the user's files (the compile's place stands)."""
    frame = reason.user_frame()
    if frame is None:
        return None
    path, line = frame
    file = split_place(compile_place)[0]
    if not path.startswith("/"):
        if file.endswith(path.lstrip(".")):
            path = file
        elif is_library_path("/torch/" + path) or "-packages/" in path:
            return None  # a guard's comment cut short to torch's own file (`nn/modules/conv.py:548`)
    return f"{path}:{line}"


def _records(node: CompileNode, *roles: Role) -> tuple[Record, ...]:
    return tuple((a.source, a.rec) for a in node.artifacts_in(*roles))


def place_of(compile_: Compile) -> tuple[str | None, str | None]:
    """(the compiled frame's function, its place): the compile's own, else its frame's (a compile
    refused by the recompile limit names neither)."""
    function = compile_.function()
    location = compile_.location()
    frame = compile_.frame  # (every compile of a frame has one; an Export entry asks no place)
    if frame is not None and (function is None or location is None):
        compiles = frame.compiles  # (only appended to: read by index, newest first, no copy)
        for at in range(len(compiles) - 1, -1, -1):
            other = compiles[at]
            function = function or other.function()
            location = location or other.location()
            if function is not None and location is not None:
                break  # (a copy and scan of the frame's compiles per compile was quadratic)
        function = function or frame.function
        location = location or frame.location
    return function, location


# ---- an Export entry (a group's records of no compile id) -----------------------------------------

def _judge_outside(compile_: Compile) -> Verdict:
    """torch.export's records: a failed export is a failure of the Export entry (its metrics'
    fail_type, a make_fx_fail_partial, a dynamo_error with no frame)."""
    node = compile_.head
    problems = []
    for failure, records in _export_failures(node):
        cause = failure_cause(failure.fail_type, failure.fail_reason)
        why = cause.why
        if cause.cause == "unsupported" and cause.registry is not None:  # (no fullgraph in an export)
            why = f"it allows no graph break: {cause.registry.type} ({cause.registry.gb_id})"
        place = failure.place
        problems.append(CompileProblem(Kind.FAILURE, cause.cause, "torch.export failed: " + why, node,
                                       "export", None, place, evidence=failure, records=records,
                                       message=failure.fail_type or failure.fail_reason.split("\n", 1)[0],
                                       subject=cause.subject, registry=cause.registry,
                                       place_told=place is not None))
    return Verdict(Status.ERROR if problems else Status.OK, tuple(problems))


def _export_failures(node: CompileNode) -> Iterator[tuple[Failure, tuple[Record, ...]]]:
    """Each failed export of the entry: each failed metrics of no compile id (a strict export's),
    each make_fx failure (a non-strict one's), else each dynamo_error (the job died first)."""
    if not any(failure.fail_type for failure, _ in node.export_failures):
        # (a dynamo_error beside failed metrics tells the same failure)
        failed = [a for a in node.artifacts_in(Role.FAILURE) if a.name == "dynamo_error"]
        for artifact, text in zip(failed, node.errors):  # each dynamo_error's text, in order
            yield failure_of_traceback(text), ((artifact.source, artifact.rec),)
    for failure, record in node.export_failures:  # in the order told
        yield failure, (record,)
