"""Payloads that try to act on the terminal or on Rich are shown literally or made visible:
in --report, in --json, in every pane and in a real terminal."""

from __future__ import annotations

import json

from conftest import FIXTURES, SIZE, plain, press, ready, run_cli, tlview_command, until, visible_lines

from tlview.ui.app import TlviewApp
from tlview.ui.payload_view import PayloadView

HOSTILE = FIXTURES / "hostile"
RAW = ("\x1b", "\x07", "\r", "\u202e")


def test_report_shows_markup_literally_and_escapes_visibly(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    code, out = run_cli("--report", str(HOSTILE))
    assert code == 0
    assert not any(ch in out for ch in RAW)
    assert "[bold red]x[/]" in out and "[link=https://evil.example]click[/link]" in out
    assert "\\x1b]0;pwned title\\x07" in out and "\\u202e" in out and "carriage\\x0dreturn" in out


def test_json_keeps_the_text_exactly():
    code, out = run_cli("--json", str(HOSTILE))
    assert code == 0 and "\x1b" not in out  # JSON escapes control characters
    doc = json.loads(out)
    reason = next(c for c in doc["compiles"] if c["id"] == "0/1")["recompile_reasons"][0]
    assert "\x1b]52;c;cHduZWQ=\x07" in reason and "[bold red]x[/]" in reason


async def test_every_pane_shows_it_literally():
    app = TlviewApp(str(HOSTILE))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        frame_label = next(n for n in app.tree.root.children).label.plain
        assert "fn_[bold red]x[/]" in frame_label and "\x1b" not in frame_label
        summary = plain(app.query_one("#summary-body"))  # [0/0]: its function name
        assert "fn_[bold red]x[/] [link=https://evil.example]click[/link] \\x1b[2J" in summary
        await pilot.press("2")  # Graphs: the hostile Dynamo graph of [0/0]
        view = app.query_one("#graph-view", PayloadView)
        await until(pilot, lambda: "pwned" in view.text)
        shown = "\n".join(view.highlighted(i).plain for i in range(view.line_count))  # as rendered
        assert "# [bold red]x[/]" in shown and "\\x1b]52;c;cHduZWQ=\\x07" in shown
        assert not any(ch in shown for ch in RAW)
        assert "\x1b" not in "\n".join(visible_lines(view))
        await press(pilot, "r", "4")  # [0/1]: the hostile recompile reason
        prompt = app.query_one("#recompile-list").get_option_at_index(0).prompt.plain
        assert "[bold red]x[/]" in prompt and "\\x1b[2J" in prompt and "\x1b" not in prompt
        await pilot.press("b", "5")  # [3/0]: the hostile graph break
        await until(pilot, lambda: "click[/link]" in plain(app.query_one("#breaks-body")))
        breaks = plain(app.query_one("#breaks-body"))
        assert "\\u202e" in breaks and "\u202e" not in breaks
        assert not any(ch in app.query_one("StatusLine").text for ch in RAW)


def test_real_terminal_title_and_screen_untouched(terminal):
    term = terminal(f"{tlview_command()} {HOSTILE}", width=260)
    screen = term.wait_for("12 compile ids")
    term.keys("2")
    screen = term.wait_for("pwned")
    assert "[bold red]x[/]" in screen and "\\x1b]0;pwned title\\x07" in screen
    title = term.title
    assert "pwned" not in title
    term.keys("q")
    term.wait_for("EXITED:0")
