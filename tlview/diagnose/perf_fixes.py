"""What to do about a perf problem (domain/perf.py), from its context: the op torch named, the
skip reason, where the compile's time went, and the compile's torch (a name is printed only
where that torch has it).

Each fix said here was applied on a real GPU run and re-run (fixtures/gpu_perf/README.md's table):
the problem was gone after it. Where none was proven (ops kept out for dynamic shapes; a
fallback kernel), the fix says so rather than guess.
"""

from __future__ import annotations

import re

from tlview.domain.perf import AUTOTUNE_SHARE_NAMED, COSTS_TIME, CompileTime, CudagraphSkip, PartitionOp
from tlview.domain.settings import CompileSettings
from tlview.domain.verdict import CompileProblem

# (torch.compile's own API: since 2.2, torch._dynamo.mark_static_address)
STATIC_ADDRESS_SINCE = (2, 2)
NO_FIX_PROVEN = "no fix proven"


def perf_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    cause, facts = problem.cause, problem.facts
    if cause.startswith("cudagraph_split_"):
        return _split_fix(facts if isinstance(facts, PartitionOp) else None, problem.severity)
    if cause.startswith("cudagraph_skipped_"):
        return _skip_fix(cause, facts if isinstance(facts, CudagraphSkip) else None, settings)
    if cause == "cudagraph_per_size":
        return ("pad inputs to a few fixed sizes (buckets, e.g. a multiple of 32) before the compiled call: "
                "one CUDA graph per bucket, recorded once")
    if cause == "cudagraph_rerecorded":
        return ("keep a static input's storage: update it in place (p.copy_(new)), not by "
                "replacing it (p.data = new, a new tensor each call)")
    if cause == "static_inputs_copied":
        return (f"keep the grads where they are (optimizer.zero_grad(set_to_none=False)) and mark them "
                f"static once: {_static_address(settings)}(p.grad) for each parameter")
    if cause == "host_sync":
        if problem.subject == "item":
            return ("keep the value a tensor on the device (torch.clamp, torch.where with it) instead of "
                    ".item(); read it on the host outside the compiled function, if at all")
        return "torch.where (a mask of the same size) instead of nonzero or boolean indexing: no data-dependent size"
    if cause == "compile_time":
        return _compile_time_fix(facts if isinstance(facts, CompileTime) else None)
    if cause == "fallback_kernel_expected":
        return "nothing to do: the attention kernel is the fast path"
    if cause == "fallback_kernel":
        return (f"{NO_FIX_PROVEN}: Inductor has no lowering of this op (informational; rewrite it only if "
                "profiling shows it)")
    return f"{NO_FIX_PROVEN}: Inductor's own note (informational)"


def _split_fix(op: PartitionOp | None, severity: str | None) -> str:
    if op is None:
        return f"{NO_FIX_PROVEN}: an op runs outside the CUDA graph"
    if op.ir == "DeviceCopy" and op.fx and re.search(r",\s*cpu\)", op.fx):
        return ("copy to the host once, outside the compiled function (return the tensor, call .cpu() or "
                ".item() on it after the call)")
    if op.ir == "DeviceCopy" and severity == COSTS_TIME:  # (host ops feed it: domain/perf.py)
        # (noise drawn on the host each call, host_noise: torch.rand(shape, device=x.device),
        # 0.149 -> 0.093 ms a call on an H200)
        return ("make the tensor on the device where it is made inside the compiled function, with "
                "device= (torch.rand(shape, device=x.device))")
    if op.ir == "DeviceCopy":
        # (a table passed from the host, cg_cpu_input, and a pinned batch, pinned_copy: moved out,
        # the split went and the time stayed, 0.108 -> 0.117 and 0.100 -> 0.115 ms)
        return ("to keep the CUDA graph whole, copy it before the call (.to(device)), or keep a tensor "
                "that does not change on the device (a module buffer); the copy itself is paid either "
                "way: no time was gained by this on the H200 runs")
    if op.reason == "unbacked binding ops" or op.ir == "AssertScalar":
        return ("torch.where (a mask of the same size) instead of nonzero or boolean indexing: no data-dependent "
                "size, no sync, one CUDA graph")
    if op.reason == "dynamic shape ops":
        return (f"{NO_FIX_PROVEN}: ops with dynamic shapes stay out of CUDA graphs while "
                "cudagraph_skip_dynamic_graphs is set")
    return f"{NO_FIX_PROVEN}: torch keeps {op.fx or op.ir} out of CUDA graphs ({op.reason})"


def _skip_fix(cause: str, skip: CudagraphSkip | None, settings: CompileSettings) -> str:
    if cause == "cudagraph_skipped_mutated_inputs":
        return (f"keep the mutated state in a module buffer (register_buffer: a static address), or "
                f"{_static_address(settings)}(t) on it once, so CUDA graphs can take the in-place update")
    if cause == "cudagraph_skipped_cpu_device":
        return "make the tensor on the device once (a module buffer, or .to(device) before the compiled call)"
    if cause == "cudagraph_skipped_multiple_devices":
        return "keep every input of the compiled function on one device"
    return f"{NO_FIX_PROVEN}: {skip.reason if skip else 'the reason torch gave'}"


def _static_address(settings: CompileSettings) -> str:
    version = settings.torch_version
    return "torch._dynamo.mark_static_address" if version is None or version >= STATIC_ADDRESS_SINCE else \
        "a module buffer (this torch has no torch._dynamo.mark_static_address)"


def _compile_time_fix(time: CompileTime | None) -> str:
    """A cold cache: keep it (proven: 21.7 s -> 1.0 s). Autotuning: the default mode. Else none
    proven: the compile timeline says which phase took it."""
    autotuned = time is not None and time.seconds > 0 and time.autotune_seconds / time.seconds >= AUTOTUNE_SHARE_NAMED
    tune = "the default mode (no max-autotune) autotunes nothing"
    if time is not None and time.cache_missed:
        fix = ("keep Inductor's cache across runs: TORCHINDUCTOR_CACHE_DIR set to a directory that stays (not a "
               "fresh /tmp per job); the next run's compile reads it")
        return fix + (f"; autotuning is most of it: {tune}" if autotuned else "")
    if autotuned:
        return f"autotuning is most of it: {tune}, or keep its cache (TORCHINDUCTOR_CACHE_DIR)"
    return f"{NO_FIX_PROVEN}: the compile timeline (--report) says which phase took the time"
