"""Five real GPU runs (torch 2.11, CUDA, an H200: fixtures/gpu, copied from shared/gpu) against their
truths, established from the programs, the logs and tlparse by hand (fixtures/gpu/NAME/truth.json,
with the fixes re-run on the CPU where the CPU can show them: fixtures/gpu/cpu_verify). tlview was
not fitted to them: their shapes (a CNN served under reduce-overhead, a KV cache that grows, an MoE
router, a .tolist() in a loop over layers) are unlike the CPU fixtures'."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import json_for

GPU = Path(__file__).resolve().parent.parent / "fixtures" / "gpu"
RUNS = ["cnn_serve", "lm_decode", "moe", "loop_skip", "fallback"]
TOTALS = {"recompiles": "recompiles", "graph_breaks": "graph_breaks", "restarts": "restarts",
          "failures": "errors", "frames_skipped": "skipped_frames"}
# The class each of the truth's problems has, by the guard, registry entry or exception torch wrote.
CLASSES = {
    ("cnn_serve", "0/1"): {"recompile": "size_mismatch"},
    ("cnn_serve", "0/2"): {"recompile": "stride_mismatch"},
    ("lm_decode", "0/0"): {"graph_break": "item_or_tolist"},
    ("lm_decode", "0/1"): {"recompile": "size_mismatch", "graph_break": "item_or_tolist"},
    ("lm_decode", "0/2"): {"recompile": "size_mismatch", "graph_break": "item_or_tolist"},
    ("lm_decode", "1/1"): {"recompile": "size_mismatch"},
    ("moe", "0/0"): {"graph_break": "dynamic_output_shape"},
    ("moe", "1/0"): {"graph_break": "dynamic_output_shape", "frame_skipped": "frame_skipped"},
    ("moe", "0/1"): {"recompile": "size_mismatch", "graph_break": "dynamic_output_shape"},
    ("loop_skip", "0/0"): {"graph_break": "item_or_tolist", "frame_skipped": "frame_skipped"},
}


def _truth(run: str) -> dict:
    return json.loads((GPU / run / "truth.json").read_text())


@pytest.mark.parametrize("source", ["trace", "torch_logs.txt"])
@pytest.mark.parametrize("run", RUNS)
def test_counts(run, source):
    totals = json_for(GPU / run / source)["totals"]
    for truth_key, key in TOTALS.items():
        assert totals[key] == _truth(run)["counts"][truth_key], (run, source, key)


@pytest.mark.parametrize("run", RUNS)
def test_each_problem_classed_at_its_line(run):
    doc = json_for(GPU / run / "trace")
    found = {(c["id"], d["kind"]): d for c in doc["compiles"] for d in c["diagnosis"]}
    for problem in _truth(run)["problems"]:
        if problem["kind"] == "restart":  # (each follows its graph break: no fix of its own)
            continue
        diagnosis = found[(problem["compile_id"], problem["kind"])]
        assert diagnosis["cause"] == CLASSES[(run, problem["compile_id"])][problem["kind"]]
        if (run, problem["compile_id"]) != ("lm_decode", "1/1"):  # (below)
            assert diagnosis["place"] == f"/home/user/job/gpu_dev_jobs.py:{problem['user_line']}", problem
    # (perf problems are not the truth's: test_perf.py checks them, the trace's splits included)
    assert len([k for k in found if k[1] not in ("restart", "perf")]) == len(
        [p for p in _truth(run)["problems"] if p["kind"] != "restart"])


def test_the_resume_frame_recompile_is_placed_in_the_user_file():
    # lm_decode's 1/1 (the code after the .item() break) recompiled on the cache, which its graph
    # never uses: no guard or graph line names it; tlview gives the user's call (line 59), the truth
    # the line that returns it (53). Both are the user's own file, neither the decorator.
    doc = json_for(GPU / "lm_decode" / "trace")
    place = next(d["place"] for c in doc["compiles"] if c["id"] == "1/1" for d in c["diagnosis"])
    assert place.startswith("/home/user/job/gpu_dev_jobs.py:") and not place.endswith(":45")


def test_a_frame_run_eagerly_leads_with_the_fix_of_its_break():
    for run, line in (("loop_skip", 100), ("moe", 73)):
        doc = json_for(GPU / run / "trace")
        skipped = [d for c in doc["compiles"] for d in c["diagnosis"] if d["kind"] == "frame_skipped"]
        assert len(skipped) == 1 and f"line {line}" in skipped[0]["fix"] and "compiles whole" in skipped[0]["fix"]
        assert doc["totals"]["errors"] == 0  # no exception reached the program


def test_the_fixes_that_were_verified():
    fixes = {(run, c["id"], d["kind"]): d["fix"] for run in ("cnn_serve", "lm_decode", "loop_skip")
             for c in json_for(GPU / run / "trace")["compiles"] for d in c["diagnosis"]}
    assert "mark_dynamic(images, 0)" in fixes[("cnn_serve", "0/1", "recompile")]
    assert ".contiguous()" in fixes[("cnn_serve", "0/2", "recompile")]
    # a cache that grows from length 0: sizes 0 and 1 are specialized; mark_dynamic did not help
    assert "0/1 specialization" in fixes[("lm_decode", "0/1", "recompile")]
    assert "preallocated buffer" in fixes[("lm_decode", "0/1", "recompile")]
    # .tolist() of a float tensor: capture_scalar_outputs did not help (cpu_verify)
    assert "capture_scalar_outputs" not in fixes[("loop_skip", "0/0", "graph_break")]


def test_x_goes_to_a_frame_run_eagerly():
    """`x` (next error) stops at a compile whose frame runs eagerly: its status is `✗ error`."""
    from tlview.index.indexing import open_index
    from tlview.views.tree import JUMPS

    index = open_index(str(GPU / "loop_skip" / "trace"))
    try:
        node = next(n for n in index.iter_nodes() if n.id == "0/0")
        entry = SimpleNamespace(shows=lambda kind: node.compile.verdict.has(kind))
        assert JUMPS["error"](entry) and not JUMPS["recompile"](entry)
    finally:
        index.close()
