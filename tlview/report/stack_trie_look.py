"""How the stack trie (diagnose/stack_trie.py) looks: a tree laid out as tlparse lays it out.
A frame with one child continues on the next line at the same depth (a plain list of frames, the
most recent call last); where stacks part, each branch is indented under its first frame. The
compiles a stack started are named after its last frame, with their status (`✓ [0/0]`) and, in a
run of several ranks, the ranks (`✓ [0/0] ranks 0-3`).
"""

from __future__ import annotations

from collections import deque
from typing import cast

from rich.console import Group
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from rich.tree import Tree

from tlview.diagnose.stack_trie import TrieNode
from tlview.report.rich_text import counted, ranks_text, whose
from tlview.textsafe import visible

_PACKAGES = ("/site-packages/", "/dist-packages/")
OPENS = "opens_compile"  # a style's meta on text that names a compile: the seq of its first node
NODES_SHOWN = 2000  # a trie of more frames (10,000 compile ids) shows its first ones
# compile ids named on a frame's line: 1,400 compile ids of one frame were 500 lines of them,
# 170 ms to draw (the others are a count; the tree on the left lists them all)
COMPILES_NAMED = 32


def short_file(path: str) -> str:
    """A library's file from its package (`torch/_dynamo/eval_frame.py`); the user's in full."""
    for marker in _PACKAGES:
        at = path.rfind(marker)
        if at >= 0:
            return path[at + len(marker):]
    return path


def frame_text(node: TrieNode, grouped: bool) -> Text:
    frame = node.frame
    assert frame is not None, "the root has no frame, and no line"
    text = Text()
    here = list(_compiles_here(node).items())
    for (key, status), compiles in here[:COMPILES_NAMED]:
        groups = [c.group for c in compiles]
        # (the explorer opens the compile from here: Enter or a click on the line, OPENS)
        opens = Style(meta={OPENS: compiles[0].head.seq})
        text.append(f"{status.symbol} [{key}]", style=Style.parse(status.style) + opens)
        if grouped:
            text.append(f" {_whose(groups)}", style="dim")
        text.append("  ")
    if len(here) > COMPILES_NAMED:
        text.append(f"… {counted(len(here) - COMPILES_NAMED, 'more compile id')}  ", style="dim")
    text.append(visible(f"{short_file(frame.filename)}:{frame.line}"), style="bold" if node.compiles else "")
    text.append(f" in {visible(frame.name)}")
    if frame.code:
        text.append(f"  {visible(frame.code.strip())}", style="dim")
    return text


def trie_tree(root: TrieNode, grouped: bool, title: str = "Stack trie") -> Group:
    """The whole trie, drawn as rich's Tree draws it, in parts of PART_LINES lines (the Run
    pane's thread may stop or step back between two). Rich's Tree drew its lines in one piece,
    each label a renderable of its own: 0.2-0.3 ms a line (2,000 frames shown: 0.5 s)."""
    lines = _guided_lines(rich_tree(root, grouped, title))
    return Group(*(_TrieLines(lines[at:at + PART_LINES]) for at in range(0, len(lines), PART_LINES)))


def rich_tree(root: TrieNode, grouped: bool, title: str = "Stack trie") -> Tree:
    """The trie as a rich Tree, built without recursion (stacks can be thousands of frames deep),
    breadth first: past NODES_SHOWN frames, the upper part of the trie is what shows."""
    tree = Tree(Text(title, style="bold"), guide_style="dim")
    shown = 0
    pending = deque([(root, tree)])
    while pending and shown < NODES_SHOWN:
        node, branch = pending.popleft()
        children = list(node.children.values())
        if len(children) == 1:  # one way on: the next frame at the same depth, as tlparse lists it
            branch.add(frame_text(children[0], grouped))
            pending.append((children[0], branch))
        else:  # stacks part: each branch under its own first frame
            pending.extend((child, branch.add(frame_text(child, grouped))) for child in children)
        shown += len(children)
    if pending:
        tree.add(Text(f"… more frames (the first {NODES_SHOWN:,} are shown)", style="dim"))
    return tree


PART_LINES = 64
_FORK, _END, _CONTINUE, _SPACE = "├── ", "└── ", "│   ", "    "  # rich's Tree's guides


def _guided_lines(tree: Tree) -> list[tuple[str, str, Text]]:
    """(guides, guides of its wrapped lines, label) of each node, in the order rich's Tree draws
    them (depth first), without recursion."""
    out = [("", "", cast(Text, tree.label))]  # (rich_tree labels each node with a Text)
    stack = [(tree.children, 0, "")]
    while stack:
        children, at, above = stack.pop()
        if at >= len(children):
            continue
        stack.append((children, at + 1, above))
        node, last = children[at], at == len(children) - 1
        out.append((above + (_END if last else _FORK), above + (_SPACE if last else _CONTINUE), cast(Text, node.label)))
        if node.children:
            stack.append((node.children, 0, above + (_SPACE if last else _CONTINUE)))
    return out


class _TrieLines:
    """Lines of the trie: each its guides (dim), then its label, wrapped under its own start
    where it is wider than what is left (a label that fits is drawn as it is: rich's Tree
    rendered every label as a renderable of its own, the most of its time)."""

    def __init__(self, lines: list[tuple[str, str, Text]]) -> None:
        self.lines = lines

    def __rich_console__(self, console, options):
        guide_style = console.get_style("dim")
        new_line = Segment.line()
        for guides, hang, label in self.lines:
            room = options.max_width - len(guides)
            if label.cell_len <= room and "\n" not in label.plain:
                if guides:
                    yield Segment(guides, guide_style)
                segments = label.render(console, end="")
                yield from Segment.apply_style(segments, console.get_style(label.style)) if label.style else segments
                yield new_line
                continue
            for number, line in enumerate(console.render_lines(label, options.update(width=max(room, 1)), pad=False)):
                if guides:
                    yield Segment(hang if number else guides, guide_style)
                yield from line
                yield new_line


def _compiles_here(node: TrieNode) -> dict:
    """(compile id, status) -> the ranks or processes where it is so, in order: `[1/0]` ok on
    ranks 0,1,3 and a break on rank 2 are two entries."""
    out: dict = {}
    for compile_ in node.compiles:
        out.setdefault((str(compile_.key), compile_.status), []).append(compile_)
    return out


def _whose(groups) -> str:
    ranks = [g.rank for g in groups if g.rank is not None]
    others = [whose(g.rank, g.pid) for g in groups if g.rank is None]
    return ", ".join(([ranks_text(ranks)] if ranks else []) + others)
