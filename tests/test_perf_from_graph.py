"""A CUDA graph split read from a trace alone (domain/perf.py graph_host_ops, cudagraphs_said):
the post-grad graph's device annotations and `# File:` lines, and the FX cache key's word on
CUDA graphs, give the classes the `cudagraphs` text gives for the same ops. Small graphs written
here, shaped unlike the fixtures' programs, test each rule; the real runs of fixtures/gpu_perf
compare the trace with the text."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import json_for

from tlview.domain.perf import PartitionOp, Partitions, PerfEvidence, cudagraphs_said, graph_host_ops, perf_findings

# A decoder step written for this test: a CUDA graph with a CPU tensor in, a host copy out, a
# runtime assert and a data-dependent size, each under a `# File:` line (one of them torch's).
GRAPH = '''class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "bf16[4, 32][32, 1]cuda:1", arg1_1: "i32[4][1]cpu"):
        # File: /srv/decode.py:12 in step, code: lengths = lens.to(x.device)
        device_put: "i32[4][1]cuda:1" = torch.ops.prims.device_put.default(arg1_1, device(type='cuda', index=1))
        # File: /srv/decode.py:13 in step, code: flat = lens.view(-1)
        view: "i32[4][1]cpu" = torch.ops.aten.view.default(arg1_1, [4])
        # File: /usr/lib/python3/site-packages/torch/nn/functional.py:2100 in softmax, code: ret = input.softmax(dim)
        amax: "bf16[4, 1][1, 1]cuda:1" = torch.ops.aten.amax.default(arg0_1, [1], True)
        mul: "i32[4][1]cpu" = torch.ops.aten.mul.Tensor(view, 2)
        # File: /srv/decode.py:15 in step, code: keep = torch.nonzero(x[:, 0] > 0)
        gt: "b8[4][1]cuda:1" = torch.ops.aten.gt.Scalar(amax, 0)
        nonzero: "i64[u3, 1][1, u3]cuda:1" = torch.ops.aten.nonzero.default(gt);  gt = None
        ge: "Sym(u3 >= 0)" = sym_size_int >= 0
        _assert_scalar = torch.ops.aten._assert_scalar.default(ge, "Runtime assertion failed");  ge = None
        clone: "i64[u3, 1][1, u3]cuda:1" = torch.ops.aten.clone.default(nonzero)
        # File: /srv/decode.py:17 in step, code: stats.append(amax.float().cpu())
        to_f32: "f32[4, 1][1, 1]cuda:1" = torch.ops.prims.to_f32.default(amax, torch.float32)
        device_put_1: "f32[4, 1][1, 1]cpu" = torch.ops.prims.device_put.default(to_f32, device(type='cpu'))
        # No stacktrace found for following nodes
        sum_1: "f32[][]cpu" = torch.ops.aten.sum.default(device_put_1)
        return (device_put, clone, device_put_1, sum_1)
'''


def test_each_op_torch_keeps_out_is_read_with_its_reason_and_the_users_line():
    found = [(op.name, op.reason, op.ir, op.place, op.code) for op in graph_host_ops(GRAPH)]
    assert found == [
        ("device_put", "DeviceCopy ops", "DeviceCopy", "/srv/decode.py:12", "lengths = lens.to(x.device)"),
        ("mul", "cpu ops", "", None, None),  # (under a line of torch's: not the user's)
        ("nonzero", "unbacked binding ops", "", "/srv/decode.py:15", "keep = torch.nonzero(x[:, 0] > 0)"),
        ("_assert_scalar", "cpu ops", "AssertScalar", "/srv/decode.py:15", "keep = torch.nonzero(x[:, 0] > 0)"),
        ("device_put_1", "cpu ops", "DeviceCopy", "/srv/decode.py:17", "stats.append(amax.float().cpu())"),
        ("sum_1", "cpu ops", "", None, None),
    ]
    # the args as torch's cudagraphs log writes them, so one rule (and one fix) reads both
    assert [op.fx for op in graph_host_ops(GRAPH)][::4] == ["prims.device_put.default(arg1_1, cuda:1)",
                                                           "prims.device_put.default(to_f32, cpu)"]


def test_a_graph_all_on_the_cpu_has_nothing_to_keep_out():
    cpu = GRAPH.replace("cuda:1", "cpu").replace("device(type='cuda', index=1)", "device(type='cpu')")
    assert "cuda" not in cpu and graph_host_ops(cpu) == []
    # a graph whose only `cuda` is in a comment is no CUDA graph either
    assert graph_host_ops(cpu.replace("code: lengths", "code: cuda_lengths")) == []


def test_cuda_graphs_on_is_read_from_the_fx_cache_key():
    assert cudagraphs_said('"[x] fx_kwargs[cudagraphs]: BoxedBool(value=True)", "[y] ..."') is True
    assert cudagraphs_said('"[x] fx_kwargs[cudagraphs]: BoxedBool(value=False)"') is False
    assert cudagraphs_said('"[z] inductor_config[triton.cudagraphs]: True"') is True
    assert cudagraphs_said('{"cache_status_detailed": "bypass", "reason": "unsupported"}') is None


def _causes(evidence: PerfEvidence, on: bool | None, skip: str | None = None) -> list[tuple[str, str | None]]:
    return [(f.cause, f.place) for f in perf_findings(evidence, None, skip, cudagraphs_on=lambda: on)]


def test_the_graphs_ops_are_the_texts_classes_only_where_cuda_graphs_were_on():
    evidence = PerfEvidence(graph_ops=graph_host_ops(GRAPH))
    assert _causes(evidence, True) == [
        ("cudagraph_split_devicecopy_ops", "/srv/decode.py:12"),
        ("cudagraph_split_cpu_ops", None),
        ("cudagraph_split_unbacked_binding_ops", "/srv/decode.py:15"),
        ("cudagraph_split_cpu_ops", "/srv/decode.py:15"),
        ("cudagraph_split_cpu_ops", "/srv/decode.py:17"),
    ]
    assert _causes(evidence, False) == [] and _causes(evidence, None) == []
    # a whole graph run without CUDA graphs is its skip, not a split
    assert [c for c, _ in _causes(evidence, True, "skipping cudagraphs due to cpu device (arg1_1)")] == [
        "cudagraph_skipped_cpu_device"]
    # torch's own partitioning, where the text tells it, wins
    told = Partitions(2, 1, [PartitionOp("op3", "cpu ops", "DeviceCopy", "prims.device_put.default(a, cpu)",
                                         "/srv/decode.py:17")])
    evidence.partitions.append(told)
    assert _causes(evidence, True) == [("cudagraph_split_cpu_ops", "/srv/decode.py:17")]


def _splits(source: Path) -> list[tuple[str, str, str]]:
    doc = json_for(source)
    return sorted({(c["id"], p["cause"], (p["location"] or "").rsplit("/", 1)[-1])
                   for c in doc["compiles"] for p in c["verdict"]
                   if p["kind"] == "perf" and p["cause"].startswith("cudagraph_split_")})


@pytest.mark.parametrize("run", ["gpu_perf/cg_cpu_input.bug", "gpu_perf/cg_cpu_inside.bug",
                                 "gpu_perf2/cg_unbacked.bug", "gpu_perf3/train_ro", "gpu_perf4/host_noise.bug"])
def test_the_trace_alone_tells_the_split_the_text_tells(gpu_perf_runs, run):
    """The same classes from the trace as from the text, for the first compile that split. The
    text tells a partitioning only where Inductor ran (train_ro's 2/1-2/7 hit the FX cache and
    logged none), the trace each compile's graph; the text names a runtime assert's line at the
    function (program2.py:83), the graph at the line that made it (88)."""
    text, trace = _splits(gpu_perf_runs / run / "torch_logs.txt"), _splits(gpu_perf_runs / run / "trace")
    first = trace[0][0]
    assert [s[1] for s in trace if s[0] == first] == [s[1] for s in text if s[0] == first]
    assert trace[-1][2] == text[-1][2]  # (the last class's line: the copy or the nonzero)


@pytest.mark.parametrize("run", ["gpu_perf/cg_cpu_input.fix", "gpu_perf/cg_cpu_inside.fix", "gpu_perf2/cg_unbacked.fix",
                                 "gpu_perf/fallback_ops.bug", "gpu_perf2/cg_cpu_whole.bug",
                                 "gpu_perf4/host_noise.fix", "gpu_perf4/bool_mask.bug"])
def test_no_split_from_the_trace_where_the_text_has_none(gpu_perf_runs, run):
    """The fixed runs; a default-mode run (CUDA graphs off); a graph skipped whole; a boolean-mask
    assignment whose 0-dim host constant Inductor writes into its kernel (held out, round 2)."""
    assert _splits(gpu_perf_runs / run / "trace") == _splits(gpu_perf_runs / run / "torch_logs.txt") == []


CONSTANT = '''class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f16[8, 16][16, 1]cuda:0"):
        # File: /srv/clip.py:4 in clip, code: h[h < 0] = 0
        lt: "b8[8, 16][16, 1]cuda:0" = torch.ops.aten.lt.Scalar(arg0_1, 0)
        full_default: "f16[][]cpu" = torch.ops.aten.full.default([], 0.0, dtype = torch.float16, \
device = device(type='cpu'), pin_memory = False)
        where: "f16[8, 16][16, 1]cuda:0" = torch.ops.aten.where.self(lt, full_default, arg0_1)
        # File: /srv/clip.py:5 in clip, code: peak = h.amax().cpu() * 2
        amax: "f16[][]cuda:0" = torch.ops.aten.amax.default(where)
        device_put: "f16[][]cpu" = torch.ops.prims.device_put.default(amax, device(type='cpu'))
        mul: "f16[][]cpu" = torch.ops.aten.mul.Tensor(device_put, 2)
        return (where, mul)
'''


def test_a_host_scalar_made_of_constants_is_no_op_kept_out_but_one_made_of_a_tensor_is():
    found = [(op.name, op.reason) for op in graph_host_ops(CONSTANT)]
    assert found == [("device_put", "cpu ops"), ("mul", "cpu ops")]


def test_a_tensor_made_on_the_host_and_copied_in_is_one_problem_at_the_copy(gpu_perf_runs):
    """host_noise (held out, H200): torch.rand(shape).to(x.device) inside a reduce-overhead
    function; the fix made it with device=x.device: 0.149 -> 0.093 ms a call, no split."""
    for source in ("torch_logs.txt", "trace"):
        doc = json_for(gpu_perf_runs / "gpu_perf4" / "host_noise.bug" / source)
        perf = [p for c in doc["compiles"] for p in c["verdict"] if p["kind"] == "perf"]
        assert [(p["cause"], p["location"].rsplit("/", 1)[-1]) for p in perf] == \
            [("cudagraph_split_devicecopy_ops", "program4.py:90")], (source, perf)
        assert "made on the host" in perf[0]["why"] and "device=x.device" in perf[0]["fix"]


def test_an_input_copied_in_is_informational_for_the_copy_is_paid_either_way(gpu_perf_runs):
    """pinned_copy (held out, round 3, H200): a pinned batch copied to the GPU inside a
    reduce-overhead step; copied before the call, the split went and the time stayed (0.100 ->
    0.115 ms). It is said, with what moving it buys, and is no run's worst problem."""
    for source in ("torch_logs.txt", "trace"):
        doc = json_for(gpu_perf_runs / "gpu_perf5" / "pinned_copy.bug" / source)
        perf = [p for c in doc["compiles"] for p in c["verdict"] if p["kind"] == "perf"]
        assert [(p["cause"], p["severity"]) for p in perf] == [("cudagraph_split_devicecopy_ops", "informational")]
        assert "no time was gained" in perf[0]["fix"]
        assert doc["headline"].startswith("no problems"), doc["headline"]
