"""The compare view is the explorer (#23): its keys (j/k, 1-9 0, ?, /, n/N, m, b), its footer and
help, its messages on the footer's line, and a totals line whose numbers are `--report --compare`'s."""

from __future__ import annotations

import re

import pytest
from conftest import GENERATED, press, run_cli, type_in, until, visible_lines

from tlview.diagnose.compare import ComparedProblem
from tlview.ui.compare_app import CompareApp
from tlview.ui.compare_head import CompareHead
from tlview.ui.compare_tree import Seen
from tlview.ui.help_screen import HelpScreen
from tlview.ui.key_hints import KeyHints
from tlview.ui.payload_view import PayloadView
from tlview.ui.search import SearchBar
from tlview.ui.tabs import numbered_tabs
from tlview.views.tree import JUMPS

COMPARE = GENERATED / "compare"
BEFORE, AFTER = str(COMPARE / "before" / "trace"), str(COMPARE / "after" / "trace")
SIZE = (160, 45)


async def compared(app: CompareApp, pilot) -> None:
    """Both runs read and matched, the tree shows them, the panes' loaders are done."""
    await until(pilot, lambda: app.comparison is not None, what="the comparison")
    await until(pilot, lambda: app.tree.cursor_node is not None, what="a cursor")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


def shown_compile(app: CompareApp) -> tuple[str, str]:
    """The run (its path) and the compile id the panes show."""
    selection = app.detail.selection
    return str(selection.index.sources[0].path), selection.entry.node.id


async def test_j_and_k_move_and_the_panes_follow_in_each_run():
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        first = app.tree.cursor_node
        assert isinstance(first.data, ComparedProblem)  # the first problem, not a group's title
        assert shown_compile(app)[1] == first.data.before[0].compile_id  # a gone problem: the before run
        assert shown_compile(app)[0].startswith(BEFORE)
        await press(pilot, "j")
        leaf = app.tree.cursor_node
        assert leaf is first.children[0] and isinstance(leaf.data, Seen)
        assert leaf.data.run == "before"
        path, compile_id = shown_compile(app)
        assert path.startswith(BEFORE) and compile_id == leaf.data.occurrence.compile_id
        for _ in range(30):  # down to the new problem: the after run
            if isinstance(app.tree.cursor_node.data, ComparedProblem) and app.tree.cursor_node.data.after:
                break
            await press(pilot, "j")
        new = app.tree.cursor_node.data
        assert app.comparison.new == [new]
        assert shown_compile(app)[0].startswith(AFTER) and shown_compile(app)[1] == new.after[0].compile_id
        assert "print" in "\n".join(visible_lines(app.query_one("#problem")))
        await press(pilot, "k")
        assert isinstance(app.tree.cursor_node.data, str)  # the New group's title
        await press(pilot, "G")
        assert app.tree.cursor_line == app.tree.last_line
        await press(pilot, "g")
        assert app.tree.cursor_line == 0


async def test_the_number_keys_show_each_pane():
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        for number, (tab_id, *_) in reversed(numbered_tabs()):
            await press(pilot, number)
            assert app.detail.active == tab_id
            assert app.detail._shown[tab_id] == app.detail.selection  # filled with the selection


async def test_question_mark_opens_the_help_with_the_compare_keys():
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        sections = dict(app.screen.rows)
        assert {"App", "Filter", "Jumps", "Panes", "Tree", "Reading"} <= sections.keys()
        keys = [key for rows in sections.values() for key, _ in rows]
        assert "1-9 0" in keys and "m" in keys and "n / N" in keys and "j / k" in keys
        assert "f" not in keys and "[" not in keys  # a live run's, a run's ranks: not here
        assert ("Enter", "into the pane") in sections["Tree"]
        assert any(key == "/" and "both runs" in what for key, what in sections["Filter"])
        await press(pilot, "escape")
        assert not isinstance(app.screen, HelpScreen) and app.focused is app.tree


async def test_slash_searches_the_pane_with_n_and_N():
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        await press(pilot, "2", "enter")  # the Graphs pane, and into it
        view = app.query_one("#graph-view", PayloadView)
        await until(pilot, lambda: view.line_count > 1, what="a graph")
        assert app.focused is view
        total = view.text.lower().count("l_x_")
        assert total >= 3
        await press(pilot, "slash")
        bar = app.query_one(SearchBar)
        assert bar.display and app.focused is bar and not app.filter_bar.display
        await type_in(pilot, "l_x_")
        await press(pilot, "enter")
        assert view.search.total == total and f"match 1 of {total}" in view.border_subtitle
        await press(pilot, "n", "n")
        assert f"match 3 of {total}" in view.border_subtitle
        await press(pilot, "N")
        assert f"match 2 of {total}" in view.border_subtitle


async def test_slash_in_the_tree_filters_both_runs():
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        everything = app.comparison
        await press(pilot, "slash")
        assert app.filter_bar.display and not app.query_one(SearchBar).display
        await type_in(pilot, "rank:3")  # no ranks in these runs: nothing is kept
        await until(pilot, lambda: app.comparison is not everything, what="the filtered comparison")
        await press(pilot, "enter")
        assert (app.comparison.gone, app.comparison.new, app.comparison.same) == ([], [], [])
        assert "rank 3" in "\n".join(visible_lines(app.query_one("#tree-note")))
        await press(pilot, "escape")  # clears it: every problem again
        await until(pilot, lambda: not app.flt.active and len(app.comparison.gone) == len(everything.gone),
                    what="the comparison without the filter")


async def test_m_maximizes_the_panes_and_gives_the_focus_back():
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        await press(pilot, "m")
        assert app.screen.maximized is app.detail
        await pilot.pause()
        width, height = app.size
        # the totals stay on top, the footer at the bottom, the panes in between
        assert app.screen.get_widget_at(1, 0)[0] is app.query_one(CompareHead)
        assert app.screen.get_widget_at(1, height - 1)[0] is app.query_one(KeyHints)
        assert app.detail in app.screen.get_widget_at(width // 2, height // 2)[0].ancestors_with_self
        await press(pilot, "3")  # the panes still switch
        assert app.detail.active == "guards"
        await press(pilot, "m")
        assert app.screen.maximized is None
        await until(pilot, lambda: app.focused is app.tree, what="the focus back on the tree")
        await press(pilot, "j")  # and the tree moves again
        assert app.tree.cursor_line == 2


async def test_the_footer_shows_the_keys_and_what_the_app_says(monkeypatch):
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        hints = app.query_one(KeyHints)
        assert [key for key, _, _ in hints.shown] == ["q", "question_mark", "slash", "b", "r", "x", "m"]
        drawn = "".join(segment.text for segment in hints.render_line(0))
        for _, display, description in hints.shown:
            assert f"{display} {description}" in drawn
        # It is said for 1.5 s: beside a CPU hog and three other jobs the footer's next refresh
        # came later than that, and the key's press itself did (its timer ran out before it could
        # be held), and the line was the keys again. Held here until it is drawn.
        say = hints.say
        monkeypatch.setattr(hints, "say", lambda title, message, severity, seconds: say(title, message, severity, 600))
        await press(pilot, "b")  # a jump says where it landed, on the footer's line (no toast)
        said = app.said[-1].message
        assert re.fullmatch(r"graph break 1 of \d+: (before|after) \[\d+/\d+\]", said)
        # (drawn at the footer's next refresh: beside a CPU hog, not yet when the key's handler returns)
        await until(pilot, lambda: said in "".join(segment.text for segment in hints.render_line(0)),
                    what="the footer to say where the jump landed")
        assert not app.screen.query("Toast")
        assert isinstance(app.tree.cursor_node.data, Seen)
        run, compile_id = app.tree.cursor_node.data.run, app.tree.cursor_node.data.occurrence.compile_id
        assert said.endswith(f"{run} [{compile_id}]")
        assert app.detail.selection.entry.node.id == compile_id
        assert JUMPS["break"](app.detail.selection.entry)  # the model's verdict: it has a graph break


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_the_totals_line_says_what_the_report_says_and_nothing_is_cut(size):
    code, report = run_cli("--report", "--compare", BEFORE, AFTER)
    assert code == 0
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=size) as pilot:
        await compared(app, pilot)
        runs, *totals = visible_lines(app.query_one(CompareHead))  # wrapped at 80 columns
        room = app.tree.scrollable_content_region.width
        for group in app.tree.root.children:  # each problem's label fits beside its guide
            for item in group.children:
                assert app.tree.get_label_width(item) + app.tree.guide_depth <= room, item.label  # (icon in)
        assert app.tree.max_scroll_x == 0
    drawn = " ".join(totals)
    pairs = re.findall(r"(?:^|· )([a-z ]+) (\d+) → (\d+)", drawn)
    assert [what for what, _, _ in pairs] == ["failures", "recompiles", "graph breaks", "restarts",
                                              "compile ids"]
    for what, before, after in pairs:
        row = next(line.split() for line in report.splitlines() if line.startswith(what + " "))
        assert row[-2:] == [before, after], (what, row)
    change = re.search(r"compile time ([-+]\d+\.\d+ s)", report).group(1)
    assert f"compile time {change}" in drawn
    assert runs.endswith("before/trace → after/trace")  # the two runs, told apart


async def test_a_failed_comparison_is_shown_and_the_app_stays(tmp_path):
    app = CompareApp(BEFORE, str(tmp_path / "no-such-run"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.query_one(CompareHead).failure, what="the failure")
        assert "could not compare" in " ".join(visible_lines(app.query_one(CompareHead)))
        assert app.said[-1].severity == "error"
        assert app.is_running
        await press(pilot, "question_mark")  # the keys still work
        assert isinstance(app.screen, HelpScreen)


async def test_the_head_takes_the_height_of_its_totals_line_as_it_comes():
    """At 80 columns the totals line wraps: a line more than "reading both runs…" took. The
    head kept its old height until some other layout came (the 80x24 snapshot cut it once,
    under load): it is laid out as its text changes."""
    from textual.app import App

    from tlview.diagnose.compare import compare
    from tlview.index.indexing import open_index

    comparison = compare(open_index(BEFORE), open_index(AFTER), BEFORE, AFTER)

    class Holder(App):
        def compose(self):
            yield CompareHead(BEFORE, AFTER)

    app = Holder()
    async with app.run_test(size=(80, 24)) as pilot:
        head = app.query_one(CompareHead)
        await pilot.pause()
        assert head.size.height == 2  # the runs, "reading both runs…"
        head.comparison = comparison
        await pilot.pause()
        assert head.size.height == 3 and "compile time" in visible_lines(head)[-1]


async def test_with_nothing_selected_every_pane_opens():
    """A filter that keeps no problem of either run leaves nothing selected: `9` ended the app
    (the Run pane read the run of no selection). Each pane opens, the Run pane says so."""
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=(80, 24)) as pilot:
        await compared(app, pilot)
        await press(pilot, "slash")
        await type_in(pilot, "zzzz")
        await press(pilot, "enter")
        await until(pilot, lambda: app.detail.selection.index is None, what="nothing selected")
        for number, (tab_id, *_) in numbered_tabs():
            await press(pilot, number)
            assert app.is_running and app.detail.active == tab_id
        assert "no run selected" in app.detail.copy_text()


async def test_the_compare_view_shows_escapes_from_a_trace_and_runs_none(tmp_path):
    """A trace that names its file with an escape (set the terminal's title, write the clipboard)
    showed it raw in the compare view's labels; the explorer already made it visible."""
    from conftest import CORPUS

    evil = "/home/user/job/graph\\u001b]0;PWNTITLE\\u0007\\u001b]52;c;cHduZWQ=\\u0007_breaks.py"
    source = next((CORPUS / "graph_breaks" / "trace").glob("*.log"))
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    raw = evil.encode().decode("unicode_escape")  # (in payloads, as a program's own text)
    lines = [line.replace("/home/user/job/graph_breaks.py", raw) if line.startswith("\t") else
             line.replace('"/home/user/job/graph_breaks.py"', f'"{evil}"')
             for line in source.read_text().split("\n")]
    (hostile / source.name).write_text("\n".join(lines))
    app = CompareApp(str(source.parent), str(hostile))  # (a problem shows its place in the second run)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: app.comparison is not None, what="the comparison")
        await pilot.pause()
        from tlview.ui.compare_tree import problem_label, problem_text

        problems = app.comparison.same + app.comparison.new + app.comparison.gone
        shown = "\n".join([problem_label(p, 10_000).plain for p in problems] +
                          [problem_text(p).plain for p in problems] + [str(n.label) for n in app.tree.root.children])
        assert "PWNTITLE" in shown  # the problems at that place are listed, their place made visible
        assert "\x1b" not in shown and "\x07" not in shown


async def test_the_palette_lists_every_command_in_the_compare_view_too():
    """Ctrl+P's commands of the compare view: its ranks came from the explorer's tree model, which
    the compare view has none of; the list stopped there (no Rank, Copy payload or Keys)."""
    app = CompareApp(str(GENERATED / "multi_rank4"), str(GENERATED / "multi_rank4"))
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert [t for t in titles if t.startswith("Rank: ")] == [
            f"Rank: {group.title()}" for group in app.rank_groups()]
        assert len(app.rank_groups()) >= 1 and "Copy payload" in titles and titles[-1] == "Keys"


@pytest.mark.parametrize("kind, key", [("recompile", "r"), ("break", "b"), ("error", "x")])
async def test_a_jump_counts_what_the_head_counts(kind, key):
    """b/r/x stop at each problem of their kind once (not at every row whose compile has one), and
    say which of its run's, out of the number the head shows for that run."""
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        heads = {"before": app.comparison.before_totals, "after": app.comparison.after_totals}
        words = {"recompile": ["recompiles"], "break": ["graph_breaks"],
                 "error": ["errors", "skipped_frames"]}[kind]
        expected = sum(heads[run][word] for run in heads for word in words)
        visited, said = [], []
        for _ in range(expected):
            await press(pilot, key)
            said.append(app.said[-1].message)
            visited.append(app.tree.cursor_node)
        assert len(set(visited)) == expected  # each once
        for message, leaf in zip(said, visited):
            found = re.fullmatch(r"([a-z ]+) (\d+) of (\d+): (before|after) \[(.+)\]", message)
            assert found, message
            _, _, of, run, _ = found.groups()
            word = leaf.data.occurrence.counted_as
            assert word in words and int(of) == heads[run][word]
        await press(pilot, key)
        assert app.said[-1].message.startswith("that was the last" if expected else "no ")


async def test_rows_of_one_kind_and_function_read_apart_and_cut_labels_end_in_an_ellipsis():
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=(80, 24)) as pilot:
        await compared(app, pilot)
        labels = [str(item.label) for group in app.tree.root.children for item in group.children]
        assert len(set(labels)) == len(labels), labels
        assert any("[0/1]" in label for label in labels)  # the first compile id, not the place
    from tlview.ui.compare_tree import problem_label
    label = problem_label(app.comparison.gone[1], 12).plain
    assert len(label) == 12 and label.endswith("…")


@pytest.mark.parametrize("key, words", [("f", "follows a live run"), ("[", "rank:N"), ("]", "rank:N")])
async def test_the_keys_of_one_run_say_why_they_do_nothing(key, words):
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        await press(pilot, key)
        assert words in app.said[-1].message
