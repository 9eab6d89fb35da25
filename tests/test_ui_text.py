"""The explorer on TORCH_LOGS text alone: every pane works as on a trace; following text, the end
of the input (EOF on a pipe, a log nobody writes) closes the last record."""

from __future__ import annotations

from conftest import CORPUS, GENERATED, SIZE, json_for, plain, press, ready, tlview_command, until

from tlview.report.rich_text import seconds
from tlview.ui.app import TlviewApp
from tlview.ui.payload_view import PayloadView
from tlview.ui.status_line import StatusLine

# TORCH_LOGS=recompiles,graph_breaks,guards,output_code,graph_code
TYPICAL = GENERATED / "text_failures" / "torch_logs_typical.txt"


async def _select(app, pilot, cid: str) -> None:
    entry = next(e for e in app.model.compile_entries() if e.node.id == cid)
    app.tree.select_key(entry.key)
    await until(pilot, lambda: app.tree.entry is entry)


async def test_panes_on_text_alone():
    app = TlviewApp(str(TYPICAL))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await _select(app, pilot, "0/0")
        await press(pilot, "1")  # Summary: the failure and its exception
        summary = plain(app.query_one("#summary-body"))
        assert "✗ [0/0] error" in summary and "failure: BackendCompilerFailed" in summary
        assert "RuntimeError: broken_backend refuses to compile a graph with 5 nodes" in summary
        assert "backend_compiler_failed" in summary and "fail_backend_a" in summary
        await _select(app, pilot, "5/1")
        await press(pilot, "2")  # Graphs: the traced graph, from the text
        view = app.query_one("#graph-view", PayloadView)
        await until(pilot, lambda: "class GraphModule" in view.text)
        assert 'L_n_: "Sym(s86)"' in view.text
        await press(pilot, "3")  # Guards: the guard tree
        guards = app.query_one("#guards-pane").query_one(PayloadView)
        await until(pilot, lambda: "TREE_GUARD_MANAGER" in guards.text)
        await press(pilot, "8")  # Diff: the guard that changed, and the graph
        diff = app.query_one("#diff-pane").query_one(PayloadView)
        await until(pilot, lambda: "against [5/0]" in diff.text)
        assert "-| | +- EQUALS_MATCH: L['n'] == 2" in diff.text
        assert "(the same guards)" not in diff.text and "(the same graph)" not in diff.text
        await press(pilot, "9")  # Run: no compile times in text: the line times, said so
        total = seconds(json_for(TYPICAL)["run_summary"]["total_compile_seconds"])
        await until(pilot, lambda: f"Total compile time {total}, from TORCH_LOGS line times"
                    in plain(app.query_one("#run-body")))


def _up_to_last_break(source) -> bytes:
    """A real text log cut right after its last graph-break record: the job's last record."""
    lines = source.read_bytes().split(b"\n")
    last = max(i for i, line in enumerate(lines) if b"[__graph_breaks]" in line)
    return b"\n".join(lines[:last + 1]) + b"\n"


async def test_a_followed_text_log_closes_its_last_record_when_nobody_writes(tmp_path, monkeypatch):
    """The job's last record has no successor to end it: it stays open while the log may still
    grow, and is closed once nothing was written for IDLE_SECONDS. The test sets that time, so
    it never races the clock: an hour (the follower looks, and keeps it open), then none."""
    from tlview.index import live

    path = tmp_path / "torch_logs.txt"
    path.write_bytes(_up_to_last_break(CORPUS / "graph_breaks" / "torch_logs.txt"))
    looks = []
    close_idle = live.LiveIndex.close_idle
    monkeypatch.setattr(live.LiveIndex, "close_idle", lambda self: looks.append(1) or close_idle(self))
    monkeypatch.setattr(live, "IDLE_SECONDS", 3600.0)
    app = TlviewApp(str(path), follow=True)
    async with app.run_test(size=SIZE) as pilot:
        status = app.query_one(StatusLine)
        await until(pilot, lambda: "6 graph breaks" in status.text)
        seen = len(looks)
        await until(pilot, lambda: len(looks) >= seen + 2, what="the follower to look at it twice more")
        assert "6 graph breaks" in status.text  # not idle long enough: the last record stays open
        monkeypatch.setattr(live, "IDLE_SECONDS", 0.0)
        await until(pilot, lambda: "7 graph breaks" in status.text)  # idle: closed, and counted


def test_piped_text_counts_the_last_break_after_eof(terminal, tmp_path):
    path = tmp_path / "torch_logs.txt"
    path.write_bytes(_up_to_last_break(CORPUS / "graph_breaks" / "torch_logs.txt"))
    term = terminal(f"cat {path} | {tlview_command()} --follow -")
    screen = term.wait_for("■ ended")  # EOF on the pipe: everything read and closed
    assert "7 graph breaks" in screen and "LIVE" not in screen and "compiling" not in screen
    term.keys("q")
    assert "Traceback" not in term.wait_for("EXITED:0")


async def test_lines_of_no_compile_id_stay_readable_in_the_log_pane():
    """A user print and a warning belong to no compile id: on a frame, the Log pane shows them."""
    app = TlviewApp(str(GENERATED / "text_failures" / "torch_logs.txt"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        frame = app.model.roots[0]
        app.tree.select_key(frame.key)
        await press(pilot, "7")
        log = app.query_one("#log-pane").query_one(PayloadView)
        await until(pilot, lambda: "with no compile id" in log.text)
        assert "UserWarning: Failed to initialize NumPy" in log.text  # a Python warning
        assert "skipping: fail_backend_a (reason: an error was suppressed" in log.text  # torch's own
