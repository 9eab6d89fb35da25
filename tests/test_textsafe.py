"""What tlview prints from a log never acts on the terminal nor hides from the reader: every
control, bidi and invisible character is shown escaped (textsafe.py), in the terminal and in
--json; markdown's own characters in the markdown report are text, never a tag or emphasis."""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

from tlview.report.markdown import cell, prose
from tlview.textsafe import json_bytes, visible

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

    from conftest import CORPUS, json_for
    from rich.console import Console

    from tlview.report.text_report import render_report

    doc = json_for(CORPUS / "recompiles" / "trace")
    for compiled in doc["compiles"]:
        compiled["function"] = "f\n  [9/9]  ok   all clean, nothing to see"
    out = _io.StringIO()
    render_report(doc, Console(file=out, width=160, color_system=None))
    assert "\n  [9/9]" not in out.getvalue() and "f\\x0a  [9/9]" in out.getvalue()
