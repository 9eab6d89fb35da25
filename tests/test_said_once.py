"""What the explorer says on its footer's line says each thing once, and whole at 80 columns
(#48): the notice of source files not read here names its flag first and whole, beside the
totals of the status line (never in their place), and does not repeat its title."""

from __future__ import annotations

from conftest import CORPUS, until

from tlview.ui.app import TlviewApp
from tlview.ui.key_hints import KeyHints


async def test_the_source_notice_says_its_flag_whole_at_80_columns_beside_the_totals():
    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))  # the README's first command
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: any(s.title == "source" for s in app.said), what="the source notice")
        said = next(s for s in app.said if s.title == "source")
        assert "source" not in said.message.replace("--source-root", ""), said.message  # its title's word
        hints = app.query_one(KeyHints)
        await until(pilot, lambda: "--source-root" in "".join(s.text for s in hints.render_line(0)))
        drawn = "".join(segment.text for segment in hints.render_line(0))
        assert "--source-root /home/user/job=DIR" in drawn, drawn  # the flag, whole
        assert drawn.rstrip().endswith(")"), drawn  # nothing cut
        status = app.query_one("StatusLine").text
        assert "compile ids" in status and "graph break" in status, status  # the totals stay
