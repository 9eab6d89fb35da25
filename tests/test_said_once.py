"""What the explorer says on its footer's line says each thing once, and whole at 80 columns
(#48): the notice of source files not read here names its flag first and whole, beside the
totals of the status line (never in their place), and does not repeat its title."""

from __future__ import annotations

from conftest import CORPUS, FIXTURES, until

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
        # the totals stay (under load the notice can come before the indexing's end: wait for it)
        status_line = app.query_one("StatusLine")
        await until(pilot, lambda: app.facts.finished, what="indexing to finish")
        await until(pilot, lambda: "compile ids" in status_line.text and "graph break" in status_line.text,
                    what=f"the totals beside the notice: {status_line.text!r}")


async def test_the_summary_names_a_problem_s_kind_and_cause_once_when_they_are_one_word():
    """A frame run eagerly is its kind and its cause: the Summary said `frame_skipped ·
    frame_skipped: the whole frame runs eagerly`; it says the word once. A graph break's cause
    differs from its kind and both are said."""
    from conftest import ready

    from tlview.ui.summary_pane import SummaryPane

    app = TlviewApp(str(FIXTURES / "fixes" / "frame_skipped" / "loop_blocks_data_branch" / "trace"))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        pane = app.query_one(SummaryPane)
        await until(pilot, lambda: "why, and what to do" in pane.copy_text(), what="the Summary's causes")
        said = pane.copy_text()
        assert "frame_skipped · frame_skipped" not in said, said
        assert "  frame_skipped: " in said, said
        assert "graph_break · " in said, said
