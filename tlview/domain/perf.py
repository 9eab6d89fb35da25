"""Perf problems: why a compiled model is not as fast as it could be, from what torch told of each
compile id, classed in torch's own words. verdict.py makes each a problem of Kind.PERF; the fixes
are diagnose's (diagnose/perf_fixes.py).

What each source tells (checked against real runs on an H200, fixtures/gpu_perf/README.md):
- TORCH_LOGS `cudagraphs`: Inductor's graph partitions and why an op is not cudagraphable
  (`op8: reason=cpu ops, ir=DeviceCopy, fx=...` and the user's line after it), a CUDA graph
  skipped (`skipping cudagraphs due to mutated inputs ... Found from :` and a stack), a CUDA
  graph recorded per input size, a graph re-recorded. In default mode every graph says
  `0 cudagraphable` with `reason=partition includes all ops when cudagraphs is disabled`: no
  problem. Text only: none of it is in the trace but a whole-graph skip.
- TORCH_LOGS `perf_hints`: fallback kernels, grad tensors copied into CUDA graphs, tiling.
- the trace: `cudagraph_skip_reason` and compile times in the compilation metrics, and the
  unbacked symbols a value read on the host inside the graph makes (`.item()`, `nonzero`), each
  with the user's line. A split is not in the trace, but what makes it is: the post-grad graph
  annotates every node with its device (`device_put: "f32[][]cpu" = ...`) under the user's line
  (`# File: ...`), and the FX graph cache's key says whether CUDA graphs were on for the compile
  (`fx_kwargs[cudagraphs]: BoxedBool(value=True)`). graph_host_ops reads the ops torch's
  Scheduler.should_partition keeps out as far as the graph says them; the text wins where both
  are told (it is torch's own partitioning).

Only the typed summaries below are kept on a compile id (never a payload).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tlview.domain.reasons import is_library_path

COSTS_TIME, INFORMATIONAL = "costs time", "informational"  # a perf problem's severity

# A compile this long is a hotspot to act on. Cold compiles of the small functions in the GPU
# runs took 1-4 s, where a cache saves little; a max-autotune compile took 20 s of a 21.7 s first
# call, and a kept cache brought it to 1 s. Ten seconds is where a user waits and asks.
COMPILE_TIME_HOTSPOT_S = 10.0
# Autotuning is named as where the time went when it took at least this share of the compile;
# and a long compile is a hotspot only then. The other compiles of 10 s and more in the
# fixtures are first compiles on the CPU (13 of them, 10.1-23.9 s): Dynamo's tracing 0.1-0.8 s of
# each (2.3 s once), the backend the rest, Inductor's code generation and C++ kernel builds
# 74-97% of it in 12, no autotuning, the FX graph cache missed in 11 (a first run's fresh
# cache). That is what any first compile costs on that machine, nothing in the user's code or
# settings to change; the GPU runs' hotspots were autotuning (serve_ma 36.5 s, 97%; autotune
# 20.4 s, 43%, and 18.5 s, 35%), which the default mode or a kept autotune cache removes. The
# Perf pane still shows every compile's breakdown.
AUTOTUNE_SHARE_NAMED = 0.3

DISABLED_REASON = "partition includes all ops when cudagraphs is disabled"
# Fallback kernels that are the fast path, not a missing lowering: attention kernels.
_EXPECTED_FALLBACK = re.compile(r"_scaled_dot_product_\w*attention|_flash_attention|_efficient_attention|"
                                r"_cudnn_attention")


@dataclass(slots=True)
class PartitionOp:
    """An op Inductor kept out of the CUDA graphs: torch's reason, its IR node, its FX node."""

    name: str  # `op8`
    reason: str  # `cpu ops`, `DeviceCopy ops`, `unbacked binding ops`, ...
    ir: str  # `DeviceCopy`
    fx: str | None  # `prims.device_put.default(mean, cpu)`
    place: str | None = None  # `file:line` of the user's line torch printed after it
    code: str | None = None  # that line's text


@dataclass(slots=True)
class Partitions:
    """`Created 2 graph partitions: 1 cudagraphable, 1 non-cudagraphable`, and its ops."""

    total: int
    cudagraphable: int
    ops: list[PartitionOp] = field(default_factory=list)


@dataclass(slots=True)
class CudagraphSkip:
    """A graph run without CUDA graphs: torch's reason, and the user's line it found."""

    reason: str  # `mutated inputs (1 instances)`, `cpu device (arg3_1)`
    place: str | None = None
    code: str | None = None


@dataclass(slots=True)
class PerfHint:
    """One `perf_hints` line, typed."""

    kind: str  # fallback, static_inputs, tiling, other
    subject: str | None  # the op (`aten.median.dim`), the tensors copied
    text: str  # its first line


@dataclass(slots=True)
class HostSync:
    """A value read on the host inside the graph: an unbacked symbol made in the user's code."""

    symbol: str  # `zuf0` (a float .item()), `u0`
    file: int | str  # the user frame's file: a string-table id, named when judged (the table is whole then)
    line: int | None
    code: str | None


@dataclass(slots=True)
class PerfEvidence:
    """What torch told of one compile id's speed (made the first time something is told)."""

    partitions: list[Partitions] = field(default_factory=list)
    skips: list[CudagraphSkip] = field(default_factory=list)
    hints: list[PerfHint] = field(default_factory=list)
    host_syncs: list[HostSync] = field(default_factory=list)
    # the ops the trace's post-grad graphs keep out of CUDA graphs (graph_host_ops), of a
    # compile on a CUDA device
    graph_ops: list[PartitionOp] = field(default_factory=list)
    sizes: int = 0  # distinct input sizes a CUDA graph was recorded for (the warning's count)
    rerecords: int = 0  # `Re-recording function=...` lines
    rerecord_reason: str | None = None

    def joined(self, later: PerfEvidence) -> PerfEvidence:
        """This and what a later part of the same file told, in order."""
        return PerfEvidence(self.partitions + later.partitions, self.skips + later.skips,
                            self.hints + later.hints, self.host_syncs + later.host_syncs,
                            self.graph_ops + later.graph_ops, max(self.sizes, later.sizes),
                            self.rerecords + later.rerecords, later.rerecord_reason or self.rerecord_reason)


# ---- TORCH_LOGS lines -----------------------------------------------------------------------------

_CREATED = re.compile(r"^Created (\d+) graph partitions: (\d+) cudagraphable, (\d+) non-cudagraphable")
_OP = re.compile(r"^\s*(?P<name>op\w+): reason=(?P<reason>.*?), ir=(?P<ir>[^,\s]+)(?:, fx=(?P<fx>.*))?$")
_FILE = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)')
# torch's format_default_skip_message: "skipping cudagraphs due to {reason}", and ". Found from :"
# with the stack where torch has one (mutated inputs, cpu device); other reasons end the line
_SKIP = re.compile(r"^skipping cudagraphs due to (?P<reason>.*?)(?:\.?\s*Found from ?:.*)?$")
_SKIP_AGAIN = "skipping cudagraphs due to "
_SIZES = re.compile(r"CUDAGraph supports dynamic shapes .*?observed (\d+) distinct sizes")
RERECORD = re.compile(r"^(?:\[(?P<cid>[^\]]+)\] )?Re-recording function=(?P<fn>[^,]+), reason=(?P<reason>.*?)\.?$")
_FALLBACK = re.compile(r"Using FallbackKernel: (?:torch\.ops\.)?(?P<op>\S+)")
_GRADS = re.compile(r"Grad tensors \[(?P<names>.*?)\] will be copied")
# Hints that tell what Inductor did in its own passes, nothing the user's code can change: no
# problem (every CPU compile of torch 2.11 says the first).
_NOT_FOR_THE_USER = ("Skip comprehensive padding",)


def user_frame(lines: list[str]) -> tuple[str, str, str | None] | None:
    """(`file:line`, function, the line's code) of the innermost frame in the user's code of a
    stack torch printed (`File "...", line N, in f` and the code under it)."""
    found = None
    for at, line in enumerate(lines):
        if (m := _FILE.match(line)) and not is_library_path(m.group("path")):
            code = lines[at + 1].strip() if at + 1 < len(lines) and not _FILE.match(lines[at + 1]) else None
            found = (f"{m.group('path')}:{m.group('line')}", m.group("fn"), code or None)
    return found


def skip_reason(text: str) -> str:
    """torch's reason for a skip, once (torch 2.11 says `due to skipping cudagraphs due to`)."""
    m = _SKIP.match(text)
    reason = m.group("reason") if m else text.split("\n", 1)[0]
    while reason.startswith(_SKIP_AGAIN):
        reason = reason[len(_SKIP_AGAIN):]
    return reason.strip().rstrip(".")


def read_cudagraphs(evidence: PerfEvidence, lines: list[str]) -> None:
    """Add what one `cudagraphs` record tells (its lines, prefixes off) to a compile id's evidence.
    Each line of a partition's listing is a record of its own (another line of torch's source):
    an op's `File` lines belong to the op listed last."""
    first = lines[0] if lines else ""
    if m := _CREATED.match(first):
        evidence.partitions.append(Partitions(int(m.group(1)), int(m.group(2))))
    elif m := _OP.match(first):
        if evidence.partitions:
            evidence.partitions[-1].ops.append(PartitionOp(m.group("name"), m.group("reason").strip(),
                                                           m.group("ir"), m.group("fx")))
    elif _FILE.match(first):
        ops = evidence.partitions[-1].ops if evidence.partitions else []
        if ops and ops[-1].place is None and (frame := user_frame(lines)) is not None:
            ops[-1].place, _, ops[-1].code = frame
    elif _SKIP.match(first):
        frame = user_frame(lines[1:])
        evidence.skips.append(CudagraphSkip(skip_reason(first), *(frame[0], frame[2]) if frame else (None, None)))
    elif m := _SIZES.search(first):
        evidence.sizes = max(evidence.sizes, int(m.group(1)))
    elif m := RERECORD.match(first):
        # (re-recordings logged in the same microsecond are one record: each of its lines counts)
        evidence.rerecords += sum(1 for line in lines if RERECORD.match(line))
        evidence.rerecord_reason = m.group("reason")


def is_skip(first_line: str) -> bool:
    return _SKIP.match(first_line) is not None


def is_sizes_warning(first_line: str) -> bool:
    return _SIZES.search(first_line) is not None


def perf_hint(text: str) -> PerfHint:
    """A `perf_hints` record typed: a fallback kernel (its op), grads copied into CUDA graphs
    (the tensors), Inductor's tiling note, else other."""
    first = text.split("\n", 1)[0]
    if m := _FALLBACK.search(first):
        return PerfHint("fallback", m.group("op"), first)
    if m := _GRADS.search(text):
        return PerfHint("static_inputs", m.group("names").replace("\\'", "'"), first)
    if "bad tiling" in text:
        return PerfHint("tiling", None, first)
    if any(note in first for note in _NOT_FOR_THE_USER):
        return PerfHint("internal", None, first)
    return PerfHint("other", None, first)


def expected_fallback(op: str | None) -> bool:
    """A fallback kernel that is the fast path (an attention kernel), not a missing lowering."""
    return bool(op and _EXPECTED_FALLBACK.search(op))


# ---- the post-grad graph of a trace -----------------------------------------------------------

# `device_put: "f32[][]cpu" = torch.ops.prims.device_put.default(x, device(type='cpu'));  x = None`
_GRAPH_NODE = re.compile(r'^\s*(?P<name>\w+): "(?P<meta>[^"]*)" = torch\.ops\.(?P<op>[\w.]+)\((?P<args>.*?)\)'
                         r'(?:;.*)?$')
# `_assert_scalar = torch.ops.aten._assert_scalar.default(ge, "Runtime assertion failed ...")`:
# Inductor's AssertScalar, checked on the host
_GRAPH_ASSERT = re.compile(r"^\s*(?P<name>\w+) = torch\.ops\.(?P<op>aten\._assert_scalar\.\w+)\((?P<first>\w+)")
_UNBACKED = re.compile(r"\bu\d+\b")  # an unbacked size symbol (`i64[u0, 1][1, u0]cuda:0`)
_ARGUMENT = re.compile(r'(?P<name>\w+): "(?P<meta>[^"]*)"')  # of `def forward(self, arg0_1: "f32[4][1]cpu", ...)`
_GRAPH_FILE = re.compile(r"^\s*# File: (?P<path>.+?):(?P<line>\d+) in (?P<fn>[^,]+), code: (?P<code>.*)$")
# A 0-dim host tensor made of constants alone (`f32[][]cpu`, no tensor among its arguments) is a
# scalar Inductor writes into its kernels, no node to keep out: `y[y < 0] = 0`'s
# `full([], 0.0, device=cpu)` split nothing in the H200 run's cudagraphs log (fixtures/gpu_perf
# bool_mask); made from a tensor (a sum on the host, a copy to it) it is an op like any other.
_SCALAR = re.compile(r"^\w+\[\]\[\]cpu$")
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_DEVICE_CALL = re.compile(r"device\(type='(?P<type>\w+)'(?:, index=(?P<index>\d+))?\)")
# Ops that make no buffer of their own (Inductor's ReinterpretView of their input): no scheduler
# node, so nothing should_partition could keep out.
_VIEWS = re.compile(r"^aten\.(?:view|_unsafe_view|reshape|permute|expand|squeeze|unsqueeze|select|slice|as_strided|"
                    r"t|transpose|alias|detach)\.")
# `fx_kwargs[cudagraphs]: BoxedBool(value=True)` in the FX graph cache's key: CUDA graphs on for
# the compile (the compilation metrics' `inductor_config` is the global one, off under
# mode="reduce-overhead"); older keys say only `inductor_config[triton.cudagraphs]: True`.
_CUDAGRAPHS_ON = (re.compile(r"fx_kwargs\[cudagraphs\]: BoxedBool\(value=(True|False)\)"),
                  re.compile(r"inductor_config\[triton\.cudagraphs\]: (True|False)"))


def _device(meta: str) -> str:
    """`f32[8, 64][64, 1]cuda:0` -> `cuda:0` (the text after the last `]`)."""
    return meta.rsplit("]", 1)[-1].strip()


def graph_host_ops(graph: str) -> list[PartitionOp]:
    """The ops of a post-grad graph (print_readable, nodes annotated with their device) that torch's
    Scheduler.should_partition keeps out of CUDA graphs, as far as the graph says them: of a graph
    on a CUDA device, an op whose output is on the CPU (`cpu ops`: a `.cpu()` is a device_put to
    cpu; a runtime assert is Inductor's AssertScalar), a copy of a host tensor to the GPU (torch
    2.11's `DeviceCopy ops`), an op whose output size is a new unbacked symbol (`unbacked binding
    ops`: nonzero); each with the user's line of the `# File:` comment above it. None of a graph
    with nothing on CUDA."""
    if "cuda" not in graph:
        return []
    unbacked: set[str] = set()
    names: set[str] = set()  # the graph's inputs and nodes so far: what an op's arguments may name
    found: list[PartitionOp] = []
    place = code = None
    on_cuda = False
    for line in graph.split("\n"):
        if m := _GRAPH_NODE.match(line):
            device = _device(m.group("meta"))
            on_cuda = on_cuda or device.startswith("cuda")
            op, args = m.group("op"), _DEVICE_CALL.sub(_device_said, m.group("args"))
            copy = op.startswith("prims.device_put")
            new_symbols = set(_UNBACKED.findall(m.group("meta"))) - unbacked
            unbacked |= new_symbols
            constant = _SCALAR.match(m.group("meta")) and not any(w in names for w in _WORD.findall(m.group("args")))
            names.add(m.group("name"))
            if device == "cpu" and not _VIEWS.match(op) and not constant:
                reason = "cpu ops"
            elif copy and device.startswith("cuda"):  # (Inductor's DeviceCopy, kept out whatever it copies)
                reason = "DeviceCopy ops"
            elif new_symbols and device.startswith("cuda"):
                reason = "unbacked binding ops"
            else:
                continue
            found.append(PartitionOp(m.group("name"), reason, "DeviceCopy" if copy else "", f"{op}({args})",
                                     place, code))
        elif m := _GRAPH_ASSERT.match(line):
            found.append(PartitionOp(m.group("name"), "cpu ops", "AssertScalar",
                                     f"{m.group('op')}({m.group('first')})", place, code))
        elif m := _GRAPH_FILE.match(line):
            place = code = None
            if not is_library_path(m.group("path")):  # (a line in torch's code is not the user's)
                place, code = f"{m.group('path')}:{m.group('line')}", m.group("code").strip() or None
        elif line.lstrip().startswith("# No stacktrace found"):
            place = code = None
        elif line.lstrip().startswith("def forward("):
            arguments = list(_ARGUMENT.finditer(line))
            names.update(arg.group("name") for arg in arguments)
            on_cuda = on_cuda or any(_device(arg.group("meta")).startswith("cuda") for arg in arguments)
    return found if on_cuda else []


def _device_said(m: re.Match[str]) -> str:
    """`device(type='cuda', index=0)` -> `cuda:0`, as torch's cudagraphs log writes an op's args."""
    return m.group("type") + (f":{m.group('index')}" if m.group("index") else "")


def cudagraphs_said(cache_key: str) -> bool | None:
    """Whether CUDA graphs were on for a compile, from its FX graph cache's key (the cache
    artifact's payload); None where it does not say."""
    for pattern in _CUDAGRAPHS_ON:
        if m := pattern.search(cache_key):
            return m.group(1) == "True"
    return None


# ---- the problems ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PerfFinding:
    """One perf problem of a compile id, before verdict.py makes it a CompileProblem."""

    cause: str  # the class, from torch's words (`cudagraph_split_cpu_ops`)
    why: str
    severity: str  # COSTS_TIME or INFORMATIONAL
    message: str  # what torch said
    place: str | None = None  # the user's line
    subject: str | None = None  # what the fix names: the op, the tensors, the reason
    facts: Any = None  # what the fix is chosen from (the PartitionOp, CudagraphSkip, times)


@dataclass(frozen=True, slots=True)
class CompileTime:
    """Where a long compile's time went (its compilation metrics)."""

    seconds: float
    autotune_seconds: float
    triton_seconds: float
    cache_missed: bool


def slug(words: str) -> str:
    """`DeviceCopy ops` -> `devicecopy_ops`; `mutated inputs (1 instances)` -> `mutated_inputs`."""
    words = re.sub(r"\(.*?\)", "", words).lower()
    return re.sub(r"[^a-z0-9]+", "_", words).strip("_") or "other"


def perf_findings(evidence: PerfEvidence | None, metrics: dict[str, Any] | None,
                  whole_skip: str | None, file_name: Callable[[int | str], str] = str,
                  cudagraphs_on: Callable[[], bool | None] = lambda: None) -> list[PerfFinding]:
    """The perf problems of one compile id from its evidence (text), its compilation metrics and
    the trace's whole-graph skip reason (`cudagraph_skip_reason`); `file_name` names a trace's
    file ids (TraceFile.frame_filename); `cudagraphs_on` reads whether CUDA graphs were on for it
    (asked only of a graph that has ops they would keep out)."""
    found: list[PerfFinding] = []
    evidence = evidence or PerfEvidence()
    if evidence.partitions:
        partitions = evidence.partitions[-1]  # (a restart partitions again: the last is the compile's)
        found += _split_findings(partitions.ops, _partition_counts(partitions), _said_by_text)
    elif evidence.graph_ops and not whole_skip and cudagraphs_on():
        found += _split_findings(evidence.graph_ops, "read from the trace's post-grad graph", _said_by_graph)
    found += _skip_findings(evidence, whole_skip)
    if evidence.sizes:
        found.append(PerfFinding(
            "cudagraph_per_size", f"a CUDA graph was recorded for each of {evidence.sizes} distinct input sizes: "
            "each new size records (and keeps) another graph, and pays its recording", COSTS_TIME,
            f"CUDAGraph supports dynamic shapes by recording a new graph for each distinct input size ... "
            f"observed {evidence.sizes} distinct sizes", facts=evidence.sizes))
    if evidence.rerecords:
        found.append(PerfFinding(
            "cudagraph_rerecorded", f"the CUDA graph was recorded again {evidence.rerecords:,} times "
            f"({evidence.rerecord_reason or 'reason not logged'}): an input torch took as static "
            "moved to another address", COSTS_TIME,
            f"Re-recording function=..., reason={evidence.rerecord_reason}", subject=evidence.rerecord_reason,
            facts=evidence.rerecords))
    found += _hint_findings(evidence)
    # (a data-dependent op that split the CUDA graph is told once, by its split)
    split_at = {f.place for f in found if f.cause.startswith("cudagraph_split_")}
    found += [f for f in _host_sync_findings(evidence, file_name) if f.place is None or f.place not in split_at]
    if (hotspot := compile_time_of(metrics)) is not None:
        found.append(_compile_time_finding(hotspot))
    return found


def _split_findings(ops: list[PartitionOp], counts: str,
                    message: Callable[[PartitionOp], str]) -> list[PerfFinding]:
    """One problem per reason and user's line of the ops kept out of the CUDA graphs (`counts`:
    how many partitions, where it is known; `message`: what torch said of an op)."""
    seen: dict[tuple[str, str | None], PerfFinding] = {}
    # A tensor made on the host (torch.rand(shape) with no device) and copied to the GPU: its host
    # ops and the copy are one problem, at the copy, fixed together by making it on the device
    # (fixtures/gpu_perf host_noise: 0.149 -> 0.093 ms a call on an H200, 2 problems -> 0).
    uploads = [op for op in ops if _is_upload(op)]
    made_on_host = [op for op in ops if op.reason == "cpu ops" and op.ir != "AssertScalar"
                    and not _is_download(op)] if uploads and not any(map(_is_download, ops)) else []
    for op in ops:
        if op.reason == DISABLED_REASON or (op.reason, op.place) in seen or op in made_on_host:
            continue
        what = f"{op.fx or op.ir}"
        if op.ir == "DeviceCopy" and op.fx and re.search(r",\s*cpu\)", op.fx):
            why = ("a copy to the host inside the compiled function splits the CUDA graph: it runs outside it "
                   "every call")
        elif op.ir == "DeviceCopy" and made_on_host:
            first, more = made_on_host[0], len(made_on_host) - 1
            also = f" and {more} more host op{'' if more == 1 else 's'}" if more else ""
            why = (f"a tensor made on the host inside the compiled function ({first.fx or first.ir}{also}) "
                   "is copied to the GPU: those ops and the copy run outside the CUDA graph every call")
        elif op.ir == "DeviceCopy":
            why = ("a tensor from the host is copied to the GPU inside the compiled function: that copy runs "
                   "outside the CUDA graph every call, as it would before the call")
        elif op.reason == "unbacked binding ops":
            why = f"{what} has a data-dependent size: it syncs with the host and runs outside the CUDA graph"
        elif op.ir == "AssertScalar":
            why = "a runtime check of a data-dependent value runs on the CPU, outside the CUDA graph"
        elif op.reason == "dynamic shape ops":
            why = "ops with dynamic shapes are kept out of the CUDA graphs (cudagraph_skip_dynamic_graphs)"
        else:
            why = f"{what} is not cudagraphable ({op.reason}): it runs outside the CUDA graph every call"
        # An input copied in, and nothing made on the host: the copy is paid inside or before the
        # call alike (H200: a table passed in, 0.108 -> 0.117 ms once made on the device; a pinned
        # batch, 0.100 -> 0.115 ms once copied before the call; fixtures/gpu_perf cg_cpu_input,
        # pinned_copy): it splits the graph, and no time was gained by moving it.
        severity = INFORMATIONAL if _is_upload(op) and not made_on_host else COSTS_TIME
        seen[(op.reason, op.place)] = PerfFinding(f"cudagraph_split_{slug(op.reason)}", f"{why} ({counts})",
                                                  severity, message(op), op.place, op.reason, op)
    return list(seen.values())


def _is_download(op: PartitionOp) -> bool:
    """A copy to the host (`.cpu()`: device_put(x, cpu))."""
    return op.ir == "DeviceCopy" and bool(op.fx) and re.search(r",\s*cpu\)", op.fx or "") is not None


def _is_upload(op: PartitionOp) -> bool:
    """A copy of a host tensor to the GPU."""
    return op.ir == "DeviceCopy" and not _is_download(op)


def _partition_counts(partitions: Partitions) -> str:
    kept_out = partitions.total - partitions.cudagraphable
    return (f"{partitions.total} partition{'' if partitions.total == 1 else 's'}, "
            + (f"{kept_out} not cudagraphable" if partitions.cudagraphable else "none of it CUDA-graphed"))


def _said_by_text(op: PartitionOp) -> str:
    return f"{op.name}: reason={op.reason}, ir={op.ir}" + (f", fx={op.fx}" if op.fx else "")


def _said_by_graph(op: PartitionOp) -> str:
    return f"{op.name} = {op.fx} (post-grad graph, CUDA graphs on)"


def _skip_findings(evidence: PerfEvidence, whole_skip: str | None) -> list[PerfFinding]:
    """A graph run without CUDA graphs: each reason once (the trace and the text tell the same)."""
    skips = list(evidence.skips)
    if whole_skip:
        lines = whole_skip.split("\n")
        frame = user_frame(lines[1:])
        skips.insert(0, CudagraphSkip(skip_reason(lines[0]), *(frame[0], frame[2]) if frame else (None, None)))
    found: dict[str, PerfFinding] = {}
    for skip in skips:
        cause = f"cudagraph_skipped_{slug(skip.reason)}"
        if cause in found:
            continue
        if cause == "cudagraph_skipped_mutated_inputs":
            why = "the compiled function changes an input in place, so the whole graph runs without a CUDA graph"
        elif cause == "cudagraph_skipped_cpu_device":
            why = f"an input on the CPU ({_inside(skip.reason)}) keeps the whole graph out of CUDA graphs"
        else:
            why = f"the whole graph runs without a CUDA graph: {skip.reason}"
        found[cause] = PerfFinding(cause, why, COSTS_TIME, f"skipping cudagraphs due to {skip.reason}",
                                   skip.place, skip.reason, skip)
    return list(found.values())


def _inside(reason: str) -> str:
    m = re.search(r"\((.*?)\)", reason)
    return m.group(1) if m else reason


def _hint_findings(evidence: PerfEvidence) -> list[PerfFinding]:
    found: list[PerfFinding] = []
    for hint in evidence.hints:
        if hint.kind == "fallback":
            if expected_fallback(hint.subject):
                found.append(PerfFinding("fallback_kernel_expected", f"{hint.subject} runs as its own kernel: "
                                         "an attention kernel, as expected", INFORMATIONAL, hint.text,
                                         subject=hint.subject))
            else:
                found.append(PerfFinding("fallback_kernel", f"Inductor has no lowering of {hint.subject}: it "
                                         "runs as an ATen kernel, not fused with the ops around it",
                                         INFORMATIONAL, hint.text, subject=hint.subject))
        elif hint.kind == "internal":
            continue
        elif hint.kind == "static_inputs":
            found.append(PerfFinding("static_inputs_copied", "the grad tensors are copied into the CUDA graph's "
                                     "buffers on every call (their addresses are not marked static)",
                                     COSTS_TIME, hint.text, subject=hint.subject))
        else:
            found.append(PerfFinding("inductor_hint", f"Inductor's note on its own code: {hint.text[:200]}",
                                     INFORMATIONAL, hint.text))
    return found


# What reads a device value on the host in a line of the user's: `.item()`, `.tolist()`, and the
# ops whose output size is data-dependent. Other lines an unbacked symbol is made at only carry
# one on (`n = idx.shape[0]` after a nonzero): the sync was at the op.
_SYNCS = re.compile(r"\.(?:item|tolist)\(|\b(?:nonzero|argwhere|unique|unique_consecutive|masked_select|"
                    r"bincount|repeat_interleave)\(")


def _host_sync_findings(evidence: PerfEvidence, file_name: Callable[[int | str], str]) -> list[PerfFinding]:
    found: dict[str | None, PerfFinding] = {}
    for sync in evidence.host_syncs:
        code = (sync.code or "").split("  #", 1)[0].strip()  # (the line's comment off)
        path = file_name(sync.file)
        place = f"{path}:{sync.line}"
        if place in found or is_library_path(path) or not _SYNCS.search(code):
            continue
        item = ".item()" in code or ".tolist()" in code or sync.symbol.startswith("zuf")
        what = f"`{code}`" if code else "a value"
        why = (f"{what} reads a tensor's value on the host inside the compiled graph: the host waits for "
               "the device there each call" if item else
               f"{what} makes a data-dependent size inside the compiled graph: the host waits for the "
               "device to know it")
        found[place] = PerfFinding("host_sync", why, COSTS_TIME, f"unbacked symbol {sync.symbol}",
                                   place, "item" if item else "data_dependent", sync)
    return list(found.values())


def _us(metrics: dict[str, Any], key: str) -> float:
    value = metrics.get(key)
    return value / 1e6 if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def compile_breakdown(metrics: dict[str, Any] | None) -> CompileTime | None:
    """Where a compile's time went (its compilation metrics), however long; None without a time."""
    seconds = (metrics or {}).get("entire_frame_compile_time_s")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return None
    assert metrics is not None  # (a time was read from them)
    missed = metrics.get("inductor_fx_local_cache_miss_count")
    return CompileTime(float(seconds), _us(metrics, "compile_time_autotune_time_us"),
                       _us(metrics, "triton_compile_time_us"), isinstance(missed, int) and missed > 0)


def compile_time_of(metrics: dict[str, Any] | None) -> CompileTime | None:
    """A compile at least COMPILE_TIME_HOTSPOT_S long that autotuning took at least
    AUTOTUNE_SHARE_NAMED of, and where its time went; else None."""
    time = compile_breakdown(metrics)
    if time is None or time.seconds < COMPILE_TIME_HOTSPOT_S:
        return None
    return time if time.autotune_seconds >= AUTOTUNE_SHARE_NAMED * time.seconds else None


def compile_time_said(time: CompileTime) -> str:
    """`the compile took 21.7 s: autotuning 10.2 s (47%), Triton compilation 3.1 s; the FX graph
    cache missed (a cold cache)`."""
    parts = []
    if time.autotune_seconds >= 0.05:
        parts.append(f"autotuning {time.autotune_seconds:.1f} s ({time.autotune_seconds / time.seconds:.0%})")
    if time.triton_seconds >= 0.05:
        parts.append(f"Triton compilation {time.triton_seconds:.1f} s")
    went = f": {', '.join(parts)}" if parts else ""
    cache = "; the FX graph cache missed (a cold cache)" if time.cache_missed else ""
    return f"the compile took {time.seconds:.1f} s{went}{cache}"


def _compile_time_finding(time: CompileTime) -> PerfFinding:
    return PerfFinding("compile_time", compile_time_said(time), COSTS_TIME,
                       f"entire_frame_compile_time_s {time.seconds:.1f}", facts=time)
