"""The records of `--json` (summary.py makes them; --report, markdown and rank_fold read them), each
declared once, as tlparse types its records: mypy checks every key that is written or read.

They are TypedDicts, plain dicts at run time: the JSON is written from them as they are (orjson,
in the order their keys are made), and tests compare summaries as dicts. The parts made in a lower
layer (tlview.diagnose's run summary, timeline, caches and divergence; the domain's totals and rank
groups) are read by key as `dict[str, Any]`, named here so that a signature says which part it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypedDict

# Made in lower layers, given as they are (each a `dict` there).
Totals = dict[str, Any]  # tlview.domain.totals.Totals, as a dict (`perf`: perf problems)
RankGroupEntry = dict[str, Any]  # tlview.domain.rank_history.RankGroups.as_data
RunSummary = dict[str, Any]  # tlview.diagnose.costs.run_summary
TimelineRow = dict[str, Any]  # tlview.diagnose.costs.timeline
CacheSummary = dict[str, Any]  # tlview.diagnose.caches.cache_summary
Divergence = dict[str, Any]  # tlview.diagnose.ranks.divergence


class RankFolded(TypedDict, total=False):
    """What rank_fold adds to a record of the rank that stands for its group of ranks with the same
    compile history (never in --json)."""

    ranks_said: str  # `ranks 0-1022`, where the group has more than one rank
    ranks_title: str  # the group's title, over its table in --report


class SourceExcerptEntry(TypedDict):
    """The user's lines at a problem (tlview.source.user_source.Excerpt.as_dict)."""

    path: str
    read_from: str
    line: int
    lines: list[SourceLineEntry]


class SourceLineEntry(TypedDict):
    number: int
    text: str
    marked: bool  # the problem's own line


class MissingSourceEntry(TypedDict):
    """A user's file the lines at a problem were not read from, and why."""

    path: str
    why: str


class InputProblemEntry(TypedDict):
    """Something in an input file that could not be read (tlview.domain.input_problems)."""

    file: str
    line: int
    kind: str
    message: str
    compile_id: str | None


class _SourceFileFields(TypedDict):
    path: str
    kind: str  # trace, text
    bytes: int
    records: int


class SourceFileEntry(_SourceFileFields, RankFolded, total=False):
    """An input file: its kind's own fields (a trace file's, a text log's), and what rank_fold adds
    to the first file of a group of ranks (`files`: how many it stands for)."""

    # a trace file's
    rank: int | None
    rank_group: int | None
    pid: int | None
    started: str
    md5_ok: int
    md5_bad: int
    record_kinds: dict[str, int]
    # a text log's
    lines: int
    glog_lines: int
    ranks: list[int]
    pids: list[int]
    # folded (rank_fold)
    files: int


class GraphBreakEntry(TypedDict):
    """A graph break of a compile id."""

    location: str | None
    reason: str
    detail: str | None
    explanation: str | None
    hints: list[str]
    logged: bool  # False: known only from the restart it caused
    cause: str


class _PerfFields(TypedDict, total=False):
    """Only of a problem of kind `perf` (domain/perf.py). Its `cause` is the class, in torch's
    words: cudagraph_split_<partition reason> (cpu_ops, devicecopy_ops, unbacked_binding_ops,
    dynamic_shape_ops, ...), cudagraph_skipped_<skip reason> (mutated_inputs, cpu_device, ...),
    cudagraph_per_size, cudagraph_rerecorded, fallback_kernel, fallback_kernel_expected,
    static_inputs_copied, host_sync, compile_time, inductor_hint; its `location` the user's line
    torch named, else the compile's."""

    severity: str  # `costs time` or `informational`


class CompileProblemEntry(_PerfFields):
    """A problem of the verdict (tlview.domain.verdict.CompileProblem), as --json gives it and
    --report, markdown and --fail-on read it."""

    kind: str
    cause: str
    why: str
    fix: str
    compile_id: str
    function: str | None
    resumed_at: int | None
    location: str | None
    against: str | None
    logged: bool
    primary: bool
    follows: str | None
    message: str
    exception: str | None
    fail_reason: str | None
    evidence: list[int]  # record numbers in the compile id's own log
    source: SourceExcerptEntry | None


class _DiagnosisFields(TypedDict):
    kind: str
    cause: str
    why: str
    fix: str
    place: str | None  # `file:line`
    registry: dict[str, str] | None


class DiagnosisEntry(_DiagnosisFields):
    """A diagnosis (tlview.diagnose.classify.Diagnosis.as_dict), with the user's lines at its place."""

    source: SourceExcerptEntry | None


class DynamicEntry(TypedDict):
    kind: str
    summary: str


class _CompileExtras(RankFolded, total=False):
    """A compile id's keys that only some have."""

    ddp_split: DdpSplitEntry  # where DDPOptimizer split its graph


class CompileEntry(_CompileExtras):
    """One compile id (one attempt of a compile)."""

    id: str
    rank: int | None
    process: int | None
    source: str | None
    status: str
    function: str | None
    user_function: str | None
    location: str | None
    graph_breaks: list[GraphBreakEntry]
    restart_reasons: list[str]
    recompile_reasons: list[str]
    recompile_of: list[str]
    against: str | None
    fail_type: str | None
    fail_reason: str | None
    errors: list[str]
    artifacts: list[str]
    guard_count: int | None
    guard_checks: int | None
    shape_env_guard_count: int | None
    graph_op_count: int | None
    compile_time_s: float | None
    dynamic: list[DynamicEntry]
    perf_hints: list[str]
    verdict: list[CompileProblemEntry]
    diagnosis: list[DiagnosisEntry]
    problems: list[InputProblemEntry]


class DdpBucketEntry(TypedDict):
    graph: str  # `submod_0`
    parameters: list[str]  # whose gradients form its bucket: `blocks.0.weight`
    bytes: int | None


class DdpSplitEntry(TypedDict):
    """DDPOptimizer's split of one graph into several, one per DDP gradient bucket (domain/ddp_split.py)."""

    graphs: int
    bucket_cap_bytes: int | None  # logged by TORCH_LOGS=dynamo only
    buckets: list[DdpBucketEntry]  # from the trace's optimize_ddp_split_child records


class OutsideEntry(RankFolded):
    """A rank's or process's records of no compile id (torch.export's), and their verdict."""

    rank: int | None
    process: int | None
    source: str | None
    status: str
    records: dict[str, int]
    artifacts: list[str]
    verdict: list[CompileProblemEntry]
    diagnosis: list[DiagnosisEntry]


class GraphBreakGroup(RankFolded):
    """Graph breaks of one rank or process with the same place and reason, and their compile ids."""

    rank: int | None
    process: int | None
    location: str | None
    reason: str
    detail: str | None
    explanation: str | None
    hints: list[str]
    count: int
    compile_ids: list[str]


class JobVerdictEntry(TypedDict):
    """The job's own verdict (diagnose.hang.JobVerdict): hung, may hang or died, and where."""

    state: str
    said: str
    rank: int | None
    compile_id: str | None


# A streamed summary's compile entries are made as they are read (summary.CompileEntries), and what
# making them found is a function called after.
Compiles = Iterable[CompileEntry]
SourceMissing = list[MissingSourceEntry] | Callable[[], list[MissingSourceEntry]]


class Summary(TypedDict):
    """The document `--json` prints, in the order it prints it."""

    tlview_summary_version: int
    pytorch_version: str | None
    sources: list[SourceFileEntry]
    ranks: list[int]
    rank_groups: list[RankGroupEntry]
    filter: str | None
    totals: Totals
    run_totals: Totals
    compiles: Compiles
    outside_compiles: list[OutsideEntry]
    graph_break_summary: list[GraphBreakGroup]
    run_summary: RunSummary
    timeline: list[TimelineRow]
    caches: CacheSummary
    divergence: Divergence
    divergence_summary: list[str]
    hang_summary: list[str]
    job_verdict: JobVerdictEntry | None
    headline: str  # the run's worst problem in one line (diagnose/worst.py)
    problems: list[InputProblemEntry]
    source_missing: SourceMissing
    notes: list[str]
    unknown_record_kinds: dict[str, int]
