"""A trace file's first range indexed by a child forked as the explorer starts (early_part.py):
the explorer's indexing merges it, and its index is the one one process makes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import CORPUS

from tlview.index import early_part, indexing
from tlview.index.index import Index
from tlview.index.indexing import Indexer, open_index, prepare_for
from tlview.report.summary import build_summary
from tlview.source.discover import find_logs, one_log_at


def _corpus_trace(name: str):
    return next((CORPUS / name / "trace").glob("*.log"))


def _explorer_index(path, verify_md5: bool = False) -> tuple[Index, list[int]]:
    """Index `path` as the explorer's worker does (workers.index_logs): the bytes it read here."""
    index = Index(verify_md5=verify_md5)
    for log in find_logs(str(path))[0]:
        index.add_log(log)
    read_here = []
    feed = index.feed
    index.feed = lambda source, limit=None: read_here.append(feed(source, limit)) or read_here[-1]
    Indexer(index, use_fork=False, use_pool=True).run()
    return index, read_here


def _same_index(index: Index, path) -> None:
    single = open_index(str(path), parallel_ok=False, verify_md5=index.verify_md5)
    assert build_summary(index) == build_summary(single)
    a, b = single.sources[0], index.sources[0]
    assert list(a.offsets) == list(b.offsets) and a.scanned_to == b.scanned_to
    assert [a.kind_names[k] for k in a.kinds] == [b.kind_names[k] for k in b.kinds]
    assert [single.context_of(c) for c in a.contexts] == [index.context_of(c) for c in b.contexts]
    assert (a.pid, a.started) == (b.pid, b.started)
    for node in single.nodes.values():
        other = index.node(node.rank, node.cid)
        assert [x.rec for x in node.artifacts] == [x.rec for x in other.artifacts]
        assert [g.rec for g in node.graph_breaks] == [g.rec for g in other.graph_breaks]


def _child(path) -> int:
    """The pid of the early child reading `path` (there is one)."""
    return early_part._EARLY[str(path)].pid


def _no_child_left(pid: int) -> None:
    assert not early_part._EARLY
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # ended and reaped


def a_trace_read_whole_by_the_early_child_is_the_one_process_index(tmp_path, name):
    path = _corpus_trace(name)
    prepare_for(find_logs(str(path))[0][0])
    pid = _child(path)  # a child reads it
    index, read_here = _explorer_index(path)
    assert sum(read_here) == 0  # all of it came from the child
    _same_index(index, path)
    _no_child_left(pid)


def the_early_child_reads_the_first_range_and_this_process_the_rest(tmp_path):
    path = tmp_path / "dedicated_log_torch_trace_x.log"
    path.write_bytes(b"".join(_corpus_trace(n).read_bytes() for n in ("graph_breaks", "recompiles", "model")))
    early_part.EARLY_BYTES = 2 << 20
    prepare_for(find_logs(str(path))[0][0])
    pid, end = _child(path), early_part._EARLY[str(path)].end
    assert 2 << 20 <= end < 3 << 20
    index, read_here = _explorer_index(path)
    assert sum(read_here) == path.stat().st_size - end
    _same_index(index, path)
    _no_child_left(pid)


def a_big_trace_s_first_range_comes_from_the_early_child_and_the_rest_from_the_pool(tmp_path):
    path = tmp_path / "dedicated_log_torch_trace_big.log"
    path.write_bytes(b"".join(_corpus_trace(n).read_bytes() for n in ("graph_breaks", "recompiles", "model") * 3))
    indexing.PARALLEL_BYTES = 1 << 20
    taken = []
    take = early_part.take
    early_part.take = lambda *a, **k: taken.append(take(*a, **k)) or taken[-1]
    prepare_for(find_logs(str(path))[0][0])
    pid = _child(path)
    index, read_here = _explorer_index(path)
    assert taken[0] is True and sum(read_here) == 0  # the first range: the child's; the rest: the pool's
    _same_index(index, path)
    _no_child_left(pid)


def _left_to_this_process(path, to_the_child=lambda pid: None, verify_md5: bool = False) -> None:
    """The early child starts on `path`, then `to_the_child(pid)`: the explorer's indexing reads
    the whole file itself, its index is one process's, and no child is left."""
    prepare_for(find_logs(str(path))[0][0])
    pid = _child(path)
    to_the_child(pid)
    index, read_here = _explorer_index(path, verify_md5=verify_md5)
    assert sum(read_here) == path.stat().st_size
    _same_index(index, path)
    _no_child_left(pid)


def a_part_read_otherwise_is_dropped_and_the_file_read_here(tmp_path):
    """The early child read it without md5 checks: an index that checks them reads it itself."""
    _left_to_this_process(_corpus_trace("recompiles"), verify_md5=True)


def a_child_that_fails_leaves_the_file_to_this_process(tmp_path):
    def broken(*args):
        raise MemoryError

    early_part.index_range_packed = broken
    _left_to_this_process(_corpus_trace("recompiles"))


def a_child_killed_midway_leaves_the_file_to_this_process(tmp_path):
    _left_to_this_process(_corpus_trace("model"), lambda pid: os.kill(pid, 9))


def quitting_while_the_child_reads_ends_it(tmp_path):
    path = _corpus_trace("model")
    prepare_for(find_logs(str(path))[0][0])
    pid = _child(path)
    index = Index()
    index.add_log(find_logs(str(path))[0][0])
    assert early_part.take(index, index.sources[0], cancelled=lambda: True) is False
    assert not index.nodes
    _no_child_left(pid)


def an_unused_part_s_child_is_ended_with_tlview(tmp_path):
    path = _corpus_trace("model")
    prepare_for(find_logs(str(path))[0][0])
    pid = _child(path)
    early_part.drop_all()
    _no_child_left(pid)


def no_child_for_a_small_file_a_text_log_several_logs_or_a_process_with_threads(tmp_path):
    small = tmp_path / "dedicated_log_torch_trace_small.log"
    small.write_bytes(_corpus_trace("recompiles").read_bytes()[:200_000])
    text = tmp_path / "torch_logs.txt"
    text.write_bytes(b"V1121 12:00:00.000000 1 torch/_dynamo/x.py:1] [0/0] hello\n" * 30_000)
    for path in (small, text):
        prepare_for(find_logs(str(path))[0][0])
    prepare_for(find_logs(str(_corpus_trace("recompiles")))[0][0], alone=False)  # (one of a folder's files)
    assert not early_part._EARLY
    stop = threading.Event()
    waiting = threading.Thread(target=stop.wait)
    waiting.start()
    try:
        prepare_for(find_logs(str(_corpus_trace("recompiles")))[0][0])
        assert not early_part._EARLY  # (a fork then may copy a lock another thread holds)
    finally:
        stop.set()
        waiting.join()


def in_a_folder_of_several_files_none_is_read_ahead_of_the_others(tmp_path):
    """Small files of a folder are read in turn: one read first would change the order of the
    compile ids; prepare_for is told it is not alone, and the indexing takes no part then."""
    for name in ("recompiles", "model"):
        (tmp_path / _corpus_trace(name).name).write_bytes(_corpus_trace(name).read_bytes())
    assert not one_log_at(str(tmp_path), latest=False) and one_log_at(str(tmp_path), latest=True)
    assert one_log_at(str(_corpus_trace("model")), latest=False)
    one = tmp_path / "one"
    one.mkdir()
    (one / "dedicated_log_torch_trace_a.log").write_bytes(b"x")
    assert one_log_at(str(one), latest=False)
    # a part made anyway is not taken when the index reads several files
    path = tmp_path / _corpus_trace("recompiles").name
    prepare_for(find_logs(str(path))[0][0])
    pid = _child(path)
    index, read_here = _explorer_index(tmp_path)
    assert sum(read_here) == sum(p.stat().st_size for p in tmp_path.glob("*.log"))
    _no_child_left(pid)
    assert build_summary(index) == build_summary(open_index(str(tmp_path), parallel_ok=False))


SCENARIOS = [
    (a_trace_read_whole_by_the_early_child_is_the_one_process_index, "recompiles"),
    (a_trace_read_whole_by_the_early_child_is_the_one_process_index, "graph_breaks"),
    (a_trace_read_whole_by_the_early_child_is_the_one_process_index, "model"),
    (a_trace_read_whole_by_the_early_child_is_the_one_process_index, "dynamic_shapes"),
    (the_early_child_reads_the_first_range_and_this_process_the_rest,),
    (a_big_trace_s_first_range_comes_from_the_early_child_and_the_rest_from_the_pool,),
    (a_part_read_otherwise_is_dropped_and_the_file_read_here,),
    (a_child_that_fails_leaves_the_file_to_this_process,),
    (a_child_killed_midway_leaves_the_file_to_this_process,),
    (quitting_while_the_child_reads_ends_it,),
    (an_unused_part_s_child_is_ended_with_tlview,),
    (no_child_for_a_small_file_a_text_log_several_logs_or_a_process_with_threads,),
    (in_a_folder_of_several_files_none_is_read_ahead_of_the_others,),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: "-".join([s[0].__name__, *s[1:]]))
def test_early_part(scenario, tmp_path):
    """Each in a process of its own, as tlview starts: early_part forks only where no other
    thread runs, and a test process has the threads earlier tests left."""
    function, *args = scenario
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import test_early_part as t; "
            f"t.{function.__name__}(t.Path({str(tmp_path)!r}), *{args!r})")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
