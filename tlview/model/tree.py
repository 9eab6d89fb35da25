"""The frame tree as the UI shows it: ranks > frames > compiles > attempts, filtered.

Built from the index without Textual, so the tree's content is tested headless and the widget
only renders it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import cached_property

from tlview.model.compile_node import Compile, CompileNode
from tlview.model.filters import Filter
from tlview.model.index import Index

STATUS_SYMBOL = {"ok": "✓", "break": "◐", "error": "✗", "empty": "○", "missing": "?", "compiling": "…"}


@dataclass(eq=False)
class TreeEntry:
    key: tuple  # stable across rebuilds: ("rank", r), ("frame", r, fk), ("cid", r, cid)
    kind: str  # rank, frame, compile, attempt
    label: str
    status: str | None = None
    node: CompileNode | None = None
    compile: Compile | None = None
    rank: int | None = None
    children: list["TreeEntry"] = field(default_factory=list)
    compile_ids: int = 0  # compile ids at or below this entry (shown)


@dataclass
class TreeModel:
    roots: list[TreeEntry]
    shown: int  # compile ids shown
    hidden: int  # compile ids hidden by the filter
    multi_rank: bool

    def walk(self):
        stack = list(reversed(self.roots))
        while stack:
            entry = stack.pop()
            yield entry
            stack.extend(reversed(entry.children))

    @cached_property
    def _compile_entries(self) -> list[TreeEntry]:
        return [e for e in self.walk() if e.node is not None]

    def compile_entries(self) -> list[TreeEntry]:
        """Compile ids and attempts, in tree order (cached: a model is never changed)."""
        return self._compile_entries

    @cached_property
    def positions(self) -> dict[int, int]:
        """id(entry) -> its place in compile_entries()."""
        return {id(e): i for i, e in enumerate(self._compile_entries)}

    def next_matching(self, current: "TreeEntry | None", predicate, step: int) -> "TreeEntry | None":
        """The next (step 1) or previous (step -1) entry where `predicate` holds, wrapping."""
        cache = self.__dict__.setdefault("_matches", {})
        matches = cache.get(predicate)
        if matches is None:
            matches = cache[predicate] = [i for i, e in enumerate(self._compile_entries) if predicate(e)]
        if not matches:
            return None
        here = self.positions.get(id(current), -1) if current is not None else -1
        if step > 0:
            at = bisect_right(matches, here)
            index = matches[at] if at < len(matches) else matches[0]
        else:
            at = bisect_left(matches, here) - 1
            index = matches[at] if at >= 0 else matches[-1]
        return self._compile_entries[index]


def build_tree(index: Index, flt: Filter | None = None, live: bool = False) -> TreeModel:
    """With `live`, the newest compile of each rank that has no metrics yet is `compiling`
    (while following, "missing" would be wrong for a compile still under way)."""
    flt = flt or Filter()
    newest = _newest_compiles(index) if live else set()
    # Snapshots (one C-level copy each, under the GIL), not the lock: the UI must never
    # wait for an indexing chunk.
    frames = [(key, list(compiles)) for key, compiles in list(index.frames.items())]
    total = sum(len(c.attempts) for _, cs in frames for c in cs)
    ranks = sorted({rank for (rank, _), _ in frames}, key=lambda r: -1 if r is None else r)
    multi_rank = len(ranks) > 1
    rank_entries: dict = {}
    roots: list[TreeEntry] = []
    shown = 0
    for (rank, frame_key), compiles in frames:
        if flt.rank is not None and rank != flt.rank:
            continue
        compile_entries = []
        for compile_ in compiles:
            attempts = list(compile_.attempts)
            if flt.active and not any(flt.matches(index, n) for n in attempts):
                continue
            compile_entries.append(_compile_entry(rank, compile_, attempts,
                                                  live=id(compile_) in newest))
        if not compile_entries:
            continue
        count = sum(1 + len(e.children) for e in compile_entries)
        shown += count
        named = next((n for c in compiles for n in c.attempts if n.function()), None)
        first = named or compile_entries[0].node
        frame = TreeEntry(("frame", rank, frame_key), "frame", frame_label(first, frame_key),
                          rank=rank, children=compile_entries, compile_ids=count)
        frame.status = worst_status(e.status for e in compile_entries)
        if multi_rank:
            parent = rank_entries.get(rank)
            if parent is None:
                parent = rank_entries[rank] = TreeEntry(("rank", rank), "rank", f"rank {rank}",
                                                        rank=rank)
                roots.append(parent)
            parent.children.append(frame)
            parent.compile_ids += count
        else:
            roots.append(frame)
    for entry in rank_entries.values():
        entry.status = worst_status(c.status for c in entry.children)
        entry.label = f"rank {entry.rank}"
    if multi_rank:
        roots.sort(key=lambda e: -1 if e.rank is None else e.rank)
    return TreeModel(roots, shown, total - shown, multi_rank)


def _newest_compiles(index: Index) -> set[int]:
    newest: dict = {}
    for node in index.iter_nodes():
        if node.compile is not None and (node.rank not in newest or node.seq > newest[node.rank].seq):
            newest[node.rank] = node
    return {id(n.compile) for n in newest.values()}


def _compile_entry(rank, compile_: Compile, attempts: list[CompileNode], live: bool = False) -> TreeEntry:
    status = compile_.status
    if live and status == "missing":
        status = "compiling"
    head = attempts[0]
    entry = TreeEntry(("cid", rank, head.cid), "compile", compile_label(head, status), status,
                      head, compile_, rank)
    for node in attempts[1:]:
        entry.children.append(TreeEntry(("cid", rank, node.cid), "attempt",
                                        compile_label(node, status, attempt=True), status, node,
                                        compile_, rank))
    return entry


def frame_label(node: CompileNode, frame_key) -> str:
    autograd, frame = frame_key
    function = node.function() or "?"
    location = node.location()
    where = location.rsplit("/", 1)[-1] if location else ""
    prefix = f"!{autograd} " if autograd is not None else ""
    if frame is None and autograd is not None:
        return f"compiled autograd !{autograd}"
    return f"{prefix}{function}  {where}".rstrip()


def compile_label(node: CompileNode, status: str, attempt: bool = False) -> str:
    """`✗ [3/4] error  ↻4 ✂1 G13` — symbol and word, so it reads without colour."""
    parts = [f"{STATUS_SYMBOL.get(status, '?')} [{node.id}]"]
    if not attempt:
        parts.append(status)
    breaks = len(node.effective_graph_breaks())
    reasons = node.effective_recompile_reasons()
    if reasons and node.cid.attempt == 0:
        parts.append(f"↻{len(reasons)}")
    if breaks:
        parts.append(f"✂{breaks}")
    guards = (node.metrics or {}).get("guard_count")
    if guards:
        parts.append(f"G{guards}")
    if node.problems:
        parts.append(f"⚠{len(node.problems)}")
    return "  ".join(parts)


_SEVERITY = {"error": 4, "break": 3, "missing": 2, "empty": 1, "ok": 0}


def worst_status(statuses) -> str | None:
    worst = None
    for status in statuses:
        if status is not None and (worst is None or _SEVERITY.get(status, 0) > _SEVERITY.get(worst, 0)):
            worst = status
    return worst
