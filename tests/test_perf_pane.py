"""The explorer's half of perf problems (issue #44), on the real GPU runs of fixtures/gpu_perf
(the session fixture) and fixtures/gpu/cnn_serve: the Perf pane (0) with a bug run's problem,
line and fix and none for its fix run, the run's list whose Enter goes to the compile id, the ↯
badge, the status line's count, p/P, the filter word `perf`, the live toast and the compare head."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import FIXTURES, SIZE, json_for, press, ready, said_by, type_in, until

from tlview.index.live import PERF_PROBLEM, news_of
from tlview.report.rich_text import PERF_BADGE, entry_text
from tlview.ui.app import TlviewApp
from tlview.ui.compare_app import CompareApp
from tlview.ui.compare_head import CompareHead, totals_line
from tlview.ui.keys import key_range
from tlview.ui.status_line import StatusLine
from tlview.ui.tabs import TABS, numbered_tabs, tab_key

CNN_SERVE = FIXTURES / "gpu" / "cnn_serve"


def _run(root: Path, name: str) -> str:
    found = [root / part / name for part in ("gpu_perf", "gpu_perf2") if (root / part / name).is_dir()]
    assert found, name
    return str(found[0])


def entry_of(app, cid: str):
    return next(e for e in app.model.compile_entries() if e.node.id == cid)


async def go_to(app, pilot, cid: str) -> None:
    app.tree.select_key(entry_of(app, cid).key)
    await until(pilot, lambda: app.tree.entry.node is not None and app.tree.entry.node.id == cid)
    await app.workers.wait_for_complete()


def test_perf_is_the_tenth_tab_on_0_and_the_help_says_1_to_9_then_0():
    assert TABS[-1][0] == "perf" and len(TABS) == 10
    assert [k for k, _ in numbered_tabs()] == [*"1234567890"]
    assert tab_key(10) == "0" and tab_key(9) == "9"
    assert key_range([*"1234567890"]) == "1-9 0" and key_range([*"123"]) == "1-3"


async def test_the_perf_pane_shows_a_bug_runs_problem_line_and_fix_and_none_in_its_fix_run(gpu_perf_runs):
    bug = _run(gpu_perf_runs, "cg_cpu_inside.bug")
    (told,) = [p for p in json_for(Path(bug))["compiles"][0]["verdict"] if p["kind"] == "perf"]
    app = TlviewApp(bug)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await go_to(app, pilot, "0/0")
        await press(pilot, "0")
        assert app.detail.active == "perf"
        shown = app.detail.copy_text()
        assert "cudagraph_split_cpu_ops (costs time): a copy to the host inside the compiled function" in shown
        assert f"fix: {told['fix']}" in shown  # the same words as --report and --json
        assert "program.py:72" in shown and 'confidence.to("cpu")' in shown  # the user's line
        assert "2 partitions: 1 cudagraphable, 1 not" in shown and "op8 kept out: cpu ops" in shown
        assert "compile time" in shown and "the compile took" in shown
    app = TlviewApp(_run(gpu_perf_runs, "cg_cpu_inside.fix"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await go_to(app, pilot, "0/0")
        await press(pilot, "0")
        shown = app.detail.copy_text()
        assert "No perf problems in [0/0]." in shown and "No perf problems in this run." in shown
        assert "cudagraph_split" not in shown and "1 partition: 1 cudagraphable, 0 not" in shown


async def test_the_perf_pane_lists_costs_time_first(gpu_perf_runs):
    """fallback_ops: three fallback kernels, all informational; the GPT-like opt_step run: one
    that costs time. A compile's own list puts what costs time first (checked on the order the
    pane sorts by, with an informational one made to cost time)."""
    from tlview.domain.perf import COSTS_TIME
    from tlview.ui.perf_pane import costs_time_first

    app = TlviewApp(_run(gpu_perf_runs, "fallback_ops.bug"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await go_to(app, pilot, "0/0")
        problems = list(entry_of(app, "0/0").compile.verdict.problems)
        assert [p.severity for p in problems] == ["informational"] * 3
        problems[2].severity = COSTS_TIME
        assert costs_time_first(problems)[0] is problems[2]


async def test_the_run_list_goes_costliest_first_and_enter_goes_to_the_compile_id(gpu_perf_runs):
    """opt_step: [2/0]'s grads copied into the CUDA graph is the run's only perf problem; on the
    frame of [0/0] (none of its own), the pane lists it, and Enter selects [2/0]."""
    app = TlviewApp(_run(gpu_perf_runs, "opt_step.bug"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        frame = entry_of(app, "0/0").parent
        app.tree.select_key(frame.key)
        await until(pilot, lambda: app.tree.entry is frame)
        await press(pilot, "0")
        shown = app.detail.copy_text()
        assert shown.startswith("1 perf problem in this run, costliest first")
        assert "[2/0] static_inputs_copied (costs time): the grad tensors are copied" in shown
        app.detail.focus_pane()
        await press(pilot, "enter")
        await until(pilot, lambda: app.tree.entry.node is not None and app.tree.entry.node.id == "2/0")


async def test_p_steps_through_the_perf_problems_and_says_which_of_how_many():
    app = TlviewApp(str(CNN_SERVE))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await go_to(app, pilot, "0/0")
        said = said_by(app)
        at = []
        for key in ("p", "p", "p", "p", "P", "P"):
            await press(pilot, key)
            at.append(app.tree.entry.node.id)
        assert at == ["0/1", "0/2", "0/2", "0/0", "0/0", "0/2"]
        assert said[:2] == ["perf problem 2 of 3: [0/1]", "perf problem 3 of 3: [0/2]"]
        assert said[2] == "that was the last perf problem: p again goes to the first"
        assert said[4] == "that was the first perf problem: P again goes to the last"


async def test_badges_and_the_status_line_count_perf_problems(gpu_perf_runs):
    app = TlviewApp(str(CNN_SERVE))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert all(f"{PERF_BADGE}1" in entry_text(entry_of(app, cid)).plain for cid in ("0/0", "0/1", "0/2"))
        assert "3 perf problems" in app.query_one(StatusLine).text
    app = TlviewApp(_run(gpu_perf_runs, "fallback_ops.bug"))  # informational only: a dim badge
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        label = entry_text(entry_of(app, "0/0"))
        at = label.plain.index(f"{PERF_BADGE}3")
        assert [str(s.style) for s in label.spans if s.start <= at < s.end][-1] == "dim"
        assert "3 perf problems" in app.query_one(StatusLine).text
    app = TlviewApp(_run(gpu_perf_runs, "cg_cpu_inside.fix"))  # none: no badge, no count
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert PERF_BADGE not in entry_text(entry_of(app, "0/0")).plain
        assert "perf" not in app.query_one(StatusLine).text


async def test_a_costly_perf_problems_badge_is_not_dim(gpu_perf_runs):
    app = TlviewApp(_run(gpu_perf_runs, "cg_mutation.bug"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        label = entry_text(entry_of(app, "0/0"))
        at = label.plain.index(f"{PERF_BADGE}1")
        assert all(str(s.style) != "dim" for s in label.spans if s.start <= at < s.end)


async def test_the_filter_word_perf_keeps_the_compile_ids_with_a_perf_problem(gpu_perf_runs):
    app = TlviewApp(_run(gpu_perf_runs, "opt_step.bug"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert len(app.model.compile_entries()) > 1
        await press(pilot, "slash")
        await type_in(pilot, "perf")
        await press(pilot, "enter")
        await until(pilot, lambda: [e.node.id for e in app.model.compile_entries()] == ["2/0"],
                    what="only [2/0]")


async def test_a_perf_problem_that_costs_time_is_news_and_an_informational_one_not(gpu_perf_runs):
    """The live toasts (index/live.py): [2/0] of opt_step is news; fallback_ops' kernels are not."""
    app = TlviewApp(_run(gpu_perf_runs, "opt_step.bug"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert PERF_PROBLEM in news_of(entry_of(app, "2/0").compile)
        assert PERF_PROBLEM not in news_of(entry_of(app, "3/0").compile)
    app = TlviewApp(_run(gpu_perf_runs, "fallback_ops.bug"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert news_of(entry_of(app, "0/0").compile) == []


async def test_the_compare_head_counts_the_perf_problems_gone(gpu_perf_runs):
    """cg_newsizes: a CUDA graph recorded per request length; padded to buckets, gone."""
    app = CompareApp(_run(gpu_perf_runs, "cg_newsizes.bug"), _run(gpu_perf_runs, "cg_newsizes.fix"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.comparison is not None, what="the comparison")
        head = totals_line(app.query_one(CompareHead).comparison).plain
        assert re.search(r"perf problems 1 → 0\b", head), head
        gone = [p for p in app.comparison.gone if p.kind == "perf"]
        assert [p.cause for p in gone] == ["cudagraph_per_size"]
        await until(pilot, lambda: app.tree.cursor_node is not None, what="a cursor")
        said = said_by(app)
        await press(pilot, "p")  # the compare view's p: to the problem gone
        assert said[-1].startswith("perf problem 1 of 1: ") and "[0/2]" in said[-1], said


# ---- the rules, without the app (in the fast suite) ----------------------------------------------

def _lines(path: str) -> list[str]:
    from tlview.index.indexing import open_index
    from tlview.ui.pane import Selection, plain_text
    from tlview.ui.perf_pane import perf_view

    return plain_text(perf_view(Selection(open_index(path), None))).splitlines()


def test_the_run_list_puts_what_costs_time_before_what_is_informational(gpu_perf_runs):
    """cg_unbacked: nonzero splits the CUDA graph (two reasons, costs time) and is a fallback
    kernel (informational): the fallback comes last, though torch told it first."""
    lines = _lines(_run(gpu_perf_runs, "cg_unbacked.bug"))
    assert lines[0].startswith("3 perf problems in this run, costliest first")
    severities = [re.search(r"\((costs time|informational)\)", line).group(1) for line in lines[1:]]
    assert severities == ["costs time", "costs time", "informational"]


def test_the_run_list_says_alike_problems_once_with_their_count(gpu_perf_runs):
    """cnn_serve: the same `.cpu()` split in each of its three compile ids: one line, ×3."""
    lines = _lines(str(CNN_SERVE))
    assert lines[0].startswith("3 perf problems in this run")
    assert lines[1:] == [lines[1]] and lines[1].startswith("  [0/0] ×3 cudagraph_split_cpu_ops (costs time)")


def test_the_filter_word_perf_and_the_badge_read_the_verdict(gpu_perf_runs):
    from tlview.index.indexing import open_index
    from tlview.views.filters import Filter
    from tlview.views.tree import TreeModel

    index = open_index(_run(gpu_perf_runs, "opt_step.bug"))
    assert [e.node.id for e in TreeModel(index, Filter.parse("perf")).compile_entries()] == ["2/0"]
    labels = {e.node.id: entry_text(e).plain for e in TreeModel(index).compile_entries()}
    assert [cid for cid, label in labels.items() if PERF_BADGE in label] == ["2/0"]
    assert labels["2/0"].endswith(f"{PERF_BADGE}1")
