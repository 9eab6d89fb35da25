"""Ranks that did the same, grouped: decided once here, read by the tree, the rank switcher,
`--report` and `--json` ("ranks 0-1022 the same; rank 1023 differs", never 1,024 rows).

Ranks are alike when their compile histories are and they ran the same (`Ran`: the collectives
they ran and their graph execution order, which tlview.diagnose reads from the graphs' artifacts
and hands in; its `rank_groups(index)` is the one caller chain). A rank's history is its compile
ids in the order its file has them, each with its compile's status and the kinds of its problems
(recompile, graph break, restart, failure; not perf); its records of no compile id count when they have a
problem (a failed export). One pass over the index's nodes: linear in ranks and compile ids.
Records with no rank (processes) are never grouped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tlview.domain.rank_runs import joined_runs, rank_runs, ranks_text
from tlview.domain.verdict import Kind

if TYPE_CHECKING:
    from tlview.domain.indexed_run import IndexedRun

Step = tuple[str, str, tuple[str, ...]]  # (compile id, status word, problem kinds)
NO_ORDER = "no execution order logged"


@dataclass(frozen=True)
class Ran:
    """What a rank ran, as far as its graphs' artifacts tell: the collectives it issued (each
    graph's collective schedule every time the graph ran, in its graph execution order; where
    the rank logged no order, those of the graphs it compiled) and its execution order."""

    order_logged: bool
    graphs_run: int | None  # None: no order logged
    collectives: int  # how many (`wait_tensor`, the wait on one, is not one)
    digest: str  # of the collectives in order and the execution order: equal for equal runs

    def as_data(self) -> dict[str, Any]:
        return {"execution_order_logged": self.order_logged, "graphs_run": self.graphs_run,
                "collectives": self.collectives}


@dataclass(frozen=True)
class RankGroup:
    """Ranks of one compile history that ran the same; `rank` (the lowest) stands for them all."""

    ranks: tuple[int, ...]
    history: tuple[Step, ...]
    alike: bool  # the biggest group (the ranks that agree); the others differ from it
    ran: Ran | None = None  # None: no rank of the job logged a collective schedule or an order
    note: str = ""  # NO_ORDER: this group logged no execution order where others did

    @property
    def rank(self) -> int:
        return self.ranks[0]

    @property
    def count(self) -> int:
        return len(self.ranks)

    @property
    def signature(self) -> str:
        """A short digest of the history (and of what the ranks ran): equal for equal ranks, in any
        run."""
        said = repr(self.history) if self.ran is None else repr((self.history, self.ran))
        return hashlib.md5(said.encode()).hexdigest()[:12]

    def title(self) -> str:
        """`ranks 0-1022 (1,023 alike)`, `8 ranks (0-14), alike`, `rank 1023 (differs)`: short,
        the tree's top level is as wide as its widest label."""
        said = ranks_text(self.ranks)
        if self.note:
            return f"{said} ({self.note})"
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
                 "signature": g.signature, "compile_ids": len(g.history), "history": g.steps(),
                 **({"ran": g.ran.as_data()} if g.ran is not None else {})}
                for g in self.groups]


def group_ranks(index: IndexedRun, ran: Mapping[int, Ran]) -> RankGroups:
    """The index's ranks grouped by compile history and by what they ran (`ran`, of every rank
    when a rank logged a collective schedule or an order, else empty), in one pass over its
    nodes. A rank with no logged execution order among ranks that have one is apart, never
    among those it cannot be compared to."""
    histories: dict[int, list[Step]] = {}
    for node in index.iter_nodes():
        rank = node.group.rank
        if rank is None or node.compile is None:  # (the index links each node to its compile)
            continue
        verdict = node.compile.verdict  # (once: each look checks the compile's revisions)
        problems = verdict.problems
        # (not its perf problems: a compile's time, over a threshold on one rank and not on
        # another, would part ranks that compiled the same)
        kinds = tuple(sorted({p.kind.key for p in problems if p.node is node and p.kind is not Kind.PERF})) \
            if problems else ()
        steps = histories.get(rank)
        if steps is None:
            steps = histories[rank] = []
        steps.append((node.id, verdict.status.word, kinds))
    for group, node in list(index.outside.items()):
        if group.rank is not None and node.compile is not None and (verdict := node.compile.verdict).problems:
            histories.setdefault(group.rank, []).append(
                ("-", verdict.status.word, tuple(sorted({p.kind.key for p in verdict.problems
                                                         if p.kind is not Kind.PERF}))))
    by_both: dict[tuple[tuple[Step, ...], Ran | None], list[int]] = {}
    for rank in sorted(histories):
        by_both.setdefault((tuple(histories[rank]), ran.get(rank)), []).append(rank)
    biggest = max(map(len, by_both.values()), default=0)
    first_biggest = next((k for k, r in by_both.items() if len(r) == biggest), None)
    some_ordered = any(r.order_logged for r in ran.values())
    groups = [RankGroup(tuple(ranks), history, key == first_biggest, done,
                        NO_ORDER if some_ordered and done is not None and not done.order_logged else "")
              for key, ranks in sorted(by_both.items(), key=lambda kv: kv[1][0])
              for history, done in [key]]
    return RankGroups(groups)
