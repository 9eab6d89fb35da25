"""Two runs compared (fixtures/generated/compare: before/after an edit), --fail-on for CI, and the
report as markdown (checked with a markdown parser)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import GENERATED, run_cli, until
from markdown_it import MarkdownIt

from tlview.ui.compare_app import CompareApp
from tlview.ui.detail import DetailPane

COMPARE = GENERATED / "compare"
BEFORE, AFTER = COMPARE / "before", COMPARE / "after"
FAILURES = GENERATED / "failures" / "trace"


def compared(before, after) -> dict:
    code, out = run_cli("--json", "--compare", str(before), str(after))
    assert code == 0, out
    return json.loads(out)


def found(doc: dict, group: str) -> set[tuple]:
    return {(p["kind"], p["cause"], p["function"]) for p in doc[group]}


def test_the_fix_and_the_new_break_are_told_apart():
    doc = compared(BEFORE / "trace", AFTER / "trace")
    assert found(doc, "gone") == {("recompile", "python_value", "step"),
                                  ("graph_break", "print_or_logging", "step")}
    assert found(doc, "new") == {("graph_break", "print_or_logging", "step")}
    assert found(doc, "same") == {("recompile", "size_mismatch", "pooled")}
    logging_break = next(p for p in doc["gone"] if p["kind"] == "graph_break")
    assert logging_break["count_before"] == 2 and logging_break["count_after"] == 0
    assert logging_break["compile_ids_before"] == ["0/0", "0/1"]
    assert logging_break["location"].endswith("compare.py:15")
    print_break = doc["new"][0]
    assert print_break["location"].endswith("compare.py:16") and print_break["compile_ids_after"] == ["0/0"]
    moved = doc["same"][0]  # an edit above it moved pooled() three lines: still the same problem
    # (its size guard is on x, whose first use is the line below the decorator)
    assert moved["location_before"].endswith(":22") and moved["location_after"].endswith(":25")
    assert (moved["count_before"], moved["count_after"]) == (2, 2)
    assert moved["compile_ids_after"] == ["2/1", "2/2"]
    for key in ("kind", "cause", "function", "location", "count_before", "count_after",
                "compile_ids_before", "compile_ids_after"):
        assert all(key in p for group in ("gone", "new", "same") for p in doc[group])
    assert (doc["before"]["recompiles"], doc["after"]["recompiles"]) == (3, 2)
    assert (doc["before"]["graph_breaks"], doc["after"]["graph_breaks"]) == (2, 1)
    assert doc["compile_seconds_change"] == pytest.approx(
        doc["after"]["compile_seconds"] - doc["before"]["compile_seconds"], abs=1e-3)


def test_text_logs_compare_like_traces():
    doc = compared(BEFORE / "torch_logs.txt", AFTER / "torch_logs.txt")
    assert ("recompile", "python_value", "step") in found(doc, "gone")
    assert ("recompile", "size_mismatch", "pooled") in found(doc, "same")
    assert [p["kind"] for p in doc["new"]] == ["graph_break"]
    assert doc["new"][0]["location"].endswith("compare.py:16")


def test_a_run_compared_with_itself_has_nothing_gone_or_new():
    doc = compared(BEFORE / "trace", BEFORE / "trace")
    assert doc["gone"] == [] and doc["new"] == [] and len(doc["same"]) == 3


def test_fail_on_new_gates_ci():
    code, out = run_cli("--compare", str(BEFORE / "trace"), str(AFTER / "trace"), "--fail-on", "new")
    assert code == 1
    assert out.splitlines() == [line for line in out.splitlines() if line.startswith("new ")]
    assert len(out.splitlines()) == 1 and "compare.py:16" in out and "print" in out
    code, out = run_cli("--compare", str(AFTER / "trace"), str(AFTER / "trace"), "--fail-on", "new")
    assert (code, out) == (0, "")


def test_fail_on_a_single_run():
    code, out = run_cli("--fail-on", "errors", str(FAILURES))
    assert code == 1 and len(out.splitlines()) == 3  # three compiles failed
    assert all(line.startswith("found failure") for line in out.splitlines())
    code, out = run_cli("--fail-on", "errors", str(AFTER / "trace"))
    assert (code, out) == (0, "")
    code, out = run_cli("--fail-on", "recompiles,graph_breaks", str(AFTER / "trace"))
    assert code == 1 and {line.split()[1] for line in out.splitlines()} == {"recompile", "graph_break"}


def test_fail_on_with_json_keeps_one_document_on_stdout():
    process = subprocess.run([sys.executable, "-m", "tlview", "--json", "--fail-on", "errors", str(FAILURES)],
                             capture_output=True, text=True)
    assert process.returncode == 1
    assert json.loads(process.stdout)["totals"]["errors"] == 3
    assert len(process.stderr.splitlines()) == 3


@pytest.mark.parametrize("args, message", [
    (["--fail-on", "new", str(FAILURES)], "needs --compare"),
    (["--fail-on", "breaks", str(FAILURES)], "unknown 'breaks'"),
    (["--markdown", str(FAILURES)], "goes with --report"),
    (["--compare", str(FAILURES), str(FAILURES), str(FAILURES)], "--compare takes the two runs"),
])
def test_bad_compare_command_lines(args, message, capsys):
    code, _ = run_cli(*args)
    assert code == 2 and message in capsys.readouterr().err


def _markdown_tables(text: str) -> list[list[list[str]]]:
    """Each table's body rows, as cell texts (a GFM parser, not a regex)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables, rows, row = [], None, None
    for i, token in enumerate(tokens):
        if token.type == "tbody_open":
            rows = []
        elif token.type == "tbody_close":
            tables.append(rows)
            rows = None
        elif rows is not None and token.type == "tr_open":
            row = []
        elif rows is not None and token.type == "tr_close":
            rows.append(row)
        elif rows is not None and token.type == "inline" and tokens[i - 1].type == "td_open":
            row.append(token.content)
    return tables


def test_markdown_report_of_a_run_with_failures():
    code, out = run_cli("--report", "--markdown", str(FAILURES))
    assert code == 0
    code, doc = run_cli("--json", str(FAILURES))
    ids = [c["id"] for c in json.loads(doc)["compiles"]]
    (table,) = _markdown_tables(out)
    assert len(table) == len(ids) == 8  # one row per compile id
    assert [row[0].strip("`[]") for row in table] == ids
    assert [row[1] for row in table].count("error") == 3
    tokens = MarkdownIt("commonmark").enable("table").parse(out)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "Failures" in headings and "Graph breaks" in headings
    fences = [t.content for t in tokens if t.type == "fence"]
    assert any("broken_backend refuses to compile" in f for f in fences)
    assert "\x1b" not in out and max(len(line) for line in out.splitlines()) < 400


def test_markdown_of_a_comparison():
    code, out = run_cli("--report", "--markdown", "--compare", str(BEFORE / "trace"), str(AFTER / "trace"))
    assert code == 0
    totals, gone, new, same = _markdown_tables(out)
    assert [row[0] for row in totals][:3] == ["compile ids", "recompiles", "graph breaks"]
    assert (len(gone), len(new), len(same)) == (2, 1, 1)
    assert new[0][:3] == ["graph_break", "print_or_logging", "step"]


def test_markdown_keeps_log_text_out_of_markdown(tmp_path):
    from tlview.report.markdown import cell, code, prose

    assert cell("a | b \\ c") == "a \\| b \\\\ c"
    # (an underscore inside a word is no emphasis: kept, greppable)
    assert prose("x_y *z* [link](u) `c`") == "x_y \\*z\\* \\[link\\](u) \\`c\\`"
    assert code("uses `ticks`") == "`` uses `ticks` ``"
    assert "\x1b" not in cell("\x1b[2Jred")


async def test_compare_view_opens_each_problem_in_its_run():
    app = CompareApp(str(BEFORE / "trace"), str(AFTER / "trace"))
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: app.comparison is not None, what="the comparison")
        await pilot.pause()
        tree = app.tree
        groups = [str(node.label) for node in tree.root.children]
        assert groups == ["Gone (2)", "New (1)", "Same (1)"]
        new_item = tree.root.children[1].children[0]
        leaf = new_item.children[0]
        assert str(leaf.label) == "after: [0/0]"
        tree.move_cursor(leaf)
        await pilot.pause()
        selection = app.query_one(DetailPane).selection
        assert selection.index is not None and selection.entry.node.id == "0/0"
        assert str(selection.index.sources[0].path).startswith(str(AFTER))
        assert "print" in str(app.query_one("#problem").content)
        same_item = tree.root.children[2].children[0]
        assert not same_item.is_expanded  # what stayed is folded: what changed comes first
        same_item.expand()
        await pilot.pause()
        before_leaf = next(n for n in same_item.children if str(n.label).startswith("before"))
        tree.move_cursor(before_leaf)
        await pilot.pause()
        selection = app.query_one(DetailPane).selection
        assert str(selection.index.sources[0].path).startswith(str(BEFORE))
        assert selection.entry.node.id == "2/1"
        await pilot.press("q")
