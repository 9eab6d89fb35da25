"""What the domain's whole-run rules (totals.py, rank_history.py) read of an index: declared here
so that the domain names no type of the index above it (index/Index is one)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import EllipsisType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tlview.domain.compile_node import CompileNode
    from tlview.domain.group import Group


class IndexedRun(Protocol):
    def iter_nodes(self, rank: int | None | EllipsisType = ...) -> Iterator[CompileNode]:
        """Compile nodes in order of first appearance; of one rank (None: no rank) unless `...`."""
        ...

    @property
    def outside(self) -> Mapping[Group, CompileNode]:
        """Per group, the node of its records of no compile id (its Export entry)."""
        ...

    @property
    def sources(self) -> Sequence[object]:
        """The files read (TraceFile, TextLog): their records and md5 checks are counted."""
        ...

    @property
    def problems(self) -> Sequence[object]:
        """The problems found in the input."""
        ...

    @property
    def cache_events(self) -> Mapping[str, int]:
        """How many of each cache hit and miss the run logged."""
        ...
