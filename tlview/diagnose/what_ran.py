"""What each rank ran, read from its graphs' artifacts (rank_graphs): the collectives it issued
and its graph execution order, one `Ran` a rank; and the index's ranks grouped by it together
with their compile history, `rank_groups(index)`: the one grouping the tree, the rank switcher,
`--report`, markdown and `--json` read (for a job's traces and its text alike), so that no rank
table says "6 alike" under a hang line that singles out one of them.
"""

from __future__ import annotations

import hashlib

from tlview.diagnose.collectives import compiled_collectives, executed_collectives
from tlview.diagnose.rank_graphs import RankGraphs, collect
from tlview.domain.rank_history import Ran, RankGroups, group_ranks
from tlview.index.index import Index


def what_ran(graphs: RankGraphs) -> dict[int, Ran]:
    """Each rank's `Ran`; empty when no rank logged a collective schedule or an execution order
    (nothing to tell the ranks apart by but their compile history). A rank with no order, where
    others logged one, is said by the collectives it compiled."""
    if not graphs.schedules and not graphs.execution:
        return {}
    ran = {}
    digests: dict[tuple, str] = {}  # ranks alike issue equal sequences: one digest each
    for rank in graphs.ranks:
        order = graphs.execution.get(rank)
        issued = executed_collectives(graphs, rank)
        if issued is None:
            issued = compiled_collectives(graphs, rank)
        key = (tuple(op for _, op in issued), tuple(order) if order is not None else None)
        digest = digests.get(key)
        if digest is None:
            digest = digests[key] = hashlib.md5(repr(key).encode()).hexdigest()[:12]
        ran[rank] = Ran(order is not None, len(order) if order is not None else None, len(issued), digest)
    return ran


def rank_groups(index: Index) -> RankGroups:
    """The index's ranks grouped by compile history and by what they ran."""
    ranks = [r for r in index.ranks() if r is not None]
    return group_ranks(index, what_ran(collect(index, ranks)) if len(ranks) > 1 else {})
