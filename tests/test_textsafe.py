"""What tlview prints from a log never acts on the terminal nor hides from the reader: every
control, bidi and invisible character is shown escaped (textsafe.py), in the terminal and in
--json; markdown's own characters in the markdown report are text, never a tag or emphasis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import (
    CORPUS,
    FIXTURES,
    GENERATED,
    SIZE,
    json_for,
    plain,
    press,
    ready,
    run_cli,
    run_cli_bytes,
    tlview_command,
    until,
    visible_lines,
)
from markdown_it import MarkdownIt

from tlview.report.markdown import cell, prose
from tlview.textsafe import json_bytes, visible
from tlview.ui.app import TlviewApp
from tlview.ui.payload_view import PayloadView

REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))
NAME = "dedicated_log_torch_trace_x.log"
# a terminal title, a clipboard write (OSC 52), a clear screen, and the same as 8-bit C1 controls
EVIL = "\x1b]0;PWNED\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009b31m\u009d0;C1\u0007\u202e"
RAW_CHARS = ("\x1b", "\x07", "\r", "\u202e")
RAW_BYTES = [b"\x1b", b"\xc2\x9b", b"\xc2\x9d", b"\x07", "\u202e".encode()]

# bidi marks, embeddings, overrides and isolates (U+061C among them: it was shown raw), the
# zero-width and invisible ones, line and paragraph separators, the BOM, annotation marks
HIDDEN = ["\u061c", "\u180e", "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2028", "\u2029",
          "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2060", "\u2061", "\u2062", "\u2063",
          "\u2064", "\u2066", "\u2067", "\u2068", "\u2069", "\ufeff", "\ufff9", "\ufffa", "\ufffb",
          "\x1b", "\x9b", "\x9d", "\r"]


@pytest.mark.parametrize("char", HIDDEN, ids=lambda c: f"U+{ord(c):04X}")
def test_a_hidden_character_is_shown(char):
    shown = visible(f"x = 1{char}  # comment")
    assert char not in shown and f"{ord(char):02x}" in shown
    data = json_bytes({"line": f"a{char}b"})
    assert char.encode() not in data and json.loads(data)["line"] == f"a{char}b"


def test_text_that_is_plain_stays_plain():
    assert visible("naïve café 日本語 ← tab\tand\nnewline") == "naïve café 日本語 ← tab\tand\nnewline"


def test_markdown_cells_and_prose_hold_no_html_nor_emphasis():
    md = MarkdownIt("commonmark").enable("table")
    table = md.render("| f |\n|---|\n| " + cell("<lambda> __init__ a|b &lt;") + " |\n")
    assert "<lambda>" not in table and "&lt;lambda&gt; __init__ a|b &amp;lt;" in table
    assert "<strong>" not in table
    paragraph = md.render(prose("<script>alert(1)</script> *x*"))
    assert "<script>" not in paragraph and "<em>" not in paragraph


def test_every_format_character_of_unicode_is_shown():
    """Held-out round 4: the tag characters (U+E0041: text no terminal shows), the soft hyphen and
    the other format characters (category Cf) were written raw: now all of them, as this Python's
    Unicode lists them, plus the blanks that are letters (U+3164) or marks (U+034F, U+FE0F)."""
    import sys
    import unicodedata

    hidden = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    hidden += ["\u034f", "\u3164", "\u2800", "\ufe0f", "\U000e0100", "\u2028"]
    assert len(hidden) > 150
    assert [f"U+{ord(c):04X}" for c in hidden if visible(f"a{c}b") == f"a{c}b"] == []
    assert visible("\U000e0041") == "\\U000e0041"


def test_json_escapes_a_hidden_character_beyond_the_basic_plane_as_a_pair():
    text = "a\U000e0041\u00ad\u009b\u202eb é 数据"
    data = json_bytes({"x": text})
    assert b"\\udb40\\udc41" in data and b"\\u00ad" in data and b"\\u009b" in data
    assert "é 数据".encode() in data  # (what shows stays as it is)
    assert json.loads(data)["x"] == text


def test_markdown_mentions_no_one_and_strikes_nothing():
    """Held-out round 4: `@torvalds` in a Why or Fix line pinged that user where the report was
    pasted (GitHub); `~~x~~` struck text through."""
    md = MarkdownIt("commonmark").enable("strikethrough")
    html = md.render(prose("ask @torvalds about ~~x~~, mail a@b.com"))
    assert "<code>@torvalds</code>" in html and "<s>" not in html and "~~x~~" in html
    assert "a@b.com" in html  # (an address is no mention)


def test_a_function_name_of_two_lines_is_one_line_in_the_report():
    """Held-out round 4: a function's name can hold a newline (`co_name` is anything): the report
    printed a forged line of its own from it."""
    import io as _io

    from conftest import CORPUS
    from rich.console import Console

    from tlview.report.text_report import render_report

    doc = json_for(CORPUS / "recompiles" / "trace")
    for compiled in doc["compiles"]:
        compiled["function"] = "f\n  [9/9]  ok   all clean, nothing to see"
    out = _io.StringIO()
    render_report(doc, Console(file=out, width=160, color_system=None))
    assert "\n  [9/9]" not in out.getvalue() and "f\\x0a  [9/9]" in out.getvalue()


def _with_evil_failure_reasons(folder: Path) -> Path:
    """The failures run, with EVIL in front of every failure reason of its metrics."""
    source = next((GENERATED / "failures" / "trace").glob("*.log"))
    lines = []
    for line in source.read_text().split("\n"):
        head, sep, body = line.partition("] {")
        if sep and line[:1].isalpha() and '"fail_reason"' in body:
            record = json.loads("{" + body)
            metrics = record.get("compilation_metrics") or {}
            if metrics.get("fail_reason"):
                # (at the start of its first two lines: a why quotes one or the other)
                metrics["fail_reason"] = EVIL + metrics["fail_reason"].replace("\n", "\n" + EVIL, 1)
                line = head + "] " + json.dumps(record)
        lines.append(line)
    folder.mkdir()
    (folder / NAME).write_text("\n".join(lines))
    assert "\\u001b]0;PWNED" in (folder / NAME).read_text()  # (json.dumps escapes it)
    return folder


@pytest.mark.parametrize("mode", [["--fail-on", "errors"], ["--report"], ["--report", "--markdown"],
                                  ["--json"], ["--fail-on", "errors", "--compare"]])
def test_escapes_in_a_failure_reason_are_shown_not_run(tmp_path, mode):
    run = _with_evil_failure_reasons(tmp_path / "run")
    paths = [str(run), str(run)] if "--compare" in mode else [str(run)]
    result = run_cli_bytes(*mode, *paths)
    assert result.returncode in (0, 1), result.stderr
    for raw in RAW_BYTES:
        assert raw not in result.stdout and raw not in result.stderr, (mode, raw)
    shown = result.stdout.decode()
    if "--json" in mode:
        assert "\\u009b" in shown and "\\u001b" in shown
    else:
        assert "PWNED" in shown and "\\x1b" in shown  # still there, made visible


def test_a_file_name_with_escapes_in_a_folder_without_logs(tmp_path):
    (tmp_path / "a\x1b]0;T\x07b.txt").touch()
    result = run_cli_bytes("--report", str(tmp_path))
    assert result.returncode == 2
    assert b"\x1b" not in result.stderr and b"\\x1b]0;T\\x07b.txt" in result.stderr


def test_a_file_name_with_a_newline_stays_on_its_line(tmp_path):
    (tmp_path / "dedicated_log_torch_trace_a\nb.log").write_bytes(REAL.read_bytes())
    for mode in (["--report"], ["--report", "--markdown"]):
        out = run_cli_bytes(*mode, str(tmp_path)).stdout.decode()
        line = next(line for line in out.split("\n") if "dedicated_log_torch_trace_a" in line)
        assert "dedicated_log_torch_trace_a\\x0ab.log" in line, (mode, line)


HOSTILE = FIXTURES / "hostile"


def test_report_shows_markup_literally_and_escapes_visibly(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    code, out = run_cli("--report", str(HOSTILE))
    assert code == 0
    assert not any(ch in out for ch in RAW_CHARS)
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
        assert not any(ch in shown for ch in RAW_CHARS)
        assert "\x1b" not in "\n".join(visible_lines(view))
        await press(pilot, "r", "4")  # [0/1]: the hostile recompile reason
        prompt = app.query_one("#recompile-list").get_option_at_index(0).prompt.plain
        assert "[bold red]x[/]" in prompt and "\\x1b[2J" in prompt and "\x1b" not in prompt
        await pilot.press("b", "5")  # [3/0]: the hostile graph break
        await until(pilot, lambda: "click[/link]" in plain(app.query_one("#breaks-body")))
        breaks = plain(app.query_one("#breaks-body"))
        assert "\\u202e" in breaks and "\u202e" not in breaks
        assert not any(ch in app.query_one("StatusLine").text for ch in RAW_CHARS)


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
