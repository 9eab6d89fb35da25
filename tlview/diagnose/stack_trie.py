"""The stack trie (tlparse's first view): the user call stacks that led to every compiled frame,
merged into one tree; where a stack ends, the compiles it started.

Each compile's stack is its `dynamo_start` record's `stack` (file names by string-table id,
resolved through the process's `str` records), read from disk once and remembered as a tuple of
shared frames. As tlparse does, the trailing frames of Dynamo's own `convert_frame.py` are cut,
and children keep the order stacks first reached them (roughly the order of the run).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

from tlview.diagnose.stepping import stepping
from tlview.domain.compile_node import Compile

# Dynamo's own frames that end some stacks (tlparse's maybe_remove_convert_frame_suffixes)
_CONVERT_FRAME = "torch/_dynamo/convert_frame.py"
_SUFFIXES = (("catch_errors", "_convert_frame", "_convert_frame_assert"),
             ("__call__", "__call__", "__call__"))


@dataclass(frozen=True, slots=True)
class StackFrame:
    filename: str
    line: object
    name: str
    code: str | None  # the source line torch logged (`loc`), if any

    def __str__(self) -> str:
        return f"{self.filename}:{self.line} in {self.name}"


@dataclass(eq=False)
class TrieNode:
    frame: StackFrame | None  # None at the root
    children: dict[StackFrame, TrieNode] = field(default_factory=dict)
    compiles: list[Compile] = field(default_factory=list)  # whose stacks end at this frame


@dataclass
class _Read:
    """The stacks read from one file: by record, their frames shared (one object per frame)."""

    stacks: dict[int, tuple[StackFrame, ...]] = field(default_factory=dict)
    frames: dict[StackFrame, StackFrame] = field(default_factory=dict)


_READ: weakref.WeakKeyDictionary[object, _Read] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def stack_trie(index, rank=..., between=None) -> TrieNode:
    """The trie of the compiles of one rank (or all): one stack per compile (its attempts share
    it). (`between`: stepping.py)"""
    root = TrieNode(None)
    seen: set = set()
    for node in stepping(index.iter_nodes(rank), between):
        compile_ = node.compile
        if node.start is None or compile_ is None or compile_ in seen:
            continue
        seen.add(compile_)
        stack = compile_stack(*node.start)
        if not stack:
            continue
        at = root
        for frame in stack:
            child = at.children.get(frame)
            if child is None:
                child = at.children[frame] = TrieNode(frame)
            at = child
        at.compiles.append(compile_)
    return root


def compile_stack(source, rec: int) -> tuple[StackFrame, ...]:
    """The resolved stack of a `dynamo_start` record, without Dynamo's trailing frames."""
    with _LOCK:
        read = _READ.setdefault(source, _Read())
        known = read.stacks.get(rec)
    if known is not None:
        return known
    frames = source.load_event(rec).get("stack") if hasattr(source, "load_event") else None
    stack = []
    for frame in frames if isinstance(frames, list) else []:
        if not isinstance(frame, dict):
            continue
        filename = frame.get("filename")
        filename = source.frame_filename(filename) if isinstance(filename, (int, str)) else "(unknown)"
        line, code = frame.get("line"), frame.get("loc")
        stack.append(StackFrame(filename, line if isinstance(line, int) else str(line),
                                str(frame.get("name")), code if isinstance(code, str) else None))
    stack = _without_convert_frame(stack)
    with _LOCK:
        shared = read.stacks[rec] = tuple(read.frames.setdefault(f, f) for f in stack)
    return shared


def _without_convert_frame(stack: list[StackFrame]) -> list[StackFrame]:
    for names in _SUFFIXES:
        tail = stack[-len(names):]
        if len(tail) == len(names) and all(
                f.filename.endswith(_CONVERT_FRAME) and f.name == n for f, n in zip(tail, names)):
            return stack[:-len(names)]
    return stack


def trie_as_dict(root: TrieNode) -> list[dict[str, Any]]:
    """The trie's children as plain data (to save or compare), built without recursion: a stack
    can be thousands of frames deep."""
    out: list[dict[str, Any]] = []
    pending = [(root, out)]
    while pending:
        node, into = pending.pop()
        for frame, child in node.children.items():  # (a child's frame is its key)
            children: list[dict[str, Any]] = []
            entry = {"frame": str(frame), "code": frame.code,
                     "compiles": [{"id": str(c.key), "rank": c.rank, "process": c.group.pid,
                                   "status": c.status.word} for c in child.compiles],
                     "children": children}
            into.append(entry)
            pending.append((child, children))
    return out
