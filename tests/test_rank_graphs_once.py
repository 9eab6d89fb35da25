"""diagnose.rank_graphs.collect is made once per state of the index and ranks asked for:
rank_groups and divergence both read it (--json, the tree); other ranks or a grown index get a
new one."""

from __future__ import annotations

from conftest import GENERATED, read_into

from tlview.diagnose import rank_graphs
from tlview.diagnose.ranks import divergence
from tlview.diagnose.what_ran import rank_groups
from tlview.index.index import Index

HANG = GENERATED / "dist215" / "hang3"


def test_rank_groups_and_divergence_gather_the_ranks_graphs_once(monkeypatch):
    index = Index()
    read_into(index, HANG / "trace")
    made = []
    gather = rank_graphs._collect
    monkeypatch.setattr(rank_graphs, "_collect", lambda *a: made.append(a[1]) or gather(*a))
    rank_groups(index)
    divergence(index)
    assert made == [[0, 1, 2]]


def test_other_ranks_or_a_grown_index_gather_again():
    index = Index()
    read_into(index, HANG / "trace")
    every = rank_graphs.collect(index, [0, 1, 2])
    assert rank_graphs.collect(index, [0, 1, 2]) is every
    one = rank_graphs.collect(index, [1])
    assert one is not every and set(one.schedules) <= {1} and set(every.schedules) == {0, 1, 2}
    other = Index()
    read_into(other, HANG / "trace")
    assert rank_graphs.collect(other, [0, 1, 2]) is not every  # another index: its own
    again = rank_graphs.collect(index, [0, 1, 2])
    read_into(index, HANG / "torch_logs")  # the index grows
    assert rank_graphs.collect(index, [0, 1, 2]) is not again
