"""merging.py: a trace indexed in two byte ranges apart, the second exported and merged, is the
one-process index; export and merge reach the index only through what PartsOfIndex declares."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from conftest import CORPUS

from tlview.index import merging, parallel
from tlview.index.index import Index
from tlview.index.indexing import open_index
from tlview.report.summary import build_summary
from tlview.source.discover import find_logs

DECLARED = set(merging.PartsOfIndex.__annotations__) | {
    name for name, value in vars(merging.PartsOfIndex).items() if callable(value) and not name.startswith("__")}


class OnlyDeclared:
    """An index seen through PartsOfIndex: reading or setting anything else fails."""

    def __init__(self, index: Index) -> None:
        object.__setattr__(self, "_index", index)

    def __getattr__(self, name: str):
        if name not in DECLARED:
            raise AssertionError(f"merging used Index.{name}, which PartsOfIndex does not declare")
        return getattr(self._index, name)

    def __setattr__(self, name: str, value) -> None:
        if name not in DECLARED:
            raise AssertionError(f"merging set Index.{name}, which PartsOfIndex does not declare")
        setattr(self._index, name, value)


def _run_twice(tmp_path, run: str, name: str):
    """A corpus trace, then the same process's run again (written on another day): its compile
    ids start again in the second half, which only the whole file tells."""
    path = tmp_path / name
    first = next((CORPUS / run / "trace").glob("*.log")).read_bytes()
    path.write_bytes(first + re.sub(rb"(?m)^V\d{4} ", b"V1231 ", first))
    return path


def _exported_range(log, start: int, process) -> dict:
    """[start, end of file) indexed in an index of its own, exported through PartsOfIndex only
    (as parallel.index_range does in another process)."""
    index = Index()
    source = index.add_log(log)
    source.pid, source.started = process
    source.scanned_to = start
    source.feed(limit=None)
    source.close()
    return merging.export_part(OnlyDeclared(index), source)


@pytest.mark.parametrize(("run", "name", "problems"), [
    ("recompiles", "dedicated_log_torch_trace_x.log", {"repeated compile id": 11}),
    # rank 0's records in a file named rank 1: the mismatch is told once, before the first record
    ("distributed", "dedicated_log_torch_trace_rank_1_x.log", {"rank mismatch": 1, "repeated compile id": 5}),
])
def test_a_second_range_merged_through_the_protocol_is_the_one_process_index(tmp_path, run, name, problems):
    path = _run_twice(tmp_path, run, name)
    log = find_logs(str(path))[0][0]
    merged = Index()
    source = merged.add_log(log)
    source.size = path.stat().st_size
    source.peek_process()
    middle = parallel.next_envelope(source, source.size // 2)
    part = _exported_range(log, middle, (source.pid, source.started))

    merged.feed(source, limit=middle)  # the first range here, as index_split reads it
    source.close_open_at(middle)
    merging.merge_part(OnlyDeclared(merged), source, part)
    merged.finish()

    single = open_index(str(path), parallel_ok=False)
    assert Counter(p.kind for p in merged.problems) == problems
    assert [(p.offset, p.kind, p.message, p.node and p.node.id) for p in merged.problems] == \
        [(p.offset, p.kind, p.message, p.node and p.node.id) for p in single.problems]
    assert [(a.name, a.rec) for n in merged.iter_nodes() for a in n.artifacts] == \
        [(a.name, a.rec) for n in single.iter_nodes() for a in n.artifacts]
    assert build_summary(merged) == build_summary(single)


def test_an_index_is_what_merging_declares_it_needs():
    """Index has every member PartsOfIndex names (mypy checks their types where Index hands
    itself to merging)."""
    index = Index()
    assert {name for name in DECLARED if not hasattr(index, name)} == set()
