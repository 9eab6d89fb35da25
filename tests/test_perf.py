"""Perf problems (domain/perf.py, diagnose/perf_fixes.py) on the real GPU runs of fixtures/gpu_perf
(README.md there: the truth of each run, its bug and its fix) and fixtures/gpu, and a test per
rule. Each bug run has its class, at the user's line torch named, with the fix the README shows
proven; its fix run has none of that class."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, json_for, run_cli

from tlview.domain import perf
from tlview.domain.perf import (
    COMPILE_TIME_HOTSPOT_S,
    COSTS_TIME,
    DISABLED_REASON,
    INFORMATIONAL,
    PerfEvidence,
    perf_findings,
    perf_hint,
    read_cudagraphs,
)

_DOCS: dict[str, dict] = {}


def _doc(path: Path, *args: str) -> dict:
    key = f"{path} {args}"
    if key not in _DOCS:
        _DOCS[key] = json_for(path, *args)
    return _DOCS[key]


def _perf(doc: dict) -> list[dict]:
    return [p for c in doc["compiles"] for p in c["verdict"] if p["kind"] == "perf"]


def _run(root: Path, name: str) -> Path:
    found = [root / part / name for part in ("gpu_perf", "gpu_perf2") if (root / part / name).is_dir()]
    assert found, name
    return found[0]


# (run, class, the user's line, words of the fix) from the README's table
PROVEN = [
    ("cg_cpu_input", "cudagraph_split_devicecopy_ops", "program.py:55", "on the device"),
    ("cg_cpu_inside", "cudagraph_split_cpu_ops", "program.py:72", "outside the compiled function"),
    ("cg_mutation", "cudagraph_skipped_mutated_inputs", "program.py:110", "module buffer"),
    ("cg_item", "host_sync", "program.py:134", "torch.clamp"),
    ("opt_step", "static_inputs_copied", None, "mark_static_address(p.grad)"),
    ("cg_newsizes", "cudagraph_per_size", None, "pad inputs"),
    ("cg_unbacked", "cudagraph_split_unbacked_binding_ops", "program2.py:88", "torch.where"),
    ("cg_cpu_whole", "cudagraph_skipped_cpu_device", "program2.py:126", "on the device"),
    ("cg_rerecord", "cudagraph_rerecorded", None, "p.copy_(new)"),
    ("autotune", "compile_time", None, "TORCHINDUCTOR_CACHE_DIR"),
]


@pytest.mark.parametrize(("run", "cause", "line", "fix"), PROVEN)
def test_each_class_on_its_bug_run_and_gone_on_its_fix(gpu_perf_runs, run, cause, line, fix):
    found = [p for p in _perf(_doc(_run(gpu_perf_runs, f"{run}.bug"))) if p["cause"] == cause]
    assert found, f"{run}.bug has no {cause}"
    problem = found[0]
    # (an input copied in costs the copy either way: informational, test_perf_from_graph.py)
    assert problem["severity"] == ("informational" if run == "cg_cpu_input" else COSTS_TIME)
    assert fix in problem["fix"]
    if line is not None:
        assert problem["location"].endswith(line)
    assert not [p for p in _perf(_doc(_run(gpu_perf_runs, f"{run}.fix"))) if p["cause"] == cause]


def test_perf_problems_leave_the_status(gpu_perf_runs):
    """As tlparse: a compile with only perf problems is ok."""
    doc = _doc(_run(gpu_perf_runs, "cg_cpu_inside.bug"))
    assert [c["status"] for c in doc["compiles"]] == ["ok"]
    assert doc["totals"]["perf"] == 1


def test_fallback_kernels_say_which_is_expected(gpu_perf_runs):
    found = {p["message"].rsplit(" ", 1)[-1]: p for p in _perf(_doc(_run(gpu_perf_runs, "fallback_ops.bug")))}
    attention = found["torch.ops.aten._scaled_dot_product_cudnn_attention.default"]
    assert attention["cause"] == "fallback_kernel_expected" and attention["severity"] == INFORMATIONAL
    median = found["torch.ops.aten.median.dim"]
    assert median["cause"] == "fallback_kernel" and median["severity"] == INFORMATIONAL
    assert "aten.median.dim" in median["why"]


def test_dynamic_shape_split_prints_no_unproven_fix(gpu_perf_runs):
    """cg_skip_dynamic: dynamic=False did not fix it (the README): not printed."""
    for mode in ("bug", "fix"):
        found = [p for p in _perf(_doc(_run(gpu_perf_runs, f"cg_skip_dynamic.{mode}")))
                 if p["cause"] == "cudagraph_split_dynamic_shape_ops"]
        assert found
        assert all("dynamic=False" not in p["fix"] and "no fix proven" in p["fix"] for p in found)


def test_a_split_says_when_none_of_the_graph_is_cuda_graphed(gpu_perf_runs):
    """cg_cpu_inside's graph is split in 2, one CUDA-graphed; cg_skip_dynamic's one partition is
    kept out whole: "splits" alone said neither."""
    (split,) = [p for p in _perf(_doc(_run(gpu_perf_runs, "cg_cpu_inside.bug")))
                if p["cause"] == "cudagraph_split_cpu_ops"]
    assert split["why"].endswith("(2 partitions, 1 not cudagraphable)"), split["why"]
    whole = [p for p in _perf(_doc(_run(gpu_perf_runs, "cg_skip_dynamic.bug")))
             if p["cause"] == "cudagraph_split_dynamic_shape_ops"]
    assert whole and all(p["why"].endswith("(1 partition, none of it CUDA-graphed)") for p in whole), whole


def test_default_mode_partitions_are_no_problem(gpu_perf_runs):
    """host_branch and log_in_loop ran without CUDA graphs: `0 cudagraphable` for every graph."""
    for run in ("host_branch.fix", "log_in_loop.fix"):
        assert not [p for p in _perf(_doc(_run(gpu_perf_runs, run))) if p["cause"].startswith("cudagraph")]


def test_text_alone_and_trace_alone_tell_what_each_can(gpu_perf_runs, tmp_path):
    """Partitions and hints are only in the text, a split's ops in the trace's post-grad graph too
    (tests/test_perf_from_graph.py); a whole-graph skip and a host sync are in the trace (its
    metrics, its unbacked symbols)."""
    inside = _run(gpu_perf_runs, "cg_cpu_inside.bug")
    for source in (inside / "torch_logs.txt", inside / "trace"):
        assert [(p["cause"], p["location"].rsplit("/", 1)[-1]) for p in _perf(_doc(source))] == [
            ("cudagraph_split_cpu_ops", "program.py:72")]
    item = _run(gpu_perf_runs, "cg_item.bug")
    assert [p["cause"] for p in _perf(_doc(item / "trace"))] == ["host_sync"]
    assert not _perf(_doc(item / "torch_logs.txt"))  # (the text has no user line for the symbol)
    whole = _run(gpu_perf_runs, "cg_cpu_whole.bug")
    for source in (whole / "trace", whole / "torch_logs.txt"):
        found = [p for p in _perf(_doc(source)) if p["cause"] == "cudagraph_skipped_cpu_device"]
        assert len(found) == 1 and found[0]["location"].endswith("program2.py:126")
    mutation = _run(gpu_perf_runs, "cg_mutation.bug")  # (its skip line names no compile id)
    found = _perf(_doc(mutation / "torch_logs.txt"))
    assert [(p["cause"], p["compile_id"]) for p in found] == [("cudagraph_skipped_mutated_inputs", "0/0")]


def test_report_lists_perf_costliest_first(gpu_perf_runs):
    code, out = run_cli("--report", str(_run(gpu_perf_runs, "cg_unbacked.bug")))
    assert code == 0
    section = out[out.index("\nPerf\n"):]
    costly, informational = section.index("(costs time)"), section.index("(informational)")
    assert costly < informational
    assert "fix: torch.where" in section
    code, markdown = run_cli("--report", "--markdown", str(_run(gpu_perf_runs, "cg_unbacked.bug")))
    part = markdown[markdown.index("## Perf problems"):]
    assert part.index("costs time") < part.index("informational")


def test_fail_on_perf(gpu_perf_runs):
    code, out = run_cli("--fail-on", "perf", str(_run(gpu_perf_runs, "cg_mutation.bug")))
    assert code == 1 and "cudagraph_skipped_mutated_inputs" in out
    code, _ = run_cli("--fail-on", "perf", str(_run(gpu_perf_runs, "cg_mutation.fix")))
    assert code == 0


def test_compare_tells_a_perf_problem_gone(gpu_perf_runs, tmp_path):
    before, after = _run(gpu_perf_runs, "cg_cpu_inside.bug"), _run(gpu_perf_runs, "cg_cpu_inside.fix")
    # (the two runs' programs are one file: the same place in both)
    shutil.copytree(before, tmp_path / "before")
    shutil.copytree(after, tmp_path / "after")
    doc = json_for("--compare", str(tmp_path / "before"), str(tmp_path / "after"))
    assert [p["cause"] for p in doc["gone"]] == ["cudagraph_split_cpu_ops"]
    assert doc["before"]["perf"] == 1 and doc["after"]["perf"] == 0


GPU_RUNS = {  # fixtures/gpu: the perf problems of each, by class
    "cnn_serve": {"cudagraph_split_cpu_ops": 3},
    "lm_decode": {"fallback_kernel_expected": 3},
    "moe": {},
    "fallback": {"fallback_kernel": 3},
    "loop_skip": {},
}


@pytest.mark.parametrize("run", sorted(GPU_RUNS))
def test_json_of_the_five_gpu_runs(run):
    found: dict[str, int] = {}
    for p in _perf(_doc(FIXTURES / "gpu" / run)):
        found[p["cause"]] = found.get(p["cause"], 0) + 1
        assert p["fix"] and p["why"] and p["severity"] in (COSTS_TIME, INFORMATIONAL)
    assert found == GPU_RUNS[run]
    # the trace alone tells the same splits (its post-grad graphs)
    splits = [p["cause"] for p in _perf(_doc(FIXTURES / "gpu" / run / "trace")) if p["cause"].startswith("cudagraph")]
    assert splits == [c for c, n in GPU_RUNS[run].items() if c.startswith("cudagraph") for _ in range(n)]


# ---- a test per rule ----------------------------------------------------------------------------

def _read(*records: list[str]) -> PerfEvidence:
    evidence = PerfEvidence()
    for lines in records:
        read_cudagraphs(evidence, lines)
    return evidence


def _causes(evidence: PerfEvidence, metrics=None, skip=None) -> list[str]:
    return [f.cause for f in perf_findings(evidence, metrics, skip)]


def test_an_op_kept_out_for_disabled_cudagraphs_is_no_problem():
    evidence = _read(["Created 1 graph partitions: 0 cudagraphable, 1 non-cudagraphable"],
                     [f"    op0: reason={DISABLED_REASON}, ir=ExternKernelOut, fx=aten.mm.default(a, b)"])
    assert _causes(evidence) == []


def test_an_op_takes_the_user_line_printed_after_it():
    evidence = _read(["Created 2 graph partitions: 1 cudagraphable, 1 non-cudagraphable"],
                     ["    op8: reason=cpu ops, ir=DeviceCopy, fx=prims.device_put.default(mean, cpu)"],
                     ['         File "/job/p.py", line 72, in score', '             c = c.to("cpu")'])
    (found,) = perf_findings(evidence, None, None)
    assert (found.cause, found.place, found.severity) == ("cudagraph_split_cpu_ops", "/job/p.py:72", COSTS_TIME)
    assert found.facts.code == 'c = c.to("cpu")'


def test_an_op_keeps_the_first_user_line_told_of_it():
    """A later stack record before the next op (a frame further out) does not move the op."""
    evidence = _read(["Created 2 graph partitions: 1 cudagraphable, 1 non-cudagraphable"],
                     ["    op8: reason=cpu ops, ir=DeviceCopy, fx=prims.device_put.default(mean, cpu)"],
                     ['         File "/job/p.py", line 72, in score', "             c = c.cpu()"],
                     ['         File "/job/p.py", line 90, in main', "             score(x)"])
    assert evidence.partitions[0].ops[0].place == "/job/p.py:72"


def test_a_skip_reason_is_said_once():
    evidence = _read(["skipping cudagraphs due to skipping cudagraphs due to cpu device (arg3_1). Found from : ",
                      '   File "/job/p.py", line 126, in scaled', "    return x * s.to(x.device)"])
    assert evidence.skips[0].reason == "cpu device (arg3_1)"
    # the trace's metrics tell the same skip: one problem
    assert _causes(evidence, skip="skipping cudagraphs due to cpu device (arg3_1). Found from : ") == \
        ["cudagraph_skipped_cpu_device"]


def test_every_re_recording_line_counts():
    line = "[0/0] Re-recording function=partition_0, reason=static input data pointer changed."
    evidence = _read([line, "input name: arg0_1. data pointer changed", line])
    assert evidence.rerecords == 2


def test_sizes_warning_counts_the_sizes():
    evidence = _read([("CUDAGraph supports dynamic shapes by recording a new graph for each distinct input size. "
                       "Recording too many CUDAGraphs may lead to extra overhead. We have observed 9 distinct sizes.")])
    assert evidence.sizes == 9 and _causes(evidence) == ["cudagraph_per_size"]


def test_hints_are_typed():
    assert perf_hint("Using FallbackKernel: torch.ops.aten.median.dim").subject == "aten.median.dim"
    assert perf.expected_fallback("aten._scaled_dot_product_efficient_attention.default")
    assert not perf.expected_fallback("aten.median.dim")
    grads = perf_hint("('Grad tensors [\"L[\\'self\\'].p.grad\"] will be copied during cudagraphs execution.',)")
    assert grads.kind == "static_inputs"
    assert perf_hint("Skip comprehensive padding on CPU").kind == "internal"
    evidence = PerfEvidence(hints=[perf_hint("Skip comprehensive padding on CPU")])
    assert _causes(evidence) == []


def test_a_host_sync_on_a_split_line_is_told_once():
    evidence = _read(["Created 2 graph partitions: 1 cudagraphable, 1 non-cudagraphable"],
                     ["    op2: reason=unbacked binding ops, ir=FallbackKernel, fx=aten.nonzero.default(gt)"],
                     ['  File "/job/p.py", line 88, in f', "    idx = torch.nonzero(y)"])
    evidence.host_syncs.append(perf.HostSync("u0", "/job/p.py", 88, "idx = torch.nonzero(y)"))
    assert _causes(evidence) == ["cudagraph_split_unbacked_binding_ops"]
    evidence.host_syncs.append(perf.HostSync("zuf0", "/job/p.py", 90, "peak = y.max().item()"))
    assert _causes(evidence) == ["cudagraph_split_unbacked_binding_ops", "host_sync"]


def test_compile_time_hotspot_from_the_threshold():
    long = {"entire_frame_compile_time_s": COMPILE_TIME_HOTSPOT_S, "inductor_fx_local_cache_miss_count": 1,
            "compile_time_autotune_time_us": 5_000_000}
    assert _causes(PerfEvidence(), long) == ["compile_time"]
    (found,) = perf_findings(None, long, None)
    assert "autotuning 5.0 s (50%)" in found.why and "cache missed" in found.why
    short = {**long, "entire_frame_compile_time_s": COMPILE_TIME_HOTSPOT_S - 0.1}
    assert _causes(PerfEvidence(), short) == []


def test_a_long_compile_is_a_hotspot_only_where_autotuning_took_its_share():
    """A first compile's C++ or Triton builds on a cold cache are what any first compile costs:
    no hotspot however long, unless autotuning (what the user chose) took its share."""
    cold = {"entire_frame_compile_time_s": 30.0, "inductor_fx_local_cache_miss_count": 1,
            "triton_compile_time_us": 25_000_000}
    assert _causes(PerfEvidence(), cold) == []
    tuned = {**cold, "compile_time_autotune_time_us": int(30.0 * perf.AUTOTUNE_SHARE_NAMED * 1e6)}
    assert _causes(PerfEvidence(), tuned) == ["compile_time"]
    less = {**cold, "compile_time_autotune_time_us": int(30.0 * perf.AUTOTUNE_SHARE_NAMED * 1e6) - 1}
    assert _causes(PerfEvidence(), less) == []


def test_first_compiles_on_the_cpu_are_no_hotspot_and_autotuning_ones_are(gpu_perf_runs):
    """The corpus's CPU runs compiled 10-24 s each, none of it autotuning: no compile_time; the
    GPU runs' autotuned compiles keep theirs (serve_ma 36.5 s, 97%; autotune 20.4 s, 43%)."""
    for run in ("model", "recompiles", "dynamic_shapes", "distributed"):
        assert not [p for p in _perf(_doc(FIXTURES / "corpus" / run)) if p["cause"] == "compile_time"], run
    for run in (gpu_perf_runs / "gpu_perf3" / "serve_ma", _run(gpu_perf_runs, "autotune.bug")):
        (found,) = [p for p in _perf(_doc(run / "trace")) if p["cause"] == "compile_time"]
        assert "autotuning" in found["why"], found


def test_a_line_that_only_carries_an_unbacked_size_on_is_no_sync():
    evidence = PerfEvidence(host_syncs=[perf.HostSync("u1", "/job/p.py", 47, "n = idx.shape[0]")])
    assert _causes(evidence) == []
    evidence.host_syncs.append(perf.HostSync("u0", "/job/p.py", 46, "idx = torch.nonzero(x)"))
    assert _causes(evidence) == ["host_sync"]


def test_a_skip_is_read_with_or_without_the_stack_torch_adds():
    """torch says `skipping cudagraphs due to {reason}` and adds ". Found from :" and a stack for
    some reasons only: a skip for multiple devices (no stack) was not read at all."""
    from tlview.domain.perf import PerfEvidence, read_cudagraphs

    evidence = PerfEvidence()
    read_cudagraphs(evidence, ["skipping cudagraphs due to multiple devices: cuda:0, cpu"])
    read_cudagraphs(evidence, ["skipping cudagraphs due to mutated inputs (1 instances). Found from : ",
                               '   File "/job/train.py", line 7, in step', "    x.add_(1)"])
    assert [skip.reason for skip in evidence.skips] == ["multiple devices: cuda:0, cpu",
                                                       "mutated inputs (1 instances)"]
    assert evidence.skips[1].place == "/job/train.py:7"
