"""The stack trie: the user call stacks of every compile merged into a tree, laid out as tlparse
lays it out, each leaf with its compile ids and statuses. Compared with tlparse's own index.html
for the same inputs (when tlparse is installed), and with what tlparse 0.4.3 showed for the
graph-breaks run (always)."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import CORPUS, GENERATED, SCENARIOS
from rich.console import Console

from tlview.diagnose.stack_trie import stack_trie, trie_as_dict
from tlview.domain.verdict import Kind
from tlview.index.indexing import open_index
from tlview.report.stack_trie_look import trie_tree

TLPARSE = shutil.which("tlparse", path=str(Path(sys.executable).parent)) or shutil.which("tlparse")
# tlparse's status classes; tlparse calls any restart a break, and a break with no restart ok
TLPARSE_STATUS = {"ok": "ok", "break": "break", "restart": "break", "empty": "empty", "error": "error",
                  "missing": "missing"}


def tlparse_status(compile_) -> str:
    if compile_.status.word == "break" and not compile_.verdict.has(Kind.RESTART):
        return "ok"
    return TLPARSE_STATUS[compile_.status.word]


def tlparse_layout(root) -> list[tuple[int, str, list[str]]]:
    """(depth, frame, ["0/0 ok", ...]) in tlparse's order and indentation: a node's children are
    listed at one depth; they are indented under it only when it has siblings (stacks parted)."""
    out = []
    stack = [(child, 0, len(root.children) > 1) for child in reversed(root.children.values())]
    while stack:
        node, depth, parted = stack.pop()
        out.append((depth, str(node.frame),
                    [f"{c.key} {tlparse_status(c)}" for c in node.compiles]))
        inner = depth + 1 if parted else depth
        stack.extend((child, inner, len(node.children) > 1) for child in reversed(node.children.values()))
    return out


class TrieHtml(HTMLParser):
    """tlparse's stack trie (`<div class='stack-trie'>`) as (depth, frame, compile ids) lines."""

    def __init__(self) -> None:
        super().__init__()
        self.in_trie = False
        self.depth = 0
        self.lines: list[tuple[int, str, list[str]]] = []
        self.current: list | None = None
        self.link_class = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div" and attrs.get("class") == "stack-trie" and not self.lines:
            self.in_trie, self.depth = True, -1
        if not self.in_trie:
            return
        if tag == "ul":
            self._close()
            self.depth += 1
        elif tag == "li":
            self._close()
            self.current = [self.depth, "", []]
        elif tag == "a":
            self.link_class = attrs.get("class", "").removeprefix("status-")
        elif tag == "br" and self.current is not None:
            self.current[1] += "\n"

    def handle_endtag(self, tag):
        if not self.in_trie:
            return
        if tag == "ul":
            self._close()
            self.depth -= 1
            if self.depth < 0:
                self.in_trie = False
        elif tag == "li":
            self._close()
        elif tag == "a":
            self.link_class = None

    def handle_data(self, data):
        if self.current is None:
            return
        if self.link_class is not None:
            self.current[2].append(f"{data.strip('[]')} {self.link_class}")
        else:
            self.current[1] += data

    def _close(self):
        if self.current is not None:
            depth, text, ids = self.current
            # the compile ids' links, then the frame, then `<br>` and its source line
            frame = text.strip().split("\n", 1)[0].strip()
            if frame:
                self.lines.append((depth, frame, ids))
            self.current = None


def tlparse_trie(log, out_dir) -> list[tuple[int, str, list[str]]]:
    subprocess.run([TLPARSE, str(log), "-o", str(out_dir), "--overwrite", "--no-browser"],
                   check=True, capture_output=True)
    parser = TrieHtml()
    parser.feed((out_dir / "index.html").read_text())
    return parser.lines


GRAPH_BREAKS_BY_TLPARSE = [  # tlparse 0.4.3's index.html for fixtures/corpus/graph_breaks/trace
    (0, "/home/user/job/graph_breaks.py:53 in <module>", []),
    (0, "/home/user/job/graph_breaks.py:23 in step", ["0/0 break"]),
    (0, "/home/user/job/graph_breaks.py:48 in main", []),
    (1, "/home/user/job/graph_breaks.py:25 in torch_dynamo_resume_in_step_at_25", ["1/0 ok"]),
    (1, "/home/user/venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py:1166 in compile_wrapper", []),
    (2, "/home/user/job/graph_breaks.py:27 in torch_dynamo_resume_in_step_at_27", ["2/0 break"]),
    (2, "/home/user/job/graph_breaks.py:25 in step", []),
    (3, "/home/user/job/graph_breaks.py:31 in torch_dynamo_resume_in_step_at_31", ["3/0 break", "3/1 break"]),
    (3, "/home/user/job/graph_breaks.py:27 in torch_dynamo_resume_in_step_at_25", []),
    (4, "/home/user/job/graph_breaks.py:33 in torch_dynamo_resume_in_step_at_33", ["4/0 break"]),
    (4, "/home/user/job/graph_breaks.py:31 in torch_dynamo_resume_in_step_at_27", []),
    (5, "/home/user/job/graph_breaks.py:35 in torch_dynamo_resume_in_step_at_35", ["5/0 break"]),
    (5, "/home/user/job/graph_breaks.py:33 in torch_dynamo_resume_in_step_at_31", []),
    (6, "/home/user/job/graph_breaks.py:37 in torch_dynamo_resume_in_step_at_37", ["6/0 ok", "6/1 ok"]),
]


def test_graph_breaks_trie_is_tlparses():
    root = stack_trie(open_index(str(CORPUS / "graph_breaks" / "trace")))
    assert tlparse_layout(root) == GRAPH_BREAKS_BY_TLPARSE


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_corpus_tries_are_tlparses(tmp_path, scenario):
    for log in sorted((CORPUS / scenario / "trace").glob("*.log")):
        index = open_index(str(log))
        rank = index.ranks()[0]
        ours = tlparse_layout(stack_trie(index, rank if rank is not None else ...))
        assert ours == tlparse_trie(log, tmp_path / log.stem), log.name


def test_each_rank_of_the_four_rank_run_is_tlparses(tmp_path):
    index = open_index(str(GENERATED / "multi_rank4" / "trace"))
    for rank in range(4):
        log = next((GENERATED / "multi_rank4" / "trace").glob(f"*rank_{rank}_*.log"))
        assert tlparse_layout(stack_trie(index, rank)) == tlparse_trie(log, tmp_path / str(rank)), rank


def test_ranks_share_one_trie_with_their_compile_ids():
    index = open_index(str(GENERATED / "multi_rank4" / "trace"))
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(trie_tree(stack_trie(index), grouped=True))
    text = console.export_text()
    assert "✓ [0/0] ranks 0-3  ✓ [0/1] rank 1  /tmp/job/multi_rank4.py:24 in forward" in text
    assert "✓ [1/0] ranks 0-1,3  ◐ [1/0] rank 2  /tmp/job/multi_rank4.py:28 in report" in text
    assert "✓ [2/0] rank 2  /tmp/job/multi_rank4.py:32 in torch_dynamo_resume_in_report_at_32" in text
    assert "✓ [2/0] rank 3  /tmp/job/multi_rank4.py:36 in extra_stats" in text
    # string-table ids resolved (the stacks name their files by number)
    assert "unknown" not in text and "torch/_dynamo/eval_frame.py:1166 in compile_wrapper" in text


def test_text_logs_have_no_trie():
    assert not stack_trie(open_index(str(CORPUS / "graph_breaks" / "torch_logs.txt"))).children


def test_a_very_deep_stack_neither_recurses_nor_floods(tmp_path):
    source = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes()
    first = re.search(rb'(?m)^V[^\n]*\{"dynamo_start": \{"stack": (\[[^\n]*?\])\}', source)
    deep = json.dumps([{"line": i, "name": f"f{i}", "filename": 1} for i in range(5000)]).encode()
    (tmp_path / "dedicated_log_torch_trace_x.log").write_bytes(
        source[:first.start(1)] + deep + source[first.end(1):])
    root = stack_trie(open_index(str(tmp_path)))
    data = trie_as_dict(root)
    depth, node = 0, {"children": data}
    while node["children"]:
        node, depth = node["children"][0], depth + 1
    assert depth == 5000 and node["compiles"][0]["id"] == "0/0"
    console = Console(width=120, file=io.StringIO(), record=True, color_system=None)
    console.print(trie_tree(root, grouped=False))
    text = console.export_text()
    assert "… more frames" in text and len(text.splitlines()) < 2100


@pytest.mark.asyncio
@pytest.mark.parametrize("how", ["enter", "click"])
async def test_a_leaf_of_the_trie_opens_its_compile(how):
    """In the Run pane, Enter on the line of the current match (or a click on a compile id of the
    stack trie) selects that compile id in the tree; the trie was static text."""
    from conftest import press, ready, until

    from tlview.ui.app import TlviewApp
    from tlview.ui.rendered_view import RenderedView

    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(app, pilot)
        assert app.tree.entry.node.id == "0/0"
        await press(pilot, "9")
        body = app.query_one("#run-body", RenderedView)
        await until(pilot, lambda: any("Stack trie" in s.text for s in body._strips), what="the trie")
        body.focus()
        await press(pilot, "slash", *"[3/2]", "enter")
        trie = next(i for i, s in enumerate(body._strips) if "Stack trie" in s.text)
        for _ in range(body.search.total):
            if body.search.position()[0] > trie:
                break
            await press(pilot, "n")  # (the timeline names it first)
        line, _ = body.search.position()
        assert line > trie
        if how == "enter":
            await press(pilot, "enter")
        else:
            column = body._strips[line].text.index("[3/2]")
            await pilot.click(body, offset=(column + 1, line - body.scroll_offset.y))
        await until(pilot, lambda: app.tree.entry is not None and app.tree.entry.node.id == "3/2",
                    what="[3/2] selected")
        assert app.tree.has_focus


@pytest.mark.parametrize("width", [200, 80, 40])
def test_the_trie_is_drawn_as_rich_s_tree_in_parts(width, monkeypatch):
    """Drawn in parts of PART_LINES lines (the Run pane's thread may stop between two), each
    label drawn as it is where it fits: the same text as rich's Tree, wrapped labels too."""
    from tlview.report import stack_trie_look

    monkeypatch.setattr(stack_trie_look, "PART_LINES", 3)
    root = stack_trie(open_index(str(GENERATED / "multi_rank4" / "trace")))

    def drawn(renderable) -> str:
        console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
        console.print(renderable)
        return console.export_text()

    ours = trie_tree(root, grouped=True)
    lines = drawn(stack_trie_look.rich_tree(root, grouped=True))
    assert drawn(ours) == lines
    assert len(ours.renderables) == -(-len(stack_trie_look._guided_lines(
        stack_trie_look.rich_tree(root, grouped=True))) // 3) > 1
    if width == 40:
        assert len(lines.splitlines()) > 12  # (wrapped labels: what the test is about here)


def test_a_frame_names_its_first_compile_ids_and_counts_the_others(monkeypatch):
    """1,400 compile ids starting at one frame were 500 lines of that frame's line (170 ms to
    draw): past COMPILES_NAMED, the others are a count (the tree on the left lists them all)."""
    from tlview.report import stack_trie_look

    monkeypatch.setattr(stack_trie_look, "COMPILES_NAMED", 1)
    console = Console(width=200, file=io.StringIO(), record=True, color_system=None)
    console.print(trie_tree(stack_trie(open_index(str(GENERATED / "multi_rank4" / "trace"))), grouped=True))
    text = console.export_text()
    assert "✓ [0/0] ranks 0-3  … 1 more compile id  /tmp/job/multi_rank4.py:24 in forward" in text
    assert "[0/1]" not in text
