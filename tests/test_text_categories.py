"""TORCH_LOGS text with categories left out (a user who set only `recompiles`, or only
`graph_breaks`) still gets statuses, function names, guard counts and costs, each said for what it
is. The texts are the corpus runs' own lines of those categories, as such a run writes them."""

from __future__ import annotations

import pytest
from conftest import CORPUS, json_for, run_cli


def _only(tmp_path, run: str, *tags: str):
    lines = (CORPUS / run / "torch_logs.txt").read_text().splitlines(keepends=True)
    kept = [line for line in lines if any(f"[__{tag}]" in line for tag in tags)]
    assert kept
    path = tmp_path / f"{run}_{'_'.join(tags)}.txt"
    path.write_text("".join(kept))
    return path


def _statuses(doc) -> dict:
    return {c["id"]: c["status"] for c in doc["compiles"]}


def test_recompiles_alone_give_statuses_not_missing(tmp_path):
    doc = json_for(_only(tmp_path, "recompiles", "recompiles", "recompiles_verbose"))
    statuses = _statuses(doc)
    assert "missing" not in statuses.values()
    # a guard of [3/1], [3/2] and [3/3] failed later: they had guards, so they compiled
    assert [statuses[f"3/{n}"] for n in (1, 2, 3, 4)] == ["ok", "ok", "ok", "unlogged"]
    assert statuses["0/1"] == "unlogged"  # nothing later tells of it
    trace = _statuses(json_for(CORPUS / "recompiles" / "trace"))
    assert all(trace[cid] == "ok" for cid, status in statuses.items() if status == "ok")
    assert doc["totals"]["errors"] == 0 and doc["totals"]["recompiles"] == 8


def test_graph_breaks_alone_name_each_frame_from_its_traceback(tmp_path):
    doc = json_for(_only(tmp_path, "graph_breaks", "graph_breaks"))
    named = {c["id"]: (c["function"], c["location"]) for c in doc["compiles"]}
    assert named["0/0"][0] == "step" and named["0/0"][1].endswith("graph_breaks.py:25")
    assert all(function == "step" for function, _ in named.values())  # none is `?`
    assert set(_statuses(doc).values()) == {"break"}


def test_guards_text_gives_guard_counts_and_badges(tmp_path):
    from tlview.index.indexing import open_index
    from tlview.report.rich_text import badges_of
    from tlview.views.tree import TreeModel

    path = _only(tmp_path, "recompiles", "guards")
    doc = json_for(path)
    checks = {c["id"]: c["guard_checks"] for c in doc["compiles"]}
    # the leaves of each logged tree (TENSOR_MATCH, EQUALS_MATCH, ...; not the GuardManagers)
    assert checks == {"0/0": 11, "0/1": 11, "1/0": 13, "1/1": 13, "2/0": 10, "2/1": 10, "2/2": 10,
                      "3/0": 14, "3/1": 14, "3/2": 14, "3/3": 14}
    text = (CORPUS / "recompiles" / "torch_logs.txt").read_text()
    block = text.split("[0/1] [__guards] TREE_GUARD_MANAGER:")[1].split("[0/1] [__guards] \n")[0]
    assert block.count("_MATCH:") + block.count("_GUARD:") + block.count("GLOBAL_STATE:") + \
        block.count("_STACK:") + block.count("DEFAULT_DEVICE:") == 11
    index = open_index(str(path))
    tree = TreeModel(index)
    entries = [e for e in tree.by_key.values() if e.kind == "compile"]
    assert entries and all(f"G{checks[e.node.id]}" in badges_of(e) for e in entries)


RUNS = ["recompiles", "graph_breaks", "dynamic_shapes", "model"]


@pytest.mark.parametrize("run", RUNS)
def test_costs_of_text_come_from_line_times_and_say_so(run, monkeypatch):
    text = json_for(CORPUS / run / "torch_logs.txt")["run_summary"]
    trace = json_for(CORPUS / run / "trace")["run_summary"]
    assert text["times_from"] == ["TORCH_LOGS line times (a compile id's first to last line)"]
    assert trace["times_from"] == ["compilation metrics"]
    # two clocks of one run: the lines of each compile id, and torch's own compile times
    assert text["total_compile_seconds"] == pytest.approx(trace["total_compile_seconds"], rel=0.01)
    monkeypatch.setenv("COLUMNS", "200")
    code, report = run_cli("--report", str(CORPUS / run / "torch_logs.txt"))
    if text["recompiling_frames"] or text["graph_breaks"]:
        assert code == 0 and "from TORCH_LOGS line times" in report
