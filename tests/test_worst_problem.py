"""The run's worst problem (diagnose/worst.py), one ranking: the job's verdict > a frame skipped >
a failure > the costliest recompile, graph break or perf problem that costs time; its headline
on the explorer's first screen, the cursor on it with its pane shown (never after the user
moved), and near the top of --report, markdown and --json (#48)."""

from __future__ import annotations

import pytest
from conftest import CORPUS, FIXTURES, GENERATED, json_for, press, read_into, ready, run_cli, until

from tlview.diagnose.costs import run_summary
from tlview.diagnose.hang import job_verdict
from tlview.diagnose.ranks import divergence
from tlview.diagnose.worst import worst_problem
from tlview.index.index import Index
from tlview.report.markdown import prose
from tlview.ui.app import TlviewApp
from tlview.ui.headline import Headline
from tlview.ui.messages import JobDiagnosed

pytestmark = pytest.mark.first_screen  # (conftest.py)

SKIPPED = FIXTURES / "fixes" / "frame_skipped"
CLEAN = GENERATED / "export"
CLEAN_LOG = FIXTURES / "peer" / "tlparse-tests" / "inputs" / "simple.log"


def _index(*paths) -> Index:
    index = Index()
    read_into(index, *paths)
    return index


def _worst(path):
    index = _index(path)
    return worst_problem(index, job_verdict(divergence(index)))


def test_the_ranking_puts_a_hang_then_a_skipped_frame_then_a_failure_first():
    died = _worst(GENERATED / "dist215")  # a rank raised: the job's verdict, whatever else
    assert died.kind == "job" and died.headline.startswith("died: rank 1: RuntimeError")
    skipped = _worst(SKIPPED)  # beside a recompile and a graph break
    assert skipped.kind == "frame_skipped" and skipped.compile_id == "0/0"
    assert skipped.headline.startswith("frame skipped [0/0]: the whole frame runs eagerly"), skipped.headline
    failed = _worst(CORPUS / "recompiles")  # 8 recompiles, and the recompile limit refused one
    assert failed.kind == "failure" and failed.compile_id == "3/4"
    assert failed.headline.startswith("failure [3/4]: compile #5 of this frame was refused"), failed.headline
    # two processes: the failed one read first, the skipped frame's after: the kind decides
    both = worst_problem(_index(CORPUS / "recompiles", SKIPPED), None)
    assert (both.kind, both.compile_id) == ("frame_skipped", "0/0")
    failures = _worst(GENERATED / "failures")
    assert failures.headline.startswith("3 failures, first [0/0]: the backend compiler raised"), failures.headline


def test_a_process_that_died_of_a_compile_failure_opens_on_the_failure(gpu_perf_runs):
    """One process whose exception is the compile's failure (BackendCompilerFailed): the failure
    says which compile and what to do; a death of its own (CUDA graphs' overwritten output,
    held-out H200 run) stays the job's verdict."""
    crashed = _worst(GENERATED / "crash")
    assert (crashed.kind, crashed.compile_id) == ("failure", "3/0")
    assert crashed.headline.endswith("; the program died of it") and "backend compiler raised" in crashed.headline
    overwritten = _worst(gpu_perf_runs / "gpu_perf4" / "overwrite.bug" / "torch_logs.txt")
    assert overwritten.kind == "job" and "accessing tensor output of CUDAGraphs" in overwritten.headline


def test_the_costliest_recompile_or_break_and_a_clean_run():
    recompiled = _worst(CORPUS / "model")
    assert (recompiled.kind, recompiled.compile_id) == ("recompile", "0/1")
    assert recompiled.headline == ("1 recompile of forward at model.py:55: input 'idx' changed size at dim 1: "
                                   "16 -> 24 (first [0/1])")
    broke = _worst(CORPUS / "graph_breaks")  # 7 breaks cost more compile time than its 2 recompiles
    assert (broke.kind, broke.compile_id) == ("graph_break", "3/0"), broke
    assert broke.headline.startswith("2 graph breaks: a tensor turned into a Python number"), broke.headline
    clean = _worst(CLEAN)
    assert (clean.kind, clean.compile_id, clean.headline) == (None, None, "no problems: 2 compile ids, all ok")


def test_cost_weighs_compile_seconds_then_counts_and_never_a_break_by_design():
    index = _index(CORPUS / "graph_breaks")
    costs = run_summary(index)
    frame, broke = costs["recompiling_frames"][0], costs["graph_breaks"][0]
    assert frame["recompile_seconds"] < broke["seconds"]  # (the run's own figures: the break costs more)
    costly_frame = {**frame, "recompile_seconds": broke["seconds"] + 1}
    said = worst_problem(index, None, costs={**costs, "recompiling_frames": [costly_frame]})
    assert said.kind == "recompile"
    untimed = {**costs, "recompiling_frames": [{**frame, "recompile_seconds": None, "recompiles": 9}],
               "graph_breaks": [{**b, "seconds": None} for b in costs["graph_breaks"]]}
    assert worst_problem(index, None, costs=untimed).kind == "recompile"  # 9 recompiles > 2 breaks
    untimed["recompiling_frames"][0]["recompiles"] = 1
    assert worst_problem(index, None, costs=untimed).kind == "graph_break"
    # PyTorch's own breaks are never the worst: a clean run with one that cost the most is clean
    clean = _index(CLEAN)
    by_design = {**broke, "cause": "by_design", "count": 50, "seconds": 100.0}
    said = worst_problem(clean, None, costs={**run_summary(clean), "graph_breaks": [by_design]})
    assert said.kind is None and said.headline.startswith("no problems")


def test_report_markdown_and_json_say_the_headline_near_the_top():
    headline = _worst(CORPUS / "model").headline
    assert json_for(CORPUS / "model")["headline"] == headline
    code, out = run_cli("--report", str(CORPUS / "model"))
    assert code == 0 and out.splitlines()[1] == headline
    code, out = run_cli("--report", "--markdown", str(CORPUS / "model"))
    assert code == 0 and out.splitlines()[4] == f"**{prose(headline)}**"
    # a hang's headline is its verdict: said once
    code, out = run_cli("--report", str(GENERATED / "dist215"))
    assert code == 0 and sum(line.startswith("died: rank 1") for line in out.splitlines()) == 1


def test_a_perf_problem_that_costs_time_is_the_worst_only_after_what_a_compile_costs(gpu_perf_runs):
    """A split is the worst where it is the only problem; it has no cost in compile seconds, so a
    recompile or a break comes first; a long compile weighs its seconds against theirs."""
    inside = gpu_perf_runs / "gpu_perf" / "cg_cpu_inside.bug"
    for source in (inside / "trace", inside / "torch_logs.txt"):
        split = _worst(source)
        assert (split.kind, split.compile_id) == ("perf", "0/0"), split
        assert split.headline.startswith("perf problem [0/0]: a copy to the host inside the compiled function "
                                         "splits the CUDA graph"), split.headline
        assert split.headline.endswith("at program.py:72")
    fixed = _worst(gpu_perf_runs / "gpu_perf" / "cg_cpu_inside.fix" / "trace")
    assert (fixed.kind, fixed.headline) == (None, "no problems: 1 compile id, all ok")
    index = _index(inside / "trace")
    costs = run_summary(index)
    frame = {"rank": None, "process": None, "frame": "1", "function": "score", "location": None,
             "recompiles": 1, "recompile_seconds": 0.5}
    assert worst_problem(index, None, costs={**costs, "recompiling_frames": [frame]}).kind == "recompile"
    assert worst_problem(index, None, costs={**costs, "recompiling_frames": [
        {**frame, "recompile_seconds": None}]}).kind == "recompile"
    # serve_ma: a 36.5 s compile, autotuning 97%, against its graph break's compile seconds
    served = _index(gpu_perf_runs / "gpu_perf3" / "serve_ma" / "trace")
    costs = run_summary(served)
    broke = next(b for b in costs["graph_breaks"] if b["cause"] != "by_design")
    assert broke["seconds"] < 36.5 and worst_problem(served, None, costs=costs).kind == "perf"
    for seconds in (36.6, None):  # (a break that cost more, or one not timed, comes first)
        costlier = {**costs, "graph_breaks": [{**broke, "seconds": seconds}], "recompiling_frames": []}
        assert worst_problem(served, None, costs=costlier).kind == "graph_break", seconds


async def test_the_first_screen_of_a_split_run_is_on_its_perf_pane(gpu_perf_runs):
    await _first_screen(gpu_perf_runs / "gpu_perf" / "cg_cpu_inside.bug" / "trace", "0/0", "perf",
                        "⚠ perf problem [0/0]: a copy to the host")


async def _first_screen(path, compile_id: str, pane: str, headline: str) -> None:
    app = TlviewApp(str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        shown = app.query_one(Headline)
        await until(pilot, lambda: headline in shown.text, what=f"the headline {headline!r}")
        await until(pilot, lambda: app.tree.entry.node is not None and app.tree.entry.node.id == compile_id,
                    what=f"the cursor on [{compile_id}]")
        assert app.detail.active == pane
        status = app.query_one("StatusLine").text
        assert "0 failures" in status or " failure" in status, status  # the totals stay


async def test_the_first_screen_of_a_recompile_run_is_on_its_recompile():
    await _first_screen(CORPUS / "model", "0/1", "recompiles", "⚠ 1 recompile of forward at model.py:55")


async def test_the_first_screen_of_a_graph_break_run_is_on_its_costliest_break():
    await _first_screen(CORPUS / "graph_breaks", "3/0", "breaks", "⚠ 2 graph breaks: a tensor turned")


async def test_the_first_screen_of_a_failed_run_is_on_its_failure():
    await _first_screen(CORPUS / "recompiles", "3/4", "summary", "✗ failure [3/4]: compile #5")


async def test_the_first_screen_of_a_skipped_frame():
    await _first_screen(SKIPPED, "0/0", "summary", "✗ frame skipped [0/0]")


async def test_the_first_screen_of_a_clean_run_says_so():
    await _first_screen(CLEAN_LOG, "0/0", "summary", "✓ no problems: 1 compile id, all ok")


async def test_the_users_own_move_is_never_taken_back():
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await until(pilot, lambda: app.tree.entry.node is not None and app.tree.entry.node.id == "0/1",
                    what="the cursor on the recompile")
        recompiled = app.tree.entry
        await press(pilot, "g")  # the user goes to the top
        await until(pilot, lambda: app.tree.entry is not recompiled, what="the cursor at the top")
        top = app.tree.entry
        worst = app.worst
        app.worst = None  # as if the run's worst were only now found, after the user's key
        app.post_message(JobDiagnosed(None, worst))
        await until(pilot, lambda: app.worst is worst, what="the diagnosis read")
        await pilot.pause()
        assert app.tree.entry is top and app.detail.active == "recompiles"  # (the pane as it was)


async def test_following_the_headline_follows_and_the_cursor_stays_on_the_newest(tmp_path):
    import shutil

    app = TlviewApp(str(tmp_path), follow=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.facts.waiting or app.facts.live == "live", what="following")
        shutil.copytree(CORPUS / "graph_breaks" / "trace", tmp_path / "trace")
        shown = app.query_one(Headline)
        await until(pilot, lambda: "2 graph breaks" in shown.text, timeout=60, what="the worst break, following")
        await until(pilot, lambda: app.tree.entry is not None and app.tree.entry.node is not None
                    and app.tree.entry.node.id == "6/1", what="the cursor on the newest compile id")
        assert app.detail.active == "summary"  # not taken to [3/0]'s Graph breaks
