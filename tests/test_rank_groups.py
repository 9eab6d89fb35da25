"""Ranks grouped at scale (#24): 1,024 ranks made from a real torch 2.15 run (diverge4's rank 0
for ranks 0-1022, its rank 3, which compiled another function, for rank 1023) show as two groups
in the model, `--json`, `--report`, markdown, the tree and the rank switcher, never 1,024 rows."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from conftest import (
    CORPUS,
    GENERATED,
    SIZE,
    json_for,
    plain,
    press,
    ready,
    run_cli,
    until,
)

from tlview.diagnose.what_ran import rank_groups
from tlview.index.indexing import open_index
from tlview.ui.app import TlviewApp
from tlview.ui.commands import tlview_commands

DIVERGE4 = GENERATED / "dist215" / "diverge4" / "trace"
REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))
DISTRIBUTED = CORPUS / "distributed" / "trace"
RANKS = 1024
_RANK = re.compile(rb'("rank": )\d+')


def rank_folder(folder, ranks: int, diverging) -> None:
    """Each file a real one (diverge4's rank 0, or its rank 3 for the ranks `diverging` names),
    its rank rewritten in its name and where the trace records it."""
    same = next(DIVERGE4.glob("*rank_0_*.log")).read_bytes()
    odd = next(DIVERGE4.glob("*rank_3_*.log")).read_bytes()
    for rank in range(ranks):
        data = odd if diverging(rank) else same
        (folder / f"dedicated_log_torch_trace_rank_{rank}_x{rank:05d}.log").write_bytes(
            _RANK.sub(rb"\g<1>" + str(rank).encode(), data))


@pytest.fixture(scope="module")
def ranks_1024(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranks_1024")
    rank_folder(folder, RANKS, lambda rank: rank == RANKS - 1)
    return folder


def test_the_model_groups_ranks_by_compile_history(ranks_1024):
    groups = list(rank_groups(open_index(str(ranks_1024))))
    assert [(g.ranks[0], g.ranks[-1], g.count, g.alike) for g in groups] == [(0, 1022, 1023, True),
                                                                            (1023, 1023, 1, False)]
    assert groups[0].steps() == ["0/0 ok"] and groups[1].steps() == ["0/0 ok", "1/0 ok"]
    assert groups[0].title() == "ranks 0-1022 (1,023 alike)"
    assert groups[1].title() == "rank 1023 (differs)"


def test_the_four_real_ranks_group_as_their_run_did():
    """diverge4 as torch wrote it: ranks 0-2 the same history, rank 3 another."""
    assert [g.ranks for g in rank_groups(open_index(str(DIVERGE4)))] == [(0, 1, 2), (3,)]


def test_interleaved_groups_are_counted_not_listed(tmp_path):
    """Every other rank diverging: two groups of 8 ranks, named by their count and span."""
    rank_folder(tmp_path, 16, lambda rank: rank % 2 == 1)
    groups = rank_groups(open_index(str(tmp_path)))
    assert [g.title() for g in groups] == ["8 ranks (0-14), alike",
                                           "8 ranks (1-15), alike"]
    assert [g.alike for g in groups] == [True, False]  # a tie: the group of the lowest rank agrees
    code, out = run_cli("--report", str(tmp_path))
    assert code == 0 and "│[1/0] 8 ranks (1-15) │" in out and len(out.splitlines()) < 60, out


def test_json_keeps_every_rank_and_adds_the_groups(ranks_1024):
    doc = json_for(ranks_1024)
    assert [(g["ranks"], g["count"], g["rank"], g["alike"]) for g in doc["rank_groups"]] == [
        ("0-1022", 1023, 0, True), ("1023", 1, 1023, False)]
    assert doc["rank_groups"][0]["signature"] != doc["rank_groups"][1]["signature"]
    assert len(doc["compiles"]) == RANKS + 1 and len(doc["sources"]) == RANKS  # per-rank data kept
    assert {s["rank_group"] for s in doc["sources"]} == {0, 1023}
    assert "compile id [1/0] only on rank 1023 (not on ranks 0-1022)" in doc["hang_summary"]


def test_the_report_is_a_screenful(ranks_1024):
    code, out = run_cli("--report", str(ranks_1024))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) < 60, out
    assert "1,023 files of ranks 0-1022 (alike ranks)" in out
    assert "[0/0] ranks 0-1022" in out and "[1/0] rank 1023" in out
    assert "rank 1023 (differs)" in out
    assert not any("rank 5 " in line or "rank 1022" in line for line in lines)


def test_markdown_folds_the_ranks_too(ranks_1024):
    code, out = run_cli("--report", "--markdown", str(ranks_1024))
    assert code == 0 and len(out.splitlines()) < 60, out
    assert "| `[0/0] ranks 0-1022` | ok |" in out and "| `[1/0] rank 1023` | ok |" in out


def test_one_rank_of_a_group_is_still_there(ranks_1024):
    code, out = run_cli("--report", "--rank", "517", str(ranks_1024))
    assert code == 0
    assert "\nrank 517\n" in out and "│[0/0]      │" in out and len(out.splitlines()) < 60, out


async def test_the_tree_and_the_switcher_show_groups(ranks_1024):
    app = TlviewApp(str(ranks_1024))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await until(pilot, lambda: len(app.model.roots) == 2, what="the ranks grouped")
        assert [r.label for r in app.model.roots] == ["ranks 0-1022 (1,023 alike)",
                                                    "rank 1023 (differs)"]
        frames = [[c.title for c in r.children if c.kind == "frame"] for r in app.model.roots]
        assert frames == [["step  program.py:37"], ["step  program.py:37", "stats  program.py:47"]]  # rank 0's; 1023's
        assert app.model.hidden <= 0  # the folded ranks are not "hidden by the filter" (outside entries: < 0)
        ranks = [c.title for c in tlview_commands(app) if c.title.startswith("Rank")]
        assert ranks == ["Rank: ranks 0-1022 (1,023 alike)", "Rank: rank 1023 (differs)"]
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: app.flt.rank == 0)
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: app.flt.rank == 1023)
        assert {e.rank for e in app.model.compile_entries()} == {1023}
        app.set_filter("rank:517")  # any rank of a group is still there
        await until(pilot, lambda: app.flt.rank == 517 and app.model.compile_entries())
        assert {e.rank for e in app.model.compile_entries()} == {517}


def test_the_ranks_are_sorted_once_until_a_rank_comes(tmp_path):
    """The explorer asks for the ranks at each update of its views: sorting 20,000 each time took
    5-10 ms. They are the same tuple until a file brings a rank not seen."""
    from tlview.index.index import Index
    from tlview.source.discover import find_logs

    logs = sorted((GENERATED / "multi_rank4" / "trace").glob("*.log"))
    for log in logs[:2]:
        (tmp_path / log.name).write_bytes(log.read_bytes())
    index = Index()
    for log in find_logs(str(tmp_path))[0]:
        source = index.add_log(log)
        index.feed(source)
    first = index.numbered_ranks()
    assert first == (0, 1) and index.numbered_ranks() is first and index.ranks() == [0, 1]
    for log in logs[2:]:
        (tmp_path / log.name).write_bytes(log.read_bytes())
        index.feed(index.add_log(next(f for f in find_logs(str(tmp_path))[0] if f.path.endswith(log.name))))
    assert index.numbered_ranks() == (0, 1, 2, 3) and index.ranks() == [0, 1, 2, 3]


def test_payloads_alike_are_read_once_when_their_md5s_were_checked(ranks_1024, monkeypatch):
    """Ranks alike log the same schedules, runtime metadata, execution order and output code: the
    multi-rank diagnostics read 4,099 payloads at 1,024 ranks (0.23 s of --json's 0.37 s of
    summary). Payloads whose md5 the scan checked are read once per md5 (by each diagnostic that
    reads them); unchecked ones
    (--no-verify) each time, as an edited payload with a stale md5 is then not told apart."""
    from tlview.diagnose.ranks import divergence
    from tlview.domain.artifacts import Artifact

    loads = []
    load = Artifact.load
    monkeypatch.setattr(Artifact, "load", lambda self: loads.append(self.content_key()) or load(self))
    checked = divergence(open_index(str(ranks_1024), verify_md5=True))
    distinct = len(set(loads))
    assert loads and None not in loads and distinct < 20 and len(loads) <= 2 * distinct
    loads.clear()
    unchecked = divergence(open_index(str(ranks_1024), verify_md5=False))
    assert set(loads) == {None} and len(loads) > 3 * RANKS
    assert checked == unchecked


def _first_records(count: int) -> bytes:
    lines = REAL.read_bytes().splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if not line.startswith(b"\t")]
    return b"".join(lines[:starts[count]])


class _CountedIterations(list):
    iterations = 0

    def __iter__(self):
        type(self).iterations += 1
        return super().__iter__()


def _rank_files(folder: Path, ranks: int) -> Path:
    data = _first_records(3)
    for rank in range(ranks):
        (folder / f"dedicated_log_torch_trace_rank_{rank}_x.log").write_bytes(data)
    return folder


def test_many_ranks_in_the_run_pane_are_runs_and_a_bounded_timeline(tmp_path):
    """The Run pane of 600 ranks: a timeline of the first ranks that says how many more there
    are, and the ranks as one run (it was 5,039 lines and 5.6 s to show at 1,000 ranks)."""
    from rich.console import Console

    from tlview.index.indexing import open_index
    from tlview.report.timeline_look import LANES_DRAWN
    from tlview.ui.run_pane import run_view

    console = Console(file=io.StringIO(), width=134)
    console.print(run_view(open_index(str(_rank_files(tmp_path, 600))), ..., 134))
    lines = console.file.getvalue().splitlines()
    assert "Ranks 0-599" in lines
    assert f"  … {600 - LANES_DRAWN} more ranks or processes not drawn (rank {LANES_DRAWN} to rank 599): " \
           "filter by a rank to see its own timeline" in lines
    assert sum(line.startswith("  rank ") for line in lines) == LANES_DRAWN  # a lane line each
    assert len(lines) < 10 * LANES_DRAWN


def test_many_ranks_are_read_in_one_pass(tmp_path, monkeypatch):
    """600 rank files of 3 records (20,000 took 5 minutes, quadratic): the divergence reads each
    node a bounded number of times, and ordering and naming the ranks scans the files once."""
    from tlview.diagnose.ranks import divergence
    from tlview.domain.compile_node import CompileNode
    from tlview.index.indexing import open_index
    from tlview.views.tree import TreeModel

    ranks = 600
    index = open_index(str(_rank_files(tmp_path, ranks)))
    assert len(index.ranks()) == ranks
    reads = []
    monkeypatch.setattr(CompileNode, "rank", property(lambda node: reads.append(1) or node.group.rank))
    div = divergence(index)
    assert div["ranks"] == list(range(ranks)) and div["compile_ids"] == []  # the ranks agree
    assert len(reads) <= 3 * len(index.nodes), len(reads)
    index.sources = _CountedIterations(index.sources)
    tree = TreeModel(index)
    assert [entry.label for entry in tree.roots[:3]] == ["rank 0", "rank 1", "rank 2"]
    assert len(tree.roots) == ranks
    assert _CountedIterations.iterations <= 3, _CountedIterations.iterations


async def test_the_detail_follows_the_rank_switcher():
    app = TlviewApp(str(DISTRIBUTED))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        for rank in (0, 1):
            await press(pilot, "right_square_bracket")
            await until(pilot, lambda: app.flt.rank == rank)
            entry = app.tree.entry
            assert entry.rank == rank
            await until(pilot, lambda: f"rank {rank}" in plain(app.query_one("#summary-body")))
