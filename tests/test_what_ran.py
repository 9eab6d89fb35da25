"""Rank groups from what can make ranks differ (diagnose/what_ran.py): compile history, the
collectives each rank ran and its graph execution order, one grouping for the tree, the rank
switcher, --report, markdown and --json; and hang claims only from what the ranks ran. On real
gloo runs (fixtures/generated/dist215, program_groups.py):
  - reshape3: rank 2 recompiles `mix` for a longer sequence and compiles `score`; every rank ran
    the same all_reduces, and the job finished;
  - reorder3: rank 1 runs `head` before `mix` where the others run `mix` first; the same
    collectives, the job finished;
  - swap5: rank 3 all_gathers where the others all_reduce (its compile history is theirs), rank
    4 compiled `score` first; the job hung. Rank 0, killed by torchrun, logged no order."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import GENERATED, SIZE, json_for, ready, run_cli, until

from tlview.diagnose.what_ran import rank_groups
from tlview.index.indexing import open_index
from tlview.ui.app import TlviewApp
from tlview.ui.commands import tlview_commands

DIST = GENERATED / "dist215"
RESHAPE, REORDER, SWAP = DIST / "reshape3", DIST / "reorder3", DIST / "swap5"
_RANK = re.compile(rb'("rank": )\d+')
_EXECUTION = re.compile(rb'^[^\t][^\n]*"name": "graph_execution"[^\n]*\n(?:\t[^\n]*\n)*', re.MULTILINE)


def groups_of(path) -> list[tuple[str, bool]]:
    return [(g["ranks"], g["alike"]) for g in json_for(path)["rank_groups"]]


def test_ranks_that_compiled_apart_but_ran_the_same_collectives_are_no_hang():
    doc = json_for(RESHAPE / "trace")
    assert doc["hang_summary"] == []  # the job finished: nothing "can hang" it
    said = doc["divergence_summary"]
    assert said[0] == "ranks ran the same collectives (3, in graph execution order)"
    # what they compiled differs, and is told as a difference
    assert said[1].startswith("collectives compiled differ: ranks 0-1 vs rank 2; the 2nd collective compiled "
                              "(over all graphs): none on ranks 0-1")
    assert not any("can hang" in line for line in said)
    assert any(line.startswith("compile ids [") and "only on rank 2" in line for line in said)
    code, out = run_cli("--report", str(RESHAPE / "trace"))
    assert code == 0 and "Why the job may hang" not in out and "can hang" not in out


def test_ranks_that_ran_their_graphs_in_another_order_ran_the_same_collectives():
    doc = json_for(REORDER / "trace")
    assert doc["hang_summary"] == []
    assert doc["divergence_summary"][:2] == [
        "ranks ran the same collectives (3, in graph execution order)",
        "graph execution order differs: the 3rd graph run is [0/0] on ranks 0,2; [1/0] on rank 1"]
    # the order sets rank 1 apart, though its compile history is the others'
    assert [(g["ranks"], g["alike"], g["ran"]["graphs_run"]) for g in doc["rank_groups"]] == [
        ("0,2", True, 6), ("1", False, 6)]
    assert doc["rank_groups"][0]["history"] == doc["rank_groups"][1]["history"]


def test_without_any_logged_order_the_compiled_sequences_differ_without_a_hang(tmp_path):
    for trace in (RESHAPE / "trace").glob("*.log"):
        (tmp_path / trace.name).write_bytes(_EXECUTION.sub(b"", trace.read_bytes()))
    doc = json_for(tmp_path)
    assert doc["divergence"]["execution_order"] is None
    assert doc["hang_summary"] == []
    said = doc["divergence_summary"][0]
    assert said.startswith("collectives compiled differ: ranks 0-1 vs rank 2; the 2nd collective compiled "
                           "(over all graphs; no rank logged its graph execution order)")


def test_a_rank_that_differs_only_in_its_collectives_is_a_group_of_its_own():
    doc = json_for(SWAP / "trace")
    groups = doc["rank_groups"]
    assert [(g["ranks"], g["title"]) for g in groups] == [
        ("0", "rank 0 (no execution order logged)"), ("1-2", "ranks 1-2 (2 alike)"), ("3", "rank 3 (differs)"),
        ("4", "rank 4 (differs)")]
    assert groups[1]["history"] == groups[2]["history"]  # rank 3: the same compile history
    # the hang lines single out the same ranks as the groups, rank 0 not silently left out
    assert doc["hang_summary"][0].startswith("collectives differ (can hang the job): ranks 1-2,4 vs rank 3; "
                                             "the 1st collective run (in graph execution order): all_reduce_ in "
                                             "[0/0] on ranks 1-2,4; all_gather_into_tensor in [0/0] on rank 3")
    assert doc["hang_summary"][0].endswith("; no execution order logged on rank 0")
    code, out = run_cli("--report", str(SWAP / "trace"))
    assert code == 0
    tables = [line for line in out.splitlines() if re.match(r"ranks? \d", line)]
    assert tables == ["rank 0 (no execution order logged)", "ranks 1-2 (2 alike)", "rank 3 (differs)",
                      "rank 4 (differs)"]


async def test_the_tree_and_the_switcher_show_the_same_groups():
    app = TlviewApp(str(SWAP))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        titles = ["rank 0 (no execution order logged)", "ranks 1-2 (2 alike)", "rank 3 (differs)", "rank 4 (differs)"]
        await until(pilot, lambda: [r.label for r in app.model.roots] == titles, what="the ranks grouped")
        assert [c.title for c in tlview_commands(app) if c.title.startswith("Rank")] == [f"Rank: {t}" for t in titles]


def test_text_and_trace_together_group_as_the_trace_does():
    """The text tells no collectives; read beside the trace, the groups are the trace's."""
    assert groups_of(SWAP) == groups_of(SWAP / "trace")


@pytest.fixture(scope="module")
def ranks_1024(tmp_path_factory):
    """1,024 ranks: 0-1022 copies of swap5's rank 1, rank 1023 its rank 3 (the same compile
    history, another collective), each file's rank rewritten where the trace records it."""
    folder = tmp_path_factory.mktemp("swap_1024")
    same = next((SWAP / "trace").glob("*rank_1_*.log")).read_bytes()
    odd = next((SWAP / "trace").glob("*rank_3_*.log")).read_bytes()
    for rank in range(1024):
        (folder / f"dedicated_log_torch_trace_rank_{rank}_s{rank:05d}.log").write_bytes(
            _RANK.sub(rb"\g<1>" + str(rank).encode(), odd if rank == 1023 else same))
    return folder


def test_at_1024_ranks_the_groups_single_out_the_rank_the_hang_lines_name(ranks_1024):
    groups = rank_groups(open_index(str(ranks_1024)))
    assert [(g.ranks[0], g.count, g.title()) for g in groups] == [
        (0, 1023, "ranks 0-1022 (1,023 alike)"), (1023, 1, "rank 1023 (differs)")]
    assert groups.groups[0].history == groups.groups[1].history
    doc = json_for(ranks_1024)
    assert [g["ranks"] for g in doc["rank_groups"]] == ["0-1022", "1023"]
    assert doc["hang_summary"][0].startswith("collectives differ (can hang the job): ranks 0-1022 vs rank 1023")


def test_a_rank_with_no_logged_order_among_ranks_with_one_is_apart(tmp_path):
    shutil.copytree(REORDER / "trace", tmp_path / "trace")
    rank_2 = next((tmp_path / "trace").glob("*rank_2_*.log"))
    rank_2.write_bytes(_EXECUTION.sub(b"", rank_2.read_bytes()))
    doc = json_for(tmp_path / "trace")
    assert [(g["ranks"], g["title"]) for g in doc["rank_groups"]] == [
        ("0", "rank 0"), ("1", "rank 1 (differs)"),
        ("2", "rank 2 (no execution order logged)")]
