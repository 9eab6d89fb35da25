"""Diagnosis classes, rank divergence, costs and the recompile diff, on real traces."""

from __future__ import annotations

import shutil

import pytest
from conftest import CORPUS, GENERATED, PEER, json_for

from tlview.diagnose.diff import describe_change, recompile_diff
from tlview.diagnose.ranks import divergence
from tlview.index.indexing import open_index


def _causes(doc, cid, kind, rank=None):
    entry = next(c for c in doc["compiles"] if c["id"] == cid and c["rank"] == rank)
    return [d["cause"] for d in entry["diagnosis"] if d["kind"] == kind]


def test_graph_break_classes():
    doc = json_for(CORPUS / "graph_breaks" / "trace")
    assert _causes(doc, "0/0", "graph_break") == ["print_or_logging"]          # print
    assert _causes(doc, "1/0", "graph_break") == ["data_dependent_branch"]     # if h.sum() > 0
    assert _causes(doc, "2/0", "graph_break") == ["item_or_tolist"]            # .item()
    assert _causes(doc, "3/0", "graph_break") == ["item_or_tolist"]            # .tolist()
    assert _causes(doc, "4/0", "graph_break") == ["skipped_or_c_function"]     # zlib.crc32
    assert _causes(doc, "5/0", "graph_break") == ["unsupported_construct"]     # next(generator)
    gen = json_for(GENERATED / "failures" / "trace")
    assert _causes(gen, "2/0", "graph_break") == ["unsupported_construct"]     # globals()
    assert _causes(gen, "3/0", "graph_break") == ["dynamic_output_shape"]      # nonzero


def test_recompile_classes():
    doc = json_for(CORPUS / "recompiles" / "trace")
    assert _causes(doc, "0/1", "recompile") == ["python_value"]                # n == 2
    assert _causes(doc, "1/1", "recompile") == ["python_value"]                # s == 0.5
    assert _causes(doc, "2/1", "recompile") == ["requires_grad_mismatch"]
    assert _causes(doc, "2/2", "recompile") == ["dtype_mismatch"]
    assert _causes(doc, "3/1", "recompile") == ["size_mismatch"]
    # the refused compile: one recompile (its guard's cause) and one failure (the limit)
    assert _causes(doc, "3/4", "recompile") == ["size_mismatch"]
    assert _causes(doc, "3/4", "failure") == ["recompile_limit"]
    limit = next(d for c in doc["compiles"] if c["id"] == "3/4" for d in c["diagnosis"]
                 if d["cause"] == "recompile_limit" and d["kind"] == "failure")
    assert "compile #5" in limit["why"] and "size_mismatch" in limit["why"]
    dyn = json_for(CORPUS / "dynamic_shapes" / "trace")
    assert _causes(dyn, "2/1", "recompile") == ["shape_guard"]                 # 2 <= x.size()[0] <= 9
    assert _causes(dyn, "4/1", "recompile") == ["size_mismatch"]
    assert _causes(dyn, "1/0", "failure") == ["constraint_violation"]
    causes = json_for(GENERATED / "recompile_causes" / "trace")
    assert _causes(causes, "0/1", "recompile") == ["global_state"]             # grad mode
    assert _causes(causes, "1/1", "recompile") == ["stride_mismatch"]
    assert _causes(causes, "2/1", "recompile") == ["function_changed"]         # another function
    assert _causes(causes, "3/1", "recompile") == ["type_changed"]             # another class (TYPE_MATCH)


def test_failure_classes():
    doc = json_for(GENERATED / "failures" / "trace")
    backend = next(d for c in doc["compiles"] if c["id"] == "0/0" for d in c["diagnosis"])
    assert backend["cause"] == "backend_compiler_failed"
    assert "TORCHDYNAMO_REPRO_AFTER=aot" in backend["fix"] and "TORCHDYNAMO_REPRO_LEVEL=2" in backend["fix"]
    assert _causes(doc, "5/0", "failure") == ["unsupported"]


@pytest.mark.parametrize("scenario", ["graph_breaks", "recompiles", "dynamic_shapes", "model", "distributed"])
def test_every_recompile_and_break_is_diagnosed(scenario):
    doc = json_for(CORPUS / scenario / "trace")
    for entry in doc["compiles"]:
        kinds = [d["kind"] for d in entry["diagnosis"]]
        assert kinds.count("graph_break") == len(entry["graph_breaks"])
        if entry["recompile_reasons"] and "_" not in entry["id"]:  # a compile's, at its first attempt
            assert "recompile" in kinds
        for d in entry["diagnosis"]:
            assert d["cause"] != "other" and d["fix"]


def test_distributed_divergence_names_rank_1_extra_compile_ids():
    doc = json_for(CORPUS / "distributed" / "trace")
    only = {(e["id"], tuple(e["ranks"])) for e in doc["divergence"]["compile_ids"]}
    assert {("0/1", (1,)), ("4/1", (1,))} <= only
    assert doc["divergence"]["recompile_counts"]
    assert any("[4/1] only on rank 1 (not on " in line for line in doc["divergence_summary"])


def test_peer_divergences_as_tlparse_finds_them(tmp_path):
    schedule = divergence(open_index(str(PEER / "inputs" / "multi_rank_schedule")))
    [entry] = schedule["collective_schedules"]
    assert entry["id"] == "0/0"
    # collectives, not their waits: 6 and 4 ops with each collective's wait_tensor
    assert {tuple(g["ranks"]): g["ops"] for g in entry["groups"]} == {(0, 2): 3, (1,): 2}
    logs = divergence(open_index(str(PEER / "inputs" / "multi_rank_logs")))
    assert logs["compile_ids"] and logs["cache_patterns"]
    # one log copied as two ranks: nothing diverges
    twins = tmp_path / "twins"
    twins.mkdir()
    for rank in (0, 1):
        shutil.copy(PEER / "inputs" / "simple.log", twins / f"dedicated_log_torch_trace_rank_{rank}.log")
    same = divergence(open_index(str(twins)))
    assert same["ranks"] == [0, 1]
    assert not any(same[k] for k in ("compile_ids", "recompile_counts", "cache_patterns", "collective_schedules"))
    # cache_hit_miss.log beside simple.log: the cache patterns differ
    pair = tmp_path / "pair"
    pair.mkdir()
    shutil.copy(PEER / "inputs" / "simple.log", pair / "dedicated_log_torch_trace_rank_0.log")
    shutil.copy(PEER / "inputs" / "cache_hit_miss.log", pair / "dedicated_log_torch_trace_rank_1.log")
    assert divergence(open_index(str(pair)))["cache_patterns"]


def test_recompile_diff_3_1_against_3_0():
    index = open_index(str(CORPUS / "recompiles" / "trace"))
    diff = recompile_diff(index, index.node(None, "3/1"))
    assert diff.against.id == "3/0"
    size = next(c for c in diff.changes if c.field == "size")
    assert (size.source, size.dims, size.before[1], size.after[1]) == ("L['x']", [1], 8, 10)
    assert any("size=[3, 10]" in line and line.startswith("+") for line in diff.guard_diff)
    assert any(line.startswith("-    def forward") for line in diff.graph_diff)
    scalar = recompile_diff(index, index.node(None, "0/1"))
    assert [describe_change(c) for c in scalar.changes] == ["L['n'] value: 2 -> 3"]


def test_run_summary_and_timeline():
    doc = json_for(CORPUS / "recompiles" / "trace")
    run = doc["run_summary"]
    top = run["recompiling_frames"][0]
    assert top["function"] == "pooled" and top["recompiles"] == 4 and top["causes"] == {
        "size_mismatch": 4}
    assert run["total_compile_seconds"] > 0
    assert doc["timeline"][0]["total"] >= doc["timeline"][-1]["total"]
    assert {"dynamo", "aot", "inductor", "codegen"} <= set(doc["timeline"][0])


def test_the_run_pane_s_loops_let_its_thread_stop_every_step(monkeypatch):
    """The Run pane builds its view in a thread that stops once the pane is left and steps back
    for keys. At 10,000 compile ids its loops over the compiles held the interpreter: the summary
    (each fix's config read from disk) 0.5 s, the timelines, the stack trie and the caches
    60-200 ms each, and a key pressed on another pane waited for them. Each asks `between()`
    every STEP items, and gives what it gives without; the timeline is built once."""
    from tlview.diagnose import caches, costs, stack_trie, stepping, timeline
    from tlview.index.indexing import open_index
    from tlview.ui import run_pane

    index = open_index(str(CORPUS / "recompiles"))
    nodes = len(list(index.iter_nodes()))
    assert nodes >= 6  # (loops of several steps)
    monkeypatch.setattr(stepping, "STEP", 2)
    rows = costs.timeline(index)
    loops = {"timeline": costs.timeline,
             "run summary": lambda index, rank, between: costs.run_summary(index, rank, rows, between),
             "compile timeline": timeline.compile_timeline,
             "stack trie": lambda *a: stack_trie.trie_as_dict(stack_trie.stack_trie(*a)),
             "caches": caches.cache_summary}
    for name, loop in loops.items():
        asked = []
        assert loop(index, ..., lambda: asked.append(1)) == loop(index, ..., None), name
        assert len(asked) >= 2, name
    asked, built = [], []
    real_timeline = run_pane.timeline
    monkeypatch.setattr(run_pane, "timeline", lambda *a: built.append(1) or real_timeline(*a))
    monkeypatch.setattr(costs, "timeline", lambda *a: built.append(1) or real_timeline(*a))

    def leave_at(count):
        def go_on():
            asked.append(1)
            if len(asked) == count:
                raise run_pane.PaneLeft
        return go_on

    run_pane.run_view(index, ..., go_on=leave_at(0))  # never left: how often it asks
    assert built == [1]
    whole = len(asked)
    for count in (1, whole // 2, whole):
        asked.clear()
        with pytest.raises(run_pane.PaneLeft):
            run_pane.run_view(index, ..., go_on=leave_at(count))
        assert len(asked) == count


def test_recompile_cost_is_its_own_and_ranks_the_frames():
    run = json_for(CORPUS / "recompiles" / "trace")["run_summary"]
    frames = run["recompiling_frames"]
    assert [f["recompile_seconds"] for f in frames] == sorted((f["recompile_seconds"] for f in frames), reverse=True)
    for frame in frames:
        assert 0 < frame["recompile_seconds"] < frame["seconds"]  # the first compile is not a recompile's cost


def test_divergence_tells_one_compile_id_of_different_code():
    div = json_for(GENERATED / "multi_rank4" / "trace")["divergence"]
    entry = next(e for e in div["functions"] if e["id"] == "2/0")
    assert {g["value"]: g["ranks"] for g in entry["groups"]} == {
        "torch_dynamo_resume_in_report_at_32": [2], "extra_stats": [3]}
