"""How the stack trie (diagnose/stack_trie.py) looks: a rich Tree laid out as tlparse lays it out.
A frame with one child continues on the next line at the same depth (a plain list of frames, the
most recent call last); where stacks part, each branch is indented under its first frame. The
compiles a stack started are named after its last frame, with their status (`✓ [0/0]`) and, in a
run of several ranks, the ranks (`✓ [0/0] ranks 0-3`).
"""

from __future__ import annotations

from collections import deque

from rich.style import Style
from rich.text import Text
from rich.tree import Tree

from tlview.diagnose.stack_trie import TrieNode
from tlview.model.look import ranks_text, whose
from tlview.textsafe import visible

_PACKAGES = ("/site-packages/", "/dist-packages/")
OPENS = "opens_compile"  # a style's meta on text that names a compile: the seq of its first node
NODES_SHOWN = 2000  # a trie of more frames (10,000 compile ids) shows its first ones


def short_file(path: str) -> str:
    """A library's file from its package (`torch/_dynamo/eval_frame.py`); the user's in full."""
    for marker in _PACKAGES:
        at = path.rfind(marker)
        if at >= 0:
            return path[at + len(marker):]
    return path


def frame_text(node: TrieNode, grouped: bool) -> Text:
    frame = node.frame
    text = Text()
    for (key, status), compiles in _compiles_here(node).items():
        groups = [c.group for c in compiles]
        # (the explorer opens the compile from here: Enter or a click on the line, OPENS)
        text.append(f"{status.symbol} [{key}]", style=Style.parse(status.style) + Style(meta={OPENS: compiles[0].head.seq}))
        if grouped:
            text.append(f" {_whose(groups)}", style="dim")
        text.append("  ")
    text.append(visible(f"{short_file(frame.filename)}:{frame.line}"), style="bold" if node.compiles else "")
    text.append(f" in {visible(frame.name)}")
    if frame.code:
        text.append(f"  {visible(frame.code.strip())}", style="dim")
    return text


def trie_tree(root: TrieNode, grouped: bool, title: str = "Stack trie") -> Tree:
    """The whole trie as a rich Tree, built without recursion (stacks can be thousands of frames
    deep), breadth first: past NODES_SHOWN frames, the upper part of the trie is what shows."""
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
