"""Following a folder while a writer process appends, adds a rank, truncates and rewrites."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import CORPUS, Deadline, alive, wait_until, write_file

from tlview.domain.totals import RunningTotals, totals
from tlview.index.index import Index
from tlview.index.indexing import open_index
from tlview.index.live import LiveIndex
from tlview.report.summary import build_summary

RANK0 = next((CORPUS / "distributed" / "trace").glob("*rank_0*.log"))
RANK1 = next((CORPUS / "distributed" / "trace").glob("*rank_1*.log"))

WRITER = textwrap.dedent('''
    import os, random, sys, time
    folder, rank0, rank1 = sys.argv[1:4]
    rng = random.Random(7)
    def append(path, data, pieces):
        # awkward boundaries: mid-envelope, mid-payload line, right around newlines
        cuts = sorted(set(rng.sample(range(1, len(data)), pieces)))
        last = 0
        with open(path, "ab") as f:
            for cut in cuts + [len(data)]:
                f.write(data[last:cut]); f.flush(); last = cut
                time.sleep(0.002)
    a = open(rank0, "rb").read()
    b = open(rank1, "rb").read()
    p0 = os.path.join(folder, "dedicated_log_torch_trace_rank_0_x.log")
    p1 = os.path.join(folder, "dedicated_log_torch_trace_rank_1_y.log")
    os.makedirs(folder)                       # the folder does not exist when following starts
    append(p0, a[: len(a) // 2], 120)
    append(p1, b[: len(b) // 3], 80)          # a second rank joins midway
    with open(p0, "r+b") as f:                # a re-run: rank 0 truncated and written again
        f.truncate(0)
    time.sleep(0.05)
    append(p0, a, 200)
    append(p1, b[len(b) // 3:], 150)
    print("done", flush=True)
''')

REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))
NAME = "dedicated_log_torch_trace_x.log"


def _doc(index: Index) -> dict:
    """The summary, with ranks in rank order (files followed interleave them as they come)."""
    doc = build_summary(index)
    doc.pop("sources")
    doc.pop("notes")
    for key in ("compiles", "graph_break_summary"):
        doc[key] = sorted(doc[key], key=lambda entry: -1 if entry["rank"] is None else entry["rank"])
    return doc


@pytest.mark.slow  # a big input: seconds
def test_follow_a_writer_to_the_same_index_as_from_scratch(tmp_path):
    folder = tmp_path / "tracedir"
    live = LiveIndex(str(folder), poll_interval=0.01)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder), str(RANK0), str(RANK1)],
                              stdout=subprocess.PIPE, text=True)
    waiting_seen = False
    rebuilt = False
    records_seen = []
    deadline = Deadline(120)
    running = RunningTotals(live.index)
    while writer.poll() is None and not deadline.passed():
        update = live.step()
        waiting_seen |= bool(update.waiting)
        rebuilt |= update.rebuilt
        records_seen.append(sum(len(s.offsets) for s in live.index.sources))
        # the status line's counts, kept from the changes only, equal the counts made afresh
        running = RunningTotals(live.index) if running.index is not live.index else running
        running.add(live.index.take_changes())
        assert running.snapshot() == totals(live.index)
        time.sleep(0.005)
    assert writer.wait(timeout=60) == 0 and writer.stdout.read().strip() == "done"
    live.catch_up()
    live.finish()
    assert waiting_seen, "the follower said it was waiting for the folder"
    assert rebuilt, "the truncation of rank 0 was seen"
    assert any("truncated or replaced" in n for n in live.index.notes)
    reference = open_index(str(folder), parallel_ok=False)
    assert _doc(live.index) == _doc(reference)
    for a, b in zip(sorted(live.index.sources, key=lambda s: s.path),
                    sorted(reference.sources, key=lambda s: s.path)):
        assert list(a.offsets) == list(b.offsets)  # no record lost, none doubled
    assert totals(reference).records == len(open_index(str(RANK0)).sources[0].offsets) + \
        len(open_index(str(RANK1)).sources[0].offsets)


def test_a_file_replaced_by_another_is_reindexed(tmp_path):
    path = tmp_path / "dedicated_log_torch_trace_a.log"
    first = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes()
    second = next((CORPUS / "graph_breaks" / "trace").glob("*.log")).read_bytes()
    path.write_bytes(first)
    live = LiveIndex(str(path))
    live.catch_up()
    assert totals(live.index).compile_ids == 12
    replacement = tmp_path / "new.log"
    replacement.write_bytes(second)
    replacement.replace(path)  # rotation: a new inode under the same name
    update = live.step()
    assert update.rebuilt
    live.catch_up()
    live.finish()
    assert totals(live.index).compile_ids == 15


def test_follow_stays_read_only(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / RANK0.name).write_bytes(RANK0.read_bytes())
    before = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.iterdir()}
    folder.chmod(0o500)
    try:
        live = LiveIndex(str(folder))
        live.catch_up()
        live.finish()
        assert totals(live.index).compile_ids == 8
    finally:
        folder.chmod(0o700)
    assert {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.iterdir()} == before


def test_run_job_writes_into_a_fresh_folder(tmp_path):
    """`--run`: the command gets TORCH_TRACE (a new folder) and TORCH_LOGS; its stderr is kept."""
    from tlview.source.job import Job

    script = ("import os, shutil, sys; shutil.copy(sys.argv[1], os.path.join(os.environ['TORCH_TRACE'], "
              "'dedicated_log_torch_trace_job.log')); print('logs:', os.environ['TORCH_LOGS'], file=sys.stderr)")
    job = Job([sys.executable, "-c", script, str(RANK0)], "recompiles,graph_breaks")
    try:
        assert job.process.wait(timeout=30) == 0
        assert job.poll() == 0
        live = LiveIndex(job.folder)
        live.catch_up()
        live.finish()
        assert totals(live.index).compile_ids == 8
        text = (Path(job.folder) / "torch_logs.txt").read_text()
        assert text.strip() == "logs: recompiles,graph_breaks"
    finally:
        shutil.rmtree(job.folder, ignore_errors=True)


# A job that starts a daemon the usual way (fork, setsid, fork: out of the job's group and
# session, its parent gone), which writes its pid and stays; the job itself stays or ends.
_DAEMON_JOB = """
import os, signal, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        while True:
            signal.pause()
    os._exit(0)
if sys.argv[2] == "stays":
    while True:
        signal.pause()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux's")
@pytest.mark.parametrize("job_does", ["stays", "ends"])
def test_a_setsid_daemon_of_the_job_ends_with_it(tmp_path, job_does):
    """`--run` ended its job's process group (after `q`, or at the end): a daemon it started
    with a double fork and `setsid` left that group, and lived on after tlview."""

    from tlview.source.job import Job

    pid_file = tmp_path / "daemon.pid"
    job = Job([sys.executable, "-c", _DAEMON_JOB, str(pid_file), job_does], "")
    daemon = None
    try:
        wait_until(pid_file.exists, 60, "the daemon's pid")
        daemon = int(pid_file.read_text())
        if job_does == "ends":
            assert job.process.wait(timeout=60) == 0
        assert alive(daemon)
        job.stop()
        wait_until(lambda: not alive(daemon), 30, "the daemon to end with the job")
    finally:
        if daemon is not None and alive(daemon):
            import os
            import signal

            os.kill(daemon, signal.SIGKILL)
        shutil.rmtree(job.folder, ignore_errors=True)


# ---- a folder or file that may not be read for a while --------------------------------------------

def _lock_out(monkeypatch, locked: Path) -> None:
    """Make `locked` (a folder or a file) unreadable, as chmod 000 does for anyone but root: the
    folder cannot be listed, nothing in it stat'ed or opened; the file cannot be opened. Root
    reads through any permissions, so the kernel's answers are patched in too (the same test for
    root and anyone else); monkeypatch.undo() takes them away, the caller sets the mode back."""
    import builtins
    import errno
    import os

    target = str(locked)
    is_dir = locked.is_dir()

    def inside(path) -> bool:
        return is_dir and path.startswith(target + os.sep)

    def deny(real, refused):
        def call(path=".", *args, **kwargs):
            if not isinstance(path, int) and refused(name := os.fsdecode(os.fspath(path))):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
            return real(path, *args, **kwargs)
        return call

    monkeypatch.setattr(os, "scandir", deny(os.scandir, lambda p: is_dir and p == target))
    monkeypatch.setattr(os, "stat", deny(os.stat, inside))
    for module, name in ((os, "open"), (builtins, "open")):
        monkeypatch.setattr(module, name, deny(getattr(module, name),
                                               lambda p: inside(p) or (not is_dir and p == target)))
    locked.chmod(0)


@pytest.mark.parametrize("what", ["folder", "file"])
def test_following_survives_a_path_unreadable_for_a_while(tmp_path, monkeypatch, what):
    """`chmod 000` on the followed folder (or one of its files) while the job writes, then back:
    every record of every file is indexed afterwards, as if it had never happened. Reading each
    file again every time (more rank files than open descriptors) meets the refusals too."""
    import threading
    from contextlib import ExitStack

    from tlview.source.reader import OPEN_FILES

    monkeypatch.setattr(OPEN_FILES, "limit", 1)
    folder = tmp_path / "tracedir"
    folder.mkdir()
    datas = [RANK0.read_bytes(), RANK1.read_bytes()]
    paths = [folder / RANK0.name, folder / RANK1.name]
    job = ExitStack()  # the job's files, open for its whole run
    writers = [job.enter_context(path.open("ab")) for path in paths]
    firsts = [data[: data.rindex(b"\n", 0, len(data) // 3) + 1] for data in datas]
    for writer, first in zip(writers, firsts):
        writer.write(first)
        writer.flush()

    live = LiveIndex(str(folder), force_polling=True, poll_interval=0.01)
    stop = threading.Event()
    steps: list[str] = []  # what each step said it waits for
    failed: list[BaseException] = []

    def follow() -> None:  # as the explorer's follow worker does
        try:
            while not stop.is_set():
                steps.append(live.step().waiting)
                live.follower.wait()
        except BaseException as exc:  # noqa: BLE001 - the test says it
            failed.append(exc)

    def holds(condition) -> bool:
        assert not failed, f"following stopped: {failed[0]!r}"
        return condition()

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    try:
        wait_until(lambda: holds(lambda: live.index.bytes_read == sum(map(len, firsts))), 60,
                   "the first part to be indexed")
        locked = folder if what == "folder" else paths[0]
        mode = locked.stat().st_mode
        try:
            _lock_out(monkeypatch, locked)
            seen = len(steps)
            for writer, data, first in zip(writers, datas, firsts):  # the job goes on writing
                writer.write(data[len(first):])
                writer.flush()
            wait_until(lambda: holds(lambda: len(steps) >= seen + 3), 60, "steps while unreadable")
        finally:
            monkeypatch.undo()
            locked.chmod(mode)
        said = steps[seen:]
        wait_until(lambda: holds(lambda: live.index.bytes_read == sum(map(len, datas))), 60,
                   "every record indexed once readable again")
        wait_until(lambda: holds(lambda: not steps[-1]), 60, "the follower to stop waiting")
    finally:
        stop.set()
        live.follower.stop()
        thread.join(timeout=60)
        job.close()
    assert not failed and not thread.is_alive()
    live.catch_up()
    live.finish()
    assert not [n for n in live.index.notes if "replaced" in n or "deleted" in n or "rotated" in n]
    reference = open_index(str(folder), parallel_ok=False)
    assert _doc(live.index) == _doc(reference)
    for a, b in zip(sorted(live.index.sources, key=lambda s: s.path),
                    sorted(reference.sources, key=lambda s: s.path)):
        assert list(a.offsets) == list(b.offsets)  # no record lost, none doubled
    assert totals(live.index).records == totals(reference).records > 0
    assert any("cannot" in w for w in said), said  # the follower said why it waited


def test_following_a_rotated_log_keeps_only_the_current_run(tmp_path):
    """`mv x.log x.log.1` and a new x.log: the new run is shown, the rotated one is over."""
    from tlview.domain.totals import totals
    from tlview.index.live import LiveIndex

    first = REAL.read_bytes()
    second = next((CORPUS / "graph_breaks" / "trace").glob("*.log")).read_bytes()
    folder = write_file(tmp_path / "run", NAME, first).parent
    live = LiveIndex(str(folder))
    live.catch_up()
    assert totals(live.index).compile_ids == 12
    (folder / NAME).rename(folder / (NAME + ".1"))
    (folder / NAME).write_bytes(second)
    live.catch_up()
    live.finish()
    assert [s.path for s in live.index.sources] == [str(folder / NAME)]
    assert totals(live.index).compile_ids == 15
    assert any("renamed away (rotated)" in n for n in live.index.notes)


def test_following_a_folder_deleted_and_made_again(tmp_path):
    import shutil

    from tlview.domain.totals import totals
    from tlview.index.live import LiveIndex

    folder = write_file(tmp_path / "run", NAME, REAL.read_bytes()).parent
    live = LiveIndex(str(folder))
    live.catch_up()
    shutil.rmtree(folder)
    update = live.step()
    assert update.rebuilt and update.waiting and live.index.sources == []
    write_file(folder, "other.log", next((CORPUS / "graph_breaks" / "trace").glob("*.log")).read_bytes())
    live.catch_up()
    live.finish()
    assert totals(live.index).compile_ids == 15  # the new run only
    assert any("deleted or renamed" in n for n in live.index.notes)


def test_following_a_folder_of_compressed_logs_says_how_to_read_them(tmp_path):
    import gzip

    from tlview.index.live import LiveIndex

    folder = tmp_path / "gz"
    folder.mkdir()
    (folder / (NAME + ".gz")).write_bytes(gzip.compress(REAL.read_bytes()))
    update = LiveIndex(str(folder)).step()
    assert "compressed (gzip): zcat" in update.waiting
