"""The index of a big file (or a folder of ranks) made over several processes equals the
one-process index."""

from __future__ import annotations

import pickle
import re
import time

import pytest
from conftest import CORPUS, GENERATED

from tlview.index import indexing, parallel
from tlview.index.indexing import open_index
from tlview.report.summary import build_summary


def _big_trace(tmp_path):
    path = tmp_path / "dedicated_log_torch_trace_big.log"
    parts = [next((CORPUS / s / "trace").glob("*.log")).read_bytes()
             for s in ("graph_breaks", "recompiles", "dynamic_shapes", "model")]
    path.write_bytes(b"".join(parts * 2))
    return path


@pytest.mark.parametrize("processes", ["2", "3", "5"])
def test_parallel_index_equals_single(tmp_path, monkeypatch, processes):
    """One range here and the others in children (as many as the cores, TLVIEW_PROCESSES here)
    give the index one process gives."""
    path = _big_trace(tmp_path)
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 1 << 20)
    monkeypatch.setenv("TLVIEW_PROCESSES", processes)
    single = open_index(str(path), parallel_ok=False, verify_md5=True)
    split = open_index(str(path), parallel_ok=True, verify_md5=True)
    assert not split.notes  # the child did its part
    a, b = build_summary(single), build_summary(split)
    assert a == b
    sa, sb = single.sources[0], split.sources[0]
    assert list(sa.offsets) == list(sb.offsets)
    assert [sa.kind_names[k] for k in sa.kinds] == [sb.kind_names[k] for k in sb.kinds]
    assert [single.context_of(c) for c in sa.contexts] == [split.context_of(c) for c in sb.contexts]
    # lazily loaded things point at the right records
    for node_a in single.nodes.values():
        node_b = split.node(node_a.rank, node_a.cid)
        assert [x.rec for x in node_a.artifacts] == [x.rec for x in node_b.artifacts]
        assert [d.summary for d in node_a.dynamic] == [d.summary for d in node_b.dynamic]


def test_a_failing_child_falls_back_to_one_process(tmp_path, monkeypatch):
    path = _big_trace(tmp_path)
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 1 << 20)

    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(parallel, "_index_later_range", broken)
    split = open_index(str(path), parallel_ok=True)
    assert any("indexed in one process" in n for n in split.notes)
    single = open_index(str(path), parallel_ok=False)
    assert build_summary(split)["compiles"] == build_summary(single)["compiles"]


@pytest.mark.parametrize("processes", ["2", "4"])
def test_a_folder_of_ranks_over_several_processes_equals_one_process(tmp_path, monkeypatch, processes):
    ranks = sorted((GENERATED / "multi_rank4" / "trace").glob("*rank_*.log"))
    assert len(ranks) == 4
    monkeypatch.setenv("TLVIEW_PROCESSES", processes)
    for path in ranks:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 1)
    single = open_index(str(tmp_path), parallel_ok=False, verify_md5=True)
    split = open_index(str(tmp_path), parallel_ok=True, verify_md5=True)
    assert not split.notes  # the child did its files
    a, b = build_summary(single), build_summary(split)
    assert a == b
    assert sum(s["md5_ok"] for s in b["sources"]) > 0 and not any(s["md5_bad"] for s in b["sources"])
    for sa, sb in zip(single.sources, split.sources):
        assert list(sa.offsets) == list(sb.offsets)


def test_a_rank_s_copies_under_other_ranks_names_over_several_processes_equal_one_process(tmp_path, monkeypatch):
    """Each copy's first record says rank 3 and its name another rank: the rank mismatch is told
    before that record is kept, so one process gives it no compile id; a merged part did give it
    the compile id of the record at its offset (found by --dask's test on 64 such copies)."""
    rank3 = next((GENERATED / "dist215" / "diverge4" / "trace").glob("*rank_3_*.log")).read_bytes()
    for rank in range(4):
        (tmp_path / f"dedicated_log_torch_trace_rank_{rank}_copy.log").write_bytes(rank3)
    monkeypatch.setenv("TLVIEW_PROCESSES", "2")
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 2 * len(rank3))  # the folder split, not a file
    single, split = build_summary(open_index(str(tmp_path), parallel_ok=False)), \
        build_summary(open_index(str(tmp_path), parallel_ok=True))
    mismatches = [p for p in single["problems"] if p["kind"] == "rank mismatch"]
    assert len(mismatches) == 3 and all(p["compile_id"] is None for p in mismatches)
    assert split == single


def test_a_failing_files_child_leaves_its_files_to_this_process(tmp_path, monkeypatch):
    for path in (CORPUS / "distributed" / "trace").glob("*rank_*.log"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(parallel, "index_range", lambda *a: 1 / 0)
    split = open_index(str(tmp_path), parallel_ok=True)
    assert any("indexed in one process" in n for n in split.notes)
    single = open_index(str(tmp_path), parallel_ok=False)
    assert build_summary(split)["compiles"] == build_summary(single)["compiles"]


_FORKSERVER_CHECK = """
import multiprocessing, sys
from multiprocessing import forkserver
from tlview.index import parallel
from tlview.index.indexing import prepare_for
from tlview.source.discover import FoundLog

prepare_for(FoundLog(sys.argv[1], "trace", None))
parallel.asked_early(sys.argv[1])  # (asked in a thread, as the explorer goes on starting)
server = forkserver._forkserver
print(server._forkserver_pid is not None)
if server._forkserver_pid is not None:
    # a process forked from it, running nothing of tlview's: is the index's code there already?
    context = multiprocessing.get_context("forkserver")
    found = context.SimpleQueue()
    child = context.Process(target=exec, args=("import sys; found.put('tlview.index.index' in sys.modules)",
                                               {"found": found}))
    child.start()
    print(found.get())
    child.join()
"""


def test_the_pool_s_forkserver_starts_before_the_explorer_for_a_big_trace_only(tmp_path):
    """Before the explorer starts on a trace worth several processes, the forkserver its pool
    forks from is started, with the indexing code imported once there (its workers imported it
    each, 0.25 s on their way to their first part); a small trace starts nothing."""
    import subprocess
    import sys

    big = tmp_path / "dedicated_log_torch_trace_big.log"
    with open(big, "wb") as f:
        f.truncate(indexing.PARALLEL_BYTES)  # (only its size is asked)
    small = next((CORPUS / "graph_breaks" / "trace").glob("*.log"))
    said = {}
    for name, path in (("big", big), ("small", small)):
        done = subprocess.run([sys.executable, "-c", _FORKSERVER_CHECK, str(path)], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        said[name] = done.stdout.split()
    assert said == {"big": ["True", "True"], "small": ["False"]}


def test_parts_asked_for_before_the_explorer_are_the_ones_it_indexes(tmp_path, monkeypatch):
    """A big trace's parts are asked of the pool while the explorer starts (parallel.start_early):
    the explorer's indexing takes those parts, asks for none again, and gets the index one
    process makes. Parts asked for otherwise (another md5 check) are stopped and asked anew."""
    from tlview.index.index import Index
    from tlview.source.discover import find_logs

    path = _big_trace(tmp_path)
    first, step = 1 << 20, 1 << 20
    asked = []
    ask = parallel._ask_pool
    monkeypatch.setattr(parallel, "_ask_pool", lambda *a: asked.append(a) or ask(*a))
    log = find_logs(str(path))[0][0]
    early = Index().add_log(log)
    early.size = path.stat().st_size
    parallel.start_early(early, first=first, step=step)
    assert len(parallel.asked_early(str(path)).futures) >= 2 and len(asked) == 1  # parts asked for now

    index = Index()
    source = index.add_log(log)
    source.size = early.size
    parallel.index_with_pool(index, source, lambda: None, lambda: False, first=first, step=step)
    assert len(asked) == 1 and not parallel._ASKED  # taken, none asked again
    single = open_index(str(path), parallel_ok=False)
    assert build_summary(index) == build_summary(single)

    parallel.start_early(early, first=first, step=step)
    pool = parallel.asked_early(str(path)).pool
    checked = Index(verify_md5=True)
    source = checked.add_log(log)
    source.size = early.size
    parallel.index_with_pool(checked, source, lambda: None, lambda: False, first=first, step=step)
    assert len(asked) == 3 and pool not in parallel.POOLS  # asked anew; the first ones stopped
    assert build_summary(checked)["compiles"] == build_summary(single)["compiles"]


@pytest.mark.parametrize("processes", ["2", "3"])
def test_a_big_file_of_another_rank_s_records_tells_its_rank_mismatch_once(tmp_path, monkeypatch, processes):
    """Each range of a big file indexed in another process told the file's rank mismatch again;
    one process tells it once (found by --dask's test, for the fork path as well)."""
    rank3 = next((GENERATED / "dist215" / "diverge4" / "trace").glob("*rank_3_*.log")).read_bytes()
    path = tmp_path / "dedicated_log_torch_trace_rank_1_big.log"
    path.write_bytes(rank3)
    monkeypatch.setenv("TLVIEW_PROCESSES", processes)
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", len(rank3) // 4)  # the file in ranges
    single, split = build_summary(open_index(str(path), parallel_ok=False)), \
        build_summary(open_index(str(path), parallel_ok=True))
    assert [p["kind"] for p in single["problems"]].count("rank mismatch") == 1
    assert split == single


def test_the_pool_s_parts_come_as_bytes_unpickled_where_keys_let_it(tmp_path, monkeypatch):
    """The explorer's keys first (#26): a pool part reaches the explorer as bytes (its result
    thread unpickled a part in 11-105 ms at moments of its own, holding the GIL); the indexing
    thread unpickles it after `defer()`, which waits while a key comes first, and its compile ids
    in pieces of PACKED_NODES, each after a `defer()` (a whole part held the GIL 11-18 ms)."""
    import pickle

    from tlview.index.index import Index
    from tlview.source.discover import find_logs

    path = _big_trace(tmp_path)
    first, step = 1 << 20, 1 << 20
    log = find_logs(str(path))[0][0]
    early = Index().add_log(log)
    early.size = path.stat().st_size
    parallel.start_early(early, first=first, step=step)
    parts = parallel.asked_early(str(path)).futures
    assert all(isinstance(f.result(timeout=60), bytes) for f in parts)
    pieces = [pickle.loads(f.result())[1] for f in parts]
    nodes = [len(pickle.loads(piece)) for each in pieces for piece in each]
    assert max(nodes) <= parallel.PACKED_NODES and sum(nodes) > len(parts)  # (compile ids in each part)

    events = []
    loads = pickle.loads
    monkeypatch.setattr(parallel.pickle, "loads", lambda data: events.append("unpickled") or loads(data))
    index = Index()
    source = index.add_log(log)
    source.size = early.size
    parallel.index_with_pool(index, source, lambda: None, lambda: False, first=first, step=step,
                             defer=lambda: events.append("deferred"))
    assert events.count("unpickled") == len(parts) + sum(map(len, pieces))
    assert all(events[i - 1] == "deferred" for i, e in enumerate(events) if e == "unpickled")
    assert build_summary(index) == build_summary(open_index(str(path), parallel_ok=False))


def test_an_export_failure_in_a_later_range_is_the_export_s_as_in_one_process(tmp_path, monkeypatch):
    """torch.export's failure told in a range another process read: its part named the file
    itself (no part could be sent: the file was read again in one process), and the merge had no
    place for an Export entry's failures. The torch version last told wins, as in one process."""
    export = next((GENERATED / "verdict" / "export_nonstrict_fail" / "trace").glob("*.log")).read_bytes()
    padding = next((CORPUS / "model" / "trace").glob("*.log")).read_bytes()
    path = tmp_path / "dedicated_log_torch_trace_big.log"
    path.write_bytes(padding * 2 + export)  # the export in the second range
    monkeypatch.setenv("TLVIEW_PROCESSES", "2")
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 1 << 20)
    single = open_index(str(path), parallel_ok=False)
    split = open_index(str(path), parallel_ok=True)
    assert not split.notes
    failed = [o for o in single.outside.values() if o.export_failures]
    assert failed  # (what the test is about: the export's failure is told)
    for node in failed:
        merged = split.outside[next(k for k, o in split.outside.items() if o.group == node.group)]
        assert [(f, rec) for f, (_, rec) in merged.export_failures] == \
            [(f, rec) for f, (_, rec) in node.export_failures]
        assert all(source is split.sources[0] for _, (source, _) in merged.export_failures)
    assert build_summary(split) == build_summary(single)


def test_a_packed_part_unpacks_piece_by_piece_to_the_part(tmp_path, monkeypatch):
    """A part's compile ids are pickled in pieces of PACKED_NODES: unpacked with a `defer()`
    before each, they are the part's, in order, and the part merges as it would whole."""
    from tlview.index.index import Index
    from tlview.source.discover import find_logs

    monkeypatch.setattr(parallel, "PACKED_NODES", 2)
    path = _big_trace(tmp_path)
    log = find_logs(str(path))[0][0]
    source = Index().add_log(log)
    source.size = path.stat().st_size
    source.peek_process()
    args = (str(path), 0, None, False, None, (source.pid, source.started))
    packed = parallel.index_range_packed(*args)
    whole = parallel.index_range(*args)
    deferred = []
    part = parallel.unpacked(packed, lambda: deferred.append(1))
    assert len(whole["nodes"]) > 4 and len(deferred) == -(-len(whole["nodes"]) // 2)
    assert [(n.group, n.cid, len(n.artifacts)) for n in part["nodes"]] == \
        [(n.group, n.cid, len(n.artifacts)) for n in whole["nodes"]]
    assert set(part) == set(whole)
    for key in ("file", "contexts", "problems", "told", "unknown_kinds", "cache_events"):
        assert part[key] == whole[key], key
    merged = Index()
    one = merged.add_log(log)
    one.size = source.size
    one.peek_process()
    merged.merge_part(one, part)
    assert build_summary(merged) == build_summary(open_index(str(path), parallel_ok=False))


def _ranks_folder(tmp_path, copies_of: list[bytes]) -> None:
    for rank, data in enumerate(copies_of):
        (tmp_path / f"dedicated_log_torch_trace_rank_{rank}_x.log").write_bytes(data)


def _folder_split_only(monkeypatch, folder) -> None:
    """The folder worth several processes, and none of its files alone."""
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", max(p.stat().st_size for p in folder.iterdir()) + 1)


def _with_frames_moved(data: bytes, by: int) -> bytes:
    """The trace with each envelope's frame id moved by `by`: other compile ids, same payloads."""
    return re.sub(rb'(?m)^(V[^\n]*"frame_id": )(\d+)', lambda m: m.group(1) + str(int(m.group(2)) + by).encode(), data)


def test_a_slow_child_takes_fewer_files_and_the_index_is_one_process_s(tmp_path, monkeypatch):
    """The files are shared out as the processes go (not cut in halves up front): a child slowed
    down leaves most files to this process, and the merged index is still one process's."""
    ranks = sorted((GENERATED / "multi_rank4" / "trace").glob("*rank_*.log"))
    _ranks_folder(tmp_path, [p.read_bytes() for p in ranks] * 4)
    monkeypatch.setenv("TLVIEW_PROCESSES", "2")
    _folder_split_only(monkeypatch, tmp_path)
    single = build_summary(open_index(str(tmp_path), parallel_ok=False, verify_md5=True))
    index_range = parallel.index_range

    def slow(*args):  # (runs in the child only: this process reads its files into the index)
        time.sleep(0.2)
        return index_range(*args)

    monkeypatch.setattr(parallel, "index_range", slow)
    read_here = []
    split_files = parallel.index_files_split
    monkeypatch.setattr(parallel, "index_files_split", lambda *a: read_here.append(split_files(*a)))
    split = open_index(str(tmp_path), parallel_ok=True, verify_md5=True)
    assert not split.notes
    assert read_here and read_here[0] >= 12, read_here  # of 16: the child did 1-4
    assert build_summary(split) == single


def test_a_child_that_fails_after_some_files_leaves_the_rest_to_this_process(tmp_path, monkeypatch):
    ranks = sorted((GENERATED / "multi_rank4" / "trace").glob("*rank_*.log"))
    _ranks_folder(tmp_path, [p.read_bytes() for p in ranks] * 3)
    monkeypatch.setenv("TLVIEW_PROCESSES", "2")
    _folder_split_only(monkeypatch, tmp_path)
    single = build_summary(open_index(str(tmp_path), parallel_ok=False))
    index_range, calls = parallel.index_range, []

    def fails_at_the_second(*args):  # (in the child: this process reads its files into the index)
        calls.append(args)
        if len(calls) == 2:
            raise RuntimeError("boom")
        time.sleep(0.05)  # this process takes its share meanwhile
        return index_range(*args)

    monkeypatch.setattr(parallel, "index_range", fails_at_the_second)
    split = open_index(str(tmp_path), parallel_ok=True)
    # the file it failed on, and the one given to it next if it was given one by then
    assert len(split.notes) == 1 and re.fullmatch(
        r"(1 file|2 files): indexed in one process \(an indexing child process failed\)", split.notes[0])
    assert build_summary(split)["compiles"] == single["compiles"]


def test_a_part_bigger_than_a_pipe_comes_whole(tmp_path, monkeypatch):
    """A child's part of many compile ids is bigger than a pipe holds (64 KiB): it comes whole,
    as it is sent."""
    data = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes()
    big = b"".join(_with_frames_moved(data, 1000 * k) for k in range(4))
    _ranks_folder(tmp_path, [big, data, big, data])
    monkeypatch.setenv("TLVIEW_PROCESSES", "3")
    _folder_split_only(monkeypatch, tmp_path)
    part = parallel.index_range(str(tmp_path / "dedicated_log_torch_trace_rank_0_x.log"), 0, None, True, None,
                                (None, ""))
    assert len(pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)) > 128 << 10
    single = build_summary(open_index(str(tmp_path), parallel_ok=False, verify_md5=True))
    split = open_index(str(tmp_path), parallel_ok=True, verify_md5=True)
    assert not split.notes
    assert build_summary(split) == single
    assert len(single["compiles"]) > 100


def test_rank_files_bigger_than_a_chunk_list_their_compile_ids_in_one_order_however_read(tmp_path, monkeypatch):
    """One process read each file a CHUNK at a time, in turn (for the explorer's progress):
    rank files over 16 MB listed their compile ids interleaved, and --json differed between a
    machine that forks and one that cannot (or the compare view). Headless, files are read whole."""
    data = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes()
    _ranks_folder(tmp_path, [_with_frames_moved(data, 1000 * k) for k in range(3)])
    monkeypatch.setattr(indexing, "CHUNK", 256 << 10)  # (each file is 14 chunks)
    _folder_split_only(monkeypatch, tmp_path)
    single = build_summary(open_index(str(tmp_path), parallel_ok=False))
    monkeypatch.setenv("TLVIEW_PROCESSES", "2")
    split = build_summary(open_index(str(tmp_path), parallel_ok=True))
    assert [(c["rank"], c["id"]) for c in single["compiles"]] == [(c["rank"], c["id"]) for c in split["compiles"]]
    assert [c["rank"] for c in single["compiles"]] == sorted(c["rank"] for c in single["compiles"])
    assert single == split


def test_a_record_kind_unpickles_as_the_registry_s_own():
    from tlview.index.registry import KINDS

    for kind in [*KINDS.kinds, KINDS.unknown, KINDS.unknown_artifact, KINDS.cache, KINDS.text_log]:
        assert pickle.loads(pickle.dumps(kind, protocol=pickle.HIGHEST_PROTOCOL)) is kind
        assert len(pickle.dumps(kind, protocol=pickle.HIGHEST_PROTOCOL)) < 120 + len(kind.name)


def test_a_record_kind_unpickles_in_a_process_that_imported_nothing_of_tlview():
    import subprocess
    import sys

    from tlview.index.registry import KINDS

    kind = KINDS.named("dynamo_output_graph")
    unpickle = "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read()).label)"
    done = subprocess.run([sys.executable, "-c", unpickle],
                          input=pickle.dumps(kind, protocol=pickle.HIGHEST_PROTOCOL), capture_output=True, check=True)
    assert done.stdout.decode().strip() == kind.label


def test_a_failure_here_while_children_read_leaves_no_child_behind(tmp_path, monkeypatch):
    """Ctrl-C (or any failure) while this process reads its share: the children are ended and
    waited for, and the rest of the files is read in one process."""
    import os

    from conftest import descendants

    from tlview.index.index import Index

    ranks = sorted((GENERATED / "multi_rank4" / "trace").glob("*rank_*.log"))
    _ranks_folder(tmp_path, [p.read_bytes() for p in ranks] * 4)
    monkeypatch.setenv("TLVIEW_PROCESSES", "3")
    _folder_split_only(monkeypatch, tmp_path)
    single = build_summary(open_index(str(tmp_path), parallel_ok=False))
    feed, fed, children_then = Index.feed, [], []
    before = set(descendants(os.getpid()))  # (another test's pool may live on in this process)

    def fails_at_the_third_file(self, source, limit=None):
        fed.append(source)
        if len(fed) == 3:
            children_then.extend(set(descendants(os.getpid())) - before)
            raise RuntimeError("boom")
        return feed(self, source, limit)

    monkeypatch.setattr(Index, "feed", fails_at_the_third_file)
    split = open_index(str(tmp_path), parallel_ok=True)
    assert len(children_then) == 2
    assert set(children_then) & set(descendants(os.getpid())) == set()
    assert [n for n in split.notes if "indexed in one process (RuntimeError: boom)" in n]
    assert build_summary(split)["compiles"] == single["compiles"]


def test_parts_are_asked_for_in_a_thread_and_the_explorer_does_not_wait_for_it(monkeypatch):
    """start_early returns at once (the forkserver's imports took 76-83 ms of the 10,000-id
    trace's first screen); the indexing waits for what it asked (asked_early)."""
    import threading

    go = threading.Event()
    asked = parallel.AskedParts((), None, [], [])
    monkeypatch.setattr(parallel, "start_forkserver", lambda: None)
    monkeypatch.setattr(parallel, "_ask_pool", lambda *a: go.wait(10) and asked)
    source = type("Source", (), {"path": "/nowhere/x.log"})()
    parallel.start_early(source)  # (returns with the thread still waiting)
    assert parallel._ASKING["/nowhere/x.log"].is_alive()
    go.set()
    assert parallel.asked_early("/nowhere/x.log") is asked
    parallel._ASKED.pop("/nowhere/x.log")


def test_streams_replaced_while_a_pool_starts_are_left_as_they_are(monkeypatch):
    """A pool started in a thread swaps in usable streams if the app's have no descriptor, and
    puts back only those it swapped, if still there: the app that replaced them meanwhile keeps
    its own."""
    import io
    import sys

    from tlview.index.pool import stdio_with_file_descriptors

    captured, the_app_s = io.StringIO(), io.StringIO()  # no file descriptor: swapped
    monkeypatch.setattr(sys, "stdout", captured)
    with stdio_with_file_descriptors():
        assert sys.stdout is sys.__stdout__
        sys.stdout = the_app_s  # the app replaces it meanwhile
    assert sys.stdout is the_app_s
