"""diagnose.ranks.divergence is made once per state of the index: the explorer asks for it in the
indexing thread (the job's verdict) and again in the Run pane; a grown index gets a new one."""

from __future__ import annotations

from conftest import GENERATED, read_into

from tlview.diagnose.ranks import divergence
from tlview.index.index import Index

HANG = GENERATED / "dist215" / "hang3"


def test_one_state_one_document_and_a_grown_index_a_new_one():
    index = Index()
    read_into(index, HANG / "trace")
    first = divergence(index)
    assert divergence(index) is first  # asked again: not made again
    assert first["job_death"] is None  # the traces say nothing of it
    other = Index()
    read_into(other, HANG / "trace")
    assert divergence(other) is not first  # another index in the same state: its own document
    assert divergence(index) is not first  # (the last one made is kept: made again, alike)
    read_into(index, HANG / "torch_logs")  # the text logs come: the ranks' deaths
    grown = divergence(index)
    assert grown is not first and [d["ranks"] for d in grown["job_death"]["deaths"]] == [[0], [1], [2]]
