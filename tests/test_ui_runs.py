"""Driving the explorer on multi-rank and live runs: the detail follows the rank switcher, Esc
keeps the compile id, groups come in order, toasts leave the status readable, --run and stdin."""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
from pathlib import Path

from conftest import (
    CORPUS,
    GENERATED,
    SIZE,
    alive,
    command_line,
    descendants,
    plain,
    press,
    ready,
    tlview_command,
    type_in,
    until,
    wait_until,
)

from tlview.ui.app import TlviewApp
from tlview.ui.status_line import StatusLine

DISTRIBUTED = CORPUS / "distributed" / "trace"
RECOMPILES = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes()


async def test_the_detail_follows_the_rank_switcher():
    app = TlviewApp(str(DISTRIBUTED))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        for rank in (0, 1):
            await press(pilot, "right_square_bracket")
            await until(pilot, lambda: app.flt.rank == rank)
            entry = app.tree.entry
            assert entry.rank == rank
            await until(pilot, lambda: f"rank {rank}" in plain(app.query_one("#summary-body")))


async def test_escape_on_a_filter_keeps_the_compile_id():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "slash")
        await type_in(pilot, "errors")
        await press(pilot, "enter")
        await until(pilot, lambda: app.tree.entry is not None and app.tree.entry.node.id == "3/4")
        await pilot.press("escape")
        await until(pilot, lambda: len(app.model.compile_entries()) == 12)
        await pilot.pause()
        assert app.tree.entry.node.id == "3/4"
        assert "3/4" in plain(app.query_one("#summary-body"))


def _append(path, data: bytes, stop: threading.Event, pieces: int = 40) -> None:
    records = re.split(rb"(?m)^(?=V\d{4} )", data)
    step = max(1, len(records) // pieces)
    with open(path, "ab") as f:
        for i in range(0, len(records), step):
            f.write(b"".join(records[i:i + step]))
            f.flush()
            if stop.wait(0.01):
                return


async def test_ranks_come_in_rank_order_while_following(tmp_path):
    """Rank 1's file appears first: the tree still lists rank 0 above rank 1."""
    rank0 = next(DISTRIBUTED.glob("*rank_0*")).read_bytes()
    rank1 = next(DISTRIBUTED.glob("*rank_1*")).read_bytes()
    app = TlviewApp(str(tmp_path), follow=True)
    async with app.run_test(size=SIZE) as pilot:
        (tmp_path / "dedicated_log_torch_trace_rank_1_a.log").write_bytes(rank1)
        await until(pilot, lambda: len(app.model.compile_entries()) == 11)
        (tmp_path / "dedicated_log_torch_trace_rank_0_b.log").write_bytes(rank0)
        await until(pilot, lambda: len(app.model.compile_entries()) == 19)
        assert [root.title for root in app.model.roots] == ["rank 0", "rank 1"]
        assert [n.data.title for n in app.tree.root.children] == ["rank 0", "rank 1"]


async def test_new_compile_ids_are_counted_as_the_status_line_counts_them(tmp_path):
    path = tmp_path / "dedicated_log_torch_trace_x.log"
    records = re.split(rb"(?m)^(?=V\d{4} )", RECOMPILES)
    half = len(records) // 2
    path.write_bytes(b"".join(records[:half]))
    app = TlviewApp(str(tmp_path), follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.caught_up and app.model.compile_entries())
        before = len(app.model.compile_entries())
        await pilot.press("k")  # reading: new compile ids are counted, not followed
        await until(pilot, lambda: not app.auto_follow)
        with open(path, "ab") as f:
            f.write(b"".join(records[half:]))
        await until(pilot, lambda: len(app.model.compile_entries()) == 12)
        await until(pilot, lambda: app.new_unseen == 12 - before)
        assert f"+{12 - before} new" in str(app.query_one("#tree-note").render())
        assert "12 compile ids" in app.query_one(StatusLine).text


def test_toasts_leave_the_live_sign_readable(terminal, tmp_path):
    folder = tmp_path / "trace"
    folder.mkdir()
    path = folder / "dedicated_log_torch_trace_x.log"
    records = re.split(rb"(?m)^(?=V\d{4} )", RECOMPILES)
    first = next(i for i, r in enumerate(records) if b'"recompile_reasons"' in r)
    path.write_bytes(b"".join(records[:first]))
    term = terminal(f"{tlview_command()} --follow {folder}")
    term.wait_for("● LIVE")
    with open(path, "ab") as f:
        f.write(b"".join(records[first:]))
    screen = term.wait_for("recompiled")  # a toast
    assert "● LIVE" in screen
    term.keys("q")
    term.wait_for("EXITED:0")


def test_run_as_the_readme_writes_it(terminal, tmp_path):
    """`tlview --run -- python train.py`: the job gets TORCH_TRACE, tlview follows it."""
    trace = next((CORPUS / "model" / "trace").glob("*.log"))
    job = tmp_path / "job.py"
    job.write_text(f"import os, shutil\nshutil.copy({str(trace)!r}, os.path.join(os.environ['TORCH_TRACE'], "
                   "'dedicated_log_torch_trace_job.log'))\n")
    term = terminal(f"{tlview_command()} --run -- {sys.executable} {job}")
    screen = term.wait_for("2 compile ids")
    assert "job finished" in term.wait_for("job finished") or "■ ended" in screen
    term.wait_for("■ ended")
    term.keys("q")
    screen = term.wait_for("EXITED:0")
    assert "the job's logs are in" in screen and "Traceback" not in screen


def _fd_links(pid: int) -> list[str]:
    """What `pid`'s descriptors point to (one closed while they are listed is left out: CI saw
    one go between the listing and its readlink)."""
    links = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            links.append(os.readlink(fd))
        except FileNotFoundError:
            pass
    return links


def test_the_copy_of_stdin_is_never_left_behind(terminal, tmp_path):
    """Killed with SIGTERM or SIGHUP while following a pipe: tlview ends, and its copy of the pipe never had a name in the temp folder (open, but unlinked at once)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        temp = tmp_path / sig.name
        temp.mkdir()
        term = terminal(f"(cat {CORPUS / 'recompiles' / 'torch_logs.txt'}; sleep 30) | "
                        f"TMPDIR={temp} {tlview_command()} --follow -")
        term.wait_for("12 compile ids")
        pid = next(p for p in descendants(term.process.pid) if "--follow -" in command_line(p))
        copies = [link for link in _fd_links(pid) if link.startswith(str(temp))]
        assert copies and all(c.endswith(" (deleted)") for c in copies), copies  # held, no name
        assert list(temp.iterdir()) == []
        os.kill(pid, sig)
        wait_until(lambda: not alive(pid), 10, f"tlview to end on {sig.name}")
        assert list(temp.iterdir()) == []


async def test_the_export_entry_shows_programs_and_guards():
    from tlview.ui.payload_view import PayloadView

    app = TlviewApp(str(GENERATED / "export" / "dtrace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        entry = app.model.roots[0]
        assert entry.kind == "outside" and entry.title.startswith("export")
        app.tree.select_key(entry.key)
        await press(pilot, "1")
        await until(pilot, lambda: "exported_program" in plain(app.query_one("#summary-body")))
        await press(pilot, "2")
        view = app.query_one("#graph-view", PayloadView)
        await until(pilot, lambda: view.text.startswith("ExportedProgram:"))
        await press(pilot, "3")
        guards = app.query_one("#guards-pane").query_one(PayloadView)
        await until(pilot, lambda: "Eq(s77, 6)" in guards.text)
        assert "/tmp/job/export.py:37 in forward" in guards.text and "unknown string" not in guards.text
