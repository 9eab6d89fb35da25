"""The counts of a run, with the meanings of shared/corpus/README.md, from the model's own rules."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from types import EllipsisType
from typing import TYPE_CHECKING

from tlview.domain.verdict import Kind

if TYPE_CHECKING:
    from tlview.domain.compile_node import Compile, CompileNode
    from tlview.domain.group import Group
    from tlview.domain.indexed_run import IndexedRun

FrameKey = tuple["Group", int]  # (group, frame id): one code object Dynamo compiled


@dataclass
class Totals:
    compile_ids: int = 0
    frames: int = 0
    compiles: int = 0
    recompiles: int = 0
    graph_breaks: int = 0
    compiles_with_graph_break: int = 0
    errors: int = 0
    restarts: int = 0
    skipped_frames: int = 0  # frames Dynamo gave up: they run eagerly
    graph_breaks_by_design: int = 0  # breaks PyTorch makes on purpose in its own code (not in graph_breaks)
    perf: int = 0  # perf problems (domain/perf.py)
    records: int = 0
    problems: int = 0
    md5_bad: int = 0
    cache_events: dict[str, int] = field(default_factory=dict)


def totals(index: IndexedRun, rank: int | None | EllipsisType = ...,
           keep: Callable[[CompileNode], bool] | None = None) -> Totals:
    """Summed over ranks, or for one rank, or over the compiles a filter keeps (`keep(node)`):
    every count is a count of the verdicts' problems."""
    t = Totals()
    nodes = [n for n in [*index.iter_nodes(rank), *list(index.outside.values())]
             if n.compile is not None and (rank is ... or n.rank == rank) and (keep is None or keep(n))]
    compiles = {n.compile for n in nodes if n.compile is not None}  # (`nodes` holds no other: for mypy)
    frames: set[FrameKey] = set()
    for compile_ in compiles:
        counts, its_frames = _counts_of(compile_)
        for name, value in counts.items():
            setattr(t, name, getattr(t, name) + value)
        frames |= its_frames
    t.frames = len(frames)
    sources = [s for s in index.sources if rank is ... or getattr(s, "rank", None) == rank]
    t.records, t.md5_bad = _records_and_md5_bad(sources)
    t.problems = len(index.problems)
    t.cache_events = dict(list(index.cache_events.items()))
    return t


_OFFSETS = attrgetter("offsets")
_MD5_BAD = attrgetter("md5_bad")


def _records_and_md5_bad(sources: Sequence[object]) -> tuple[int, int]:
    """Summed by map, in C: a loop over 20,000 rank files took 8-10 ms, at each update of the
    explorer's views."""
    return sum(map(len, map(_OFFSETS, sources))), sum(map(_MD5_BAD, sources))


class RunningTotals:
    """The run's totals kept up to date from the compiles that changed (`Index.take_changes()`):
    a live status line costs what changed, not the size of the run (measured: 44 ms a refresh for
    totals() at 10,000 compile ids). Always equal to totals(index)."""

    _FIELDS = ("compile_ids", "compiles", "recompiles", "graph_breaks", "errors", "restarts",
               "skipped_frames", "graph_breaks_by_design", "compiles_with_graph_break", "perf")

    def __init__(self, index: IndexedRun) -> None:
        self.index = index
        self._parts: dict[Compile, tuple[dict[str, int], set[FrameKey]]] = {}  # (its counts, its frames)
        self._sums = dict.fromkeys(self._FIELDS, 0)
        self._frames: Counter[FrameKey] = Counter()
        self.add({node.compile for node in [*index.iter_nodes(), *list(index.outside.values())]
                  if node.compile is not None})

    def add(self, compiles: Iterable[Compile]) -> None:
        """Count these compiles (new, or changed since they were counted)."""
        for compile_ in compiles:
            old = self._parts.pop(compile_, None)
            if old is not None:
                self._count(old, sign=-1)
            part = _counts_of(compile_)
            self._parts[compile_] = part
            self._count(part, sign=1)

    def _count(self, part: tuple[dict[str, int], set[FrameKey]], sign: int) -> None:
        counts, frames = part
        for name, value in counts.items():
            self._sums[name] += sign * value
        for frame in frames:
            self._frames[frame] += sign
            if not self._frames[frame]:
                del self._frames[frame]

    def snapshot(self) -> Totals:
        t = Totals(frames=len(self._frames))
        for name, value in self._sums.items():
            setattr(t, name, value)
        t.records, t.md5_bad = _records_and_md5_bad(list(self.index.sources))
        t.problems = len(self.index.problems)
        t.cache_events = dict(list(self.index.cache_events.items()))
        return t


_WORDS = [kind.word for kind in Kind] + ["graph_breaks_by_design"]


def _counts_of(compile_: Compile) -> tuple[dict[str, int], set[FrameKey]]:
    """What one compile (or Export entry) adds to the totals: its verdict's problems by kind."""
    verdict = compile_.verdict
    owned = verdict.owned_by(compile_)
    counts = dict.fromkeys(_WORDS, 0)
    for problem in owned:
        counts[problem.counted_as] += 1
    if compile_.head.is_outside:  # an Export entry: no compile id, but its failures count
        return counts, set()
    nodes = [n for n in compile_.attempts if n.cid.frame is not None or n.cid.autograd is not None]
    # a compiled-autograd capture with no frame (`!0/-/-`) is not a compile
    counts["compile_ids"] = len(nodes)
    counts["compiles"] = int(compile_.key.frame is not None)
    counts["compiles_with_graph_break"] = int(any(p.kind is Kind.GRAPH_BREAK for p in owned))
    return counts, {(n.group, n.cid.frame) for n in nodes if n.cid.frame is not None}
