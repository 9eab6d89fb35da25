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
