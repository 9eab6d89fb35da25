"""Artifacts named as a person says them, dynamic-shape events grouped by kind, and a Diff pane
that wraps its messages and tells a failed recompile from one whose guards all went."""

from __future__ import annotations

import re

from conftest import CORPUS, GENERATED, PEER, press, ready, until

from tlview.diagnose.diff import diff_lines, recompile_diff
from tlview.index.indexing import open_index
from tlview.source.discover import NoLogsError
from tlview.ui.app import TlviewApp
from tlview.ui.frame_tree import FrameTree
from tlview.ui.payload_view import PayloadView
from tlview.views.dynamic import group_dynamic

HASH = re.compile(r"\b[a-z0-9]{10}\b")


async def _open_pane(app, pilot, compile_id: str, tab_key: str) -> None:
    """Ready, the cursor on `compile_id`, and the pane of `tab_key` shown."""
    await ready(app, pilot)
    entry = next(e for e in app.model.compile_entries() if e.node.id == compile_id)
    app.tree.select_key(entry.key)
    await press(pilot, tab_key)


def _labels(path) -> dict[str, str]:
    """{artifact name: label} of every artifact of a run (its compile ids and its records of none)."""
    index = open_index(str(path), parallel_ok=False)
    nodes = list(index.iter_nodes()) + list(index.outside.values())
    return {a.name: a.label for n in nodes for a in n.artifacts}


# ---- names ---------------------------------------------------------------------------------------

def test_graphs_and_code_read_as_what_they_are():
    labels = _labels(CORPUS / "model" / "trace")
    assert labels["dynamo_output_graph"] == "Dynamo output graph"
    assert labels["aot_forward_graph"] == "AOT forward graph"
    assert labels["fx_graph_runnable"] == "FX graph runnable"
    assert labels["aot_forward_graph_fw_metadata"] == "AOT forward graph metadata"
    assert labels["fx_graph_cache_miss"] == "FX graph cache miss"
    assert labels["runtime_wrapper_orchestration"] == "AOT runtime wrapper"
    assert labels["dynamo_cpp_guards_str"] == "guards"
    # the output code: what it is, then its file's hash
    what, _, file_hash = labels["inductor_output_code"].partition(" · ")
    assert what == "output code" and HASH.fullmatch(file_hash)


def test_text_logs_name_their_artifacts_as_the_trace_does():
    text = _labels(CORPUS / "model" / "torch_logs.txt")
    trace = _labels(CORPUS / "model" / "trace")
    assert text["graph_code"] == trace["dynamo_output_graph"] == "Dynamo output graph"
    assert text["output_code"] == "output code"
    assert text["guards"] == trace["dynamo_cpp_guards_str"] == "guards"


def _every_run_labels() -> dict[str, str]:
    """{name: label} of every artifact in every log of the fixtures."""
    labels: dict[str, str] = {}
    for base in (CORPUS, GENERATED, PEER):
        for path in sorted(base.rglob("*")):
            if path.is_file() and path.suffix not in (".py", ".md", ".json"):
                try:
                    labels.update(_labels(path))
                except NoLogsError:
                    pass  # a program's stdout, a licence
    return labels


def test_every_artifact_of_every_fixture_reads_without_underscores():
    labels = _every_run_labels()
    assert len(labels) > 60
    for name, label in labels.items():
        what = label.split(" · ")[0]  # what it is; after the dot, which one (a hash, a function)
        assert "_" not in what or not name.isidentifier(), (name, label)
        assert label != name or not name.isidentifier() or "_" not in name, (name, label)
    assert labels["before_recompile_pre_grad"] == "pre-grad graph before recompile"
    assert labels["aotautograd_cache_hit"] == "AOTAutograd cache hit"
    assert labels["ddp_graphs"] == labels["optimize_ddp_split_graph"] == "DDP split graph"
    bytecode = next(label for name, label in labels.items() if name.endswith("_MODIFIED_BYTECODE"))
    assert re.fullmatch(r"modified bytecode · resume in \w+ at line \d+", bytecode)


def test_json_keeps_the_raw_names():
    from conftest import json_for

    doc = json_for(CORPUS / "model" / "trace")
    names = {n for c in doc["compiles"] for n in c["artifacts"]}
    assert {"inductor_output_code", "fx_graph_runnable", "dynamo_output_graph"} <= names


async def test_the_graphs_list_shows_the_readable_names():
    app = TlviewApp(str(CORPUS / "model" / "trace"))
    async with app.run_test(size=(150, 45)) as pilot:
        await _open_pane(app, pilot, "0/0", "2")
        options = app.query_one("#graph-list")
        await until(pilot, lambda: options.option_count > 3)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert shown[0] == "Dynamo output graph"
        assert "AOT forward graph" in shown and "FX graph runnable" in shown
        assert any(s.startswith("output code · ") for s in shown)
        assert not any(s.startswith(("inductor_output_code", "dynamo_output_graph")) for s in shown)


# ---- dynamic shapes ------------------------------------------------------------------------------

def test_dynamic_events_come_by_kind_symbols_first_the_rest_folded():
    index = open_index(str(GENERATED / "export" / "dtrace"), parallel_ok=False)
    node = index.node(None, "0/0")
    groups = group_dynamic(node.dynamic)  # 1 create_symbol after 282 expression_created in the log
    assert [(g.label, len(g.events), g.folded) for g in groups] == [
        ("symbol created", 1, False), ("expression created", 282, True)]
    outside = next(iter(index.outside.values()))
    labels = [g.label for g in group_dynamic(outside.dynamic)]
    assert labels == ["symbol created", "unbacked symbol created", "specialization", "data-dependent error",
                      "guard added", "expression created"]  # guard_added and guard_added_fast: one group
    corpus = open_index(str(CORPUS / "dynamic_shapes" / "trace"), parallel_ok=False)
    logged = [d.kind for d in corpus.node(None, "0/0").dynamic]
    assert logged == ["create_symbol", "guard_added_fast", "symbolic_shape_specialization"]
    assert [g.label for g in group_dynamic(corpus.node(None, "0/0").dynamic)] == [
        "symbol created", "specialization", "guard added"]


async def test_dynamic_pane_folds_the_expressions_and_opens_them_on_enter():
    app = TlviewApp(str(GENERATED / "export" / "dtrace"))
    async with app.run_test(size=(150, 45)) as pilot:
        await _open_pane(app, pilot, "0/0", "6")
        pane = app.query_one("#dynamic-pane")
        await until(pilot, lambda: len(pane.root.children) == 2, what="the two groups")
        symbols, expressions = pane.root.children
        assert symbols.label.plain == "symbol created  1" and symbols.is_expanded
        assert "s6 = 8 for L['flat_args'][0].size()[0]" in symbols.children[0].label.plain
        assert expressions.label.plain == "expression created  282 · Enter to expand"
        assert not expressions.is_expanded
        assert pane.copy_text().split("\n") == [
            "symbol created  1", f"  {symbols.children[0].label.plain}",
            "expression created  282 · Enter to expand"]
        pane.focus()
        await press(pilot, "down", "down", "enter")  # the folded group's line
        await until(pilot, lambda: expressions.is_expanded and len(expressions.children) == 282)
        assert expressions.label.plain == "expression created  282"
        assert len(pane.copy_text().split("\n")) == 2 + 1 + 282


async def test_dynamic_pane_on_the_dynamic_shapes_corpus():
    app = TlviewApp(str(CORPUS / "dynamic_shapes" / "trace"))
    async with app.run_test(size=(150, 45)) as pilot:
        await _open_pane(app, pilot, "0/0", "6")
        pane = app.query_one("#dynamic-pane")
        await until(pilot, lambda: len(pane.root.children) == 3)
        lines = pane.copy_text().split("\n")
        assert lines[0] == "symbol created  1" and lines[1].startswith("  s77 = ")
        assert lines[2] == "specialization  1" and "specialized to" in lines[3]
        assert lines[4] == "guard added  1" and lines[5].startswith("  guard added: ")


# ---- the diff ------------------------------------------------------------------------------------

def test_a_failed_recompile_says_it_failed_and_diffs_no_guards():
    for path in (CORPUS / "recompiles" / "trace", CORPUS / "recompiles" / "torch_logs.txt"):
        index = open_index(str(path), parallel_ok=False)
        diff = recompile_diff(index, index.node(None, "3/4"))  # refused: the recompile limit
        assert diff.against.id == "3/3" and diff.failure.fail_type == "Unsupported"
        assert diff.guard_diff == [] and diff.graph_diff == []
        text = "\n".join(diff_lines(diff, 100))
        assert "# [3/4] failed: compile #5 of this frame was refused (the recompile limit)" in text
        assert "Unsupported: Dynamo recompile limit exceeded" in text
        assert "# guards" not in text and "TREE_GUARD_MANAGER" not in text
    ok = recompile_diff(index, index.node(None, "3/1"))
    assert ok.failure is None and ok.guard_diff


def test_diff_messages_wrap_and_diff_lines_do_not():
    index = open_index(str(CORPUS / "recompiles" / "trace"), parallel_ok=False)
    diff = recompile_diff(index, index.node(None, "3/1"))
    lines = diff_lines(diff, 40)
    guards_at = lines.index("# guards")
    assert all(len(line) <= 40 for line in lines[:guards_at])
    at = next(i for i, line in enumerate(lines) if line.startswith("!!!"))
    assert lines[at] == "!!! 3/0: tensor 'x' size mismatch at" and lines[at + 1].startswith("    ")
    assert " ".join(w for line in lines[at:at + 2] for w in line.split()) == "!!! " + diff.reason.summary
    assert any(len(line) > 40 for line in lines[guards_at:])  # a guard stays one line
    assert lines[guards_at:] == ["# guards", *diff.guard_diff, "", "# Dynamo output graph", *diff.graph_diff]


async def test_diff_pane_wraps_to_its_width_and_shows_a_failed_recompile():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=(90, 30)) as pilot:
        await ready(app, pilot)
        tree = app.query_one(FrameTree)
        for expected in ("0/1", "1/1", "2/1", "2/2", "3/1"):
            await pilot.press("r")
            await until(pilot, lambda: tree.entry.node.id == expected)
        await press(pilot, "8")
        pane = app.query_one("#diff-pane")
        view = pane.query_one(PayloadView)
        await until(pilot, lambda: "against [3/0]" in view.text)
        prose = view.text.split("\n# guards")[0].split("\n")
        assert max(map(len, prose)) <= pane.size.width - 8 < 80  # it wrapped, to the pane
        assert "+| | +- TENSOR_MATCH" in view.text  # the guard diff, whole
        narrow = view.text
        await pilot.resize_terminal(200, 30)  # wider: wrapped again to the new width
        await until(pilot, lambda: view.text != narrow and "against [3/0]" in view.text)
        assert "!!! 3/0: tensor 'x' size mismatch at index 1. expected 8, actual 10" in view.text
        for expected in ("3/2", "3/3", "3/4"):
            await pilot.press("r")
            await until(pilot, lambda: tree.entry.node.id == expected)
        await until(pilot, lambda: "against [3/3]" in view.text)
        assert "# [3/4] failed: compile #5 of this frame was refused (the recompile limit)" in view.text
        assert "-TREE_GUARD_MANAGER" not in view.text
