"""Ranks with the same compile history, grouped: decided once here, read by the tree, the rank
switcher, `--report` and `--json` ("ranks 0-1022 the same; rank 1023 differs", never 1,024 rows).

A rank's history is its compile ids in the order its file has them, each with its compile's
status and the kinds of its problems (recompile, graph break, restart, failure); its records of
no compile id count when they have a problem (a failed export). One pass over the index's nodes:
linear in ranks and compile ids. Records with no rank (processes) are never grouped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tlview.domain.rank_runs import joined_runs, rank_runs, ranks_text

if TYPE_CHECKING:
    from tlview.domain.indexed_run import IndexedRun

Step = tuple[str, str, tuple[str, ...]]  # (compile id, status word, problem kinds)


@dataclass(frozen=True)
class RankGroup:
    """Ranks of one compile history; `rank` (the lowest) stands for them all."""

    ranks: tuple[int, ...]
    history: tuple[Step, ...]
    alike: bool  # the biggest group (the ranks that agree); the others differ from it

    @property
    def rank(self) -> int:
        return self.ranks[0]

    @property
    def count(self) -> int:
        return len(self.ranks)

    @property
    def signature(self) -> str:
        """A short digest of the history: equal for equal histories, in any run."""
        return hashlib.md5(repr(self.history).encode()).hexdigest()[:12]

    def title(self) -> str:
        """`ranks 0-1022 (1,023 alike)`, `8 ranks (0-14), alike`, `rank 1023 (differs)`: short,
        the tree's top level is as wide as its widest label."""
        said = ranks_text(self.ranks)
        if self.count > 1:  # (`5,000 ranks (0-4999)` counts them already)
            return f"{said}, alike" if "(" in said else f"{said} ({self.count:,} alike)"
        return f"{said} (differs)" if not self.alike else said

    def steps(self) -> list[str]:
        """`0/0 ok`, `1/0 error failure`: the history, one compile id a line."""
        return [" ".join([cid, status, *kinds]) for cid, status, kinds in self.history]


@dataclass
class RankGroups:
    """Every ranked group of the index, in order of their lowest rank."""

    groups: list[RankGroup] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._of = {rank: g for g in self.groups for rank in g.ranks}

    def __iter__(self) -> Iterator[RankGroup]:
        return iter(self.groups)

    def __len__(self) -> int:
        return len(self.groups)

    @property
    def folds(self) -> bool:
        """Some ranks stand for others (fewer groups than ranks)."""
        return len(self.groups) < len(self._of)

    def of(self, rank: int | None) -> RankGroup | None:
        return self._of.get(rank) if rank is not None else None

    def stands_for_itself(self, rank: int | None) -> bool:
        """Shown in a grouped view: no rank, an ungrouped rank, or the first rank of its group."""
        group = self.of(rank)
        return group is None or group.rank == rank

    def folded_nodes(self) -> int:
        """Compile ids of the ranks that another rank of their group stands for."""
        return sum((g.count - 1) * sum(1 for step in g.history if step[0] != "-") for g in self.groups)

    def as_data(self) -> list[dict[str, Any]]:
        """What `--json` gives (`rank_groups`)."""
        return [{"ranks": joined_runs(rank_runs(g.ranks)), "said": ranks_text(g.ranks), "title": g.title(),
                 "count": g.count, "rank": g.rank, "alike": g.alike,
                 "signature": g.signature, "compile_ids": len(g.history), "history": g.steps()}
                for g in self.groups]


def rank_groups(index: IndexedRun) -> RankGroups:
    """The index's ranks grouped by compile history (one pass over its nodes)."""
    histories: dict[int, list[Step]] = {}
    for node in index.iter_nodes():
        rank = node.group.rank
        if rank is None or node.compile is None:  # (the index links each node to its compile)
            continue
        verdict = node.compile.verdict  # (once: each look checks the compile's revisions)
        problems = verdict.problems
        kinds = tuple(sorted({p.kind.key for p in problems if p.node is node})) if problems else ()
        steps = histories.get(rank)
        if steps is None:
            steps = histories[rank] = []
        steps.append((node.id, verdict.status.word, kinds))
    for group, node in list(index.outside.items()):
        if group.rank is not None and node.compile is not None and (verdict := node.compile.verdict).problems:
            histories.setdefault(group.rank, []).append(
                ("-", verdict.status.word, tuple(sorted({p.kind.key for p in verdict.problems}))))
    by_history: dict[tuple[Step, ...], list[int]] = {}
    for rank in sorted(histories):
        by_history.setdefault(tuple(histories[rank]), []).append(rank)
    biggest = max(map(len, by_history.values()), default=0)
    first_biggest = next((h for h, r in by_history.items() if len(r) == biggest), None)
    groups = [RankGroup(tuple(ranks), history, history == first_biggest)
              for history, ranks in sorted(by_history.items(), key=lambda kv: kv[1][0])]
    return RankGroups(groups)
