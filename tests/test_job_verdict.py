""""What happened to the job" in one line, decided once (diagnose.hang.job_verdict) and read by
--report, --json, markdown, the Run pane, the status line, and the explorer's first screen: the
cursor on where the ranks parted, `x` stopping there, `]` going through ranks that look alike."""

from __future__ import annotations

import copy

from conftest import GENERATED, SIZE, json_for, plain, ready, run_cli, until

from tlview.diagnose.hang import job_verdict
from tlview.report.markdown import prose
from tlview.ui.app import TlviewApp

DIST = GENERATED / "dist215"
HANG = DIST / "hang3"


def _hang_doc() -> dict:
    return json_for(HANG)["divergence"]


def test_a_hang_names_the_ranks_the_collective_and_the_rank_that_parted():
    verdict = job_verdict(_hang_doc())
    assert verdict is not None
    assert verdict.state == "hung"
    assert verdict.said.startswith("hung: ranks 0-1 vs rank 2 at the ")
    assert verdict.said.endswith(" collective (all_reduce_ in [0/0])")
    # rank 2 parted: its collectives ended after its recompile [0/1]
    assert (verdict.rank, verdict.compile_id) == (2, "0/1")


def test_without_a_death_the_same_parting_may_hang_and_without_either_there_is_no_verdict():
    div = _hang_doc()
    alive = {**div, "job_death": None}
    verdict = job_verdict(alive)
    assert verdict is not None and verdict.state == "may hang" and verdict.said.startswith("may hang: ranks 0-1")
    agree = json_for(DIST / "agree2")["divergence"]
    assert job_verdict(agree) is None


def test_a_rank_s_own_death_comes_before_the_timeouts_of_its_peers():
    div = copy.deepcopy(_hang_doc())
    div["job_death"]["deaths"].append({"ranks": [2], "kind": "exception", "where": None,
                                       "message": "ValueError: bad batch at train.py:12"})
    verdict = job_verdict(div)
    assert verdict is not None
    assert (verdict.state, verdict.rank) == ("died", 2)
    assert verdict.said == "died: rank 2: ValueError: bad batch at train.py:12"
    # only timeouts: the job died of them, said with their kind
    timeouts = {"deaths": [{"ranks": [0, 1], "kind": "timeout", "message": "Timed out"}], "root_cause": None}
    verdict = job_verdict({"job_death": timeouts, "collective_sequences": None})
    assert verdict is not None and verdict.said == "died: ranks 0-1: timeout: Timed out"


def test_report_json_and_markdown_say_it_first():
    doc = json_for(HANG)
    assert doc["job_verdict"] == {"state": "hung", "said": job_verdict(doc["divergence"]).said,
                                  "rank": 2, "compile_id": "0/1"}
    code, out = run_cli("--report", str(HANG))
    assert code == 0 and out.splitlines()[1] == doc["job_verdict"]["said"]
    code, out = run_cli("--report", "--markdown", str(HANG))
    said = prose(doc["job_verdict"]["said"])  # (markdown's escapes)
    assert code == 0 and out.index(f"**{said}**") < out.index("## Why the job may hang")
    assert json_for(DIST / "agree2")["job_verdict"] is None


async def test_the_first_screen_of_a_hung_job_is_on_the_rank_that_parted():
    app = TlviewApp(str(HANG))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await until(pilot, lambda: app.job_verdict is not None, what="the job's verdict")
        said = app.job_verdict.said
        status = app.query_one("StatusLine")
        await until(pilot, lambda: said in status.text, what="the verdict on the status line")
        await until(pilot, lambda: app.detail.active == "run", what="the Run pane")
        entry = app.tree.entry
        assert entry is not None and (entry.rank, entry.node.id) == (2, "0/1")
        body = app.query_one("#run-body")
        await until(pilot, lambda: "Total compile time" in plain(body), what="the Run pane's view")
        assert plain(body).lstrip().startswith(said)
        # x: the hang is the first error; the tree's first entry is no error, and x comes back to it
        await pilot.press("g")
        await until(pilot, lambda: app.tree.entry.key != entry.key, what="the cursor at the top")
        await pilot.press("x")
        await until(pilot, lambda: app.tree.entry.key == entry.key, what="x to the hang")


async def test_ranks_that_look_alike_are_still_gone_through_one_by_one():
    app = TlviewApp(str(DIST / "agree2"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert app.job_verdict is None and app.model.ranks is not None and len(app.model.ranks) == 1
        await pilot.press("]")
        await until(pilot, lambda: app.flt.rank is not None, what="a rank filter")
        assert app.flt.rank == 0
        await pilot.press("]")
        await until(pilot, lambda: app.flt.rank == 1, what="the next rank")


async def test_following_a_job_tells_the_hang_as_its_logs_come(tmp_path):
    import shutil

    app = TlviewApp(str(tmp_path), follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.facts.waiting or app.facts.live == "live", what="following")
        shutil.copytree(HANG / "trace", tmp_path / "trace")
        shutil.copytree(HANG / "torch_logs", tmp_path / "torch_logs")
        await until(pilot, lambda: app.job_verdict is not None and app.job_verdict.state == "hung",
                    timeout=60, what="the hang, while following")
        await until(pilot, lambda: "hung: ranks 0-1 vs rank 2" in app.query_one("StatusLine").text,
                    what="the hang on the status line")


def test_a_rank_that_raised_is_the_verdict_though_its_peers_timed_out_and_lost_it():
    doc = json_for(DIST / "raise_in3")
    assert doc["job_verdict"] == {
        "state": "died", "rank": 1, "compile_id": None,
        "said": "died: rank 1: RuntimeError: activations overflow: max |h| = 1.87e+06 > 1e4 "
                "(at program.py:42 in layer)"}
    # only timeouts (every rank waited): the job died of them
    timeout6 = json_for(DIST / "timeout6")["job_verdict"]
    assert timeout6["state"] in ("died", "hung") and "exception" not in timeout6["said"]


def test_ranks_that_timed_out_with_no_order_logged_hung_where_they_compiled_apart():
    """timeout6 logged no graph execution order: the ranks timed out, and what they compiled
    parts at the first collective (rank 3's reduce_scatter where the others all_reduce)."""
    verdict = json_for(DIST / "timeout6")["job_verdict"]
    assert verdict == {"state": "hung", "rank": 3, "compile_id": "0/0",
                       "said": "hung: ranks 0-2,4-5 vs rank 3 at the 1st collective compiled "
                               "(all_reduce_ vs reduce_scatter_tensor in [0/0])"}
    # ranks that compiled apart but ran the same collectives and finished: nothing happened
    assert json_for(DIST / "reshape3")["job_verdict"] is None
    assert json_for(DIST / "reorder3")["job_verdict"] is None



async def test_the_first_screen_of_a_job_that_died_is_on_the_compile_that_raised():
    app = TlviewApp(str(DIST / "raise_in3"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await until(pilot, lambda: app.detail.active == "run", what="the Run pane")
        entry = app.tree.entry
        assert entry is not None and (entry.rank, entry.node.id) == (1, "2/0")  # rank 1's ✗ [2/0]
