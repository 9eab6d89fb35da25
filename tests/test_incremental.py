"""Feeding the index the bytes appended since the last read gives the same index as one read."""

from __future__ import annotations

import random

import pytest
from conftest import CORPUS, without_paths

from tlview.index.index import Index
from tlview.index.indexing import open_index
from tlview.report.summary import build_summary
from tlview.source.discover import FoundLog

TRACE = next((CORPUS / "graph_breaks" / "trace").glob("*.log"))
TEXT = CORPUS / "graph_breaks" / "torch_logs.txt"


def _summary(index: Index) -> dict:
    return without_paths(build_summary(index))


def _cuts(data: bytes, rng: random.Random, n: int) -> list[int]:
    """Awkward places: mid-envelope, mid-payload line, right before/after newlines."""
    cuts = set(rng.sample(range(1, len(data)), n))
    for i in rng.sample(range(len(data)), n):
        j = data.find(b"\n", i)
        if j > 0:
            cuts.update({j, j + 1})
    return sorted(c for c in cuts if 0 < c < len(data))


@pytest.mark.parametrize("source, kind", [(TRACE, "trace"), (TEXT, "text")])
@pytest.mark.parametrize("seed", [1, 2])
def test_appends_at_awkward_boundaries(tmp_path, source, kind, seed):
    data = source.read_bytes()
    path = tmp_path / source.name
    path.write_bytes(b"")
    index = Index(verify_md5=True)
    index.add_log(FoundLog(str(path), kind, None))
    rng = random.Random(seed)
    last = 0
    seen_records = []
    with open(path, "ab") as f:
        for cut in _cuts(data, rng, 150) + [len(data)]:
            f.write(data[last:cut])
            f.flush()
            last = cut
            index.refresh()
            seen_records.append(len(index.sources[0].offsets))
    index.finish()
    reference = open_index(str(source), verify_md5=True)
    assert _summary(index) == _summary(reference)
    assert len(index.sources[0].offsets) == len(reference.sources[0].offsets)
    assert seen_records == sorted(seen_records)  # never lost or re-counted on the way
    assert index.problems == [] and reference.problems == []


def test_partial_last_line_is_held_back(tmp_path):
    data = TRACE.read_bytes()
    first_two = data.split(b"\nV", 2)
    head = first_two[0] + b"\nV" + first_two[1][:30]  # record 1 whole, record 2 torn mid-envelope
    path = tmp_path / "t.log"
    path.write_bytes(head)
    index = Index()
    index.add_log(FoundLog(str(path), "trace", None))
    index.refresh()
    assert len(index.sources[0].offsets) == 1
    assert index.problems == []  # the torn envelope is not judged before its newline comes
    with open(path, "ab") as f:
        f.write(data[len(head):])
    index.refresh()
    index.finish()
    assert len(index.sources[0].offsets) == len(open_index(str(TRACE)).sources[0].offsets)


def test_last_record_stays_open_until_complete(tmp_path):
    """A recompile_reasons artifact is applied once complete: when its md5 matches, or at the
    next envelope; a payload cut short waits."""
    data = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes()
    marker = data.index(b'"name": "recompile_reasons"')
    payload_start = data.index(b"\n", marker) + 1
    end = data.index(b"\nV", marker) + 1
    path = tmp_path / "t.log"
    path.write_bytes(data[:payload_start + 10])  # envelope and a torn payload line
    index = Index()
    index.add_log(FoundLog(str(path), "trace", None))
    index.refresh()
    node = index.node(None, "0/1")
    assert node is not None and node.recompile_reasons == []
    with open(path, "ab") as f:
        f.write(data[payload_start + 10:end])  # the payload is whole: its md5 matches
    index.refresh()
    assert [r.summary for r in node.recompile_reasons] == ["0/0: n == 2"]
    assert node.recompile_reasons[0].failed_id == index.node(None, "0/0").cid
    with open(path, "ab") as f:
        f.write(data[end:])
    index.refresh()
    index.finish()
    assert len(node.recompile_reasons) == 1  # applied once
