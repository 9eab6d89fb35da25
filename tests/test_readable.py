"""What the explorer draws reads: failures and their counts at a contrast of 3:1 at least, in a
real terminal, with 256 colours, 16 colours and NO_COLOR (#23)."""

from __future__ import annotations

import time

import pytest
from conftest import GENERATED, Deadline, tlview_command

# xterm's 16 colours (what pyte names them), and the default colours of a dark terminal
NAMED = {"black": "000000", "red": "cd0000", "green": "00cd00", "brown": "cdcd00", "blue": "0000ee",
         "magenta": "cd00cd", "cyan": "00cdcd", "white": "e5e5e5", "brightblack": "7f7f7f",
         "brightred": "ff0000", "brightgreen": "00ff00", "brightbrown": "ffff00", "brightblue": "5c5cff",
         "brightmagenta": "ff00ff", "brightcyan": "00ffff", "brightwhite": "ffffff"}
DEFAULT_FG, DEFAULT_BG = "e5e5e5", "000000"


def rgb(color: str, default: str) -> tuple[int, int, int]:
    value = default if color == "default" else NAMED.get(color, color)
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def luminance(color: tuple[int, int, int]) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = map(channel, color)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(cell) -> float:
    fg, bg = rgb(cell.fg, DEFAULT_FG), rgb(cell.bg, DEFAULT_BG)
    if cell.reverse:
        fg, bg = bg, fg
    high, low = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def marked(cells: list[list], row: int, text: str) -> list:
    line = "".join(c.data for c in cells[row])
    at = line.index(text)
    return [c for c in cells[row][at:at + len(text)] if c.data.strip()]


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {}, {"TERM": "xterm", "COLORTERM": ""}],
                         ids=["NO_COLOR", "256 colours", "16 colours"])
def test_failures_and_their_counts_read_at_3_to_1(terminal, env):
    term = terminal(f"{tlview_command()} {GENERATED / 'failures' / 'trace'}", env=env)
    term.wait_for("compile ids ·")
    term.wait_for(" failure")
    cells = term.cells()
    rows = ["".join(c.data for c in row) for row in cells]  # the rows of that same moment
    failed_rows = [y for y, line in enumerate(rows) if "✗" in line.split("\u2595")[0]]
    status = next(y for y, line in enumerate(rows) if "compile ids ·" in line)
    count = next(part.strip() for part in rows[status].split("·") if "failure" in part)
    assert failed_rows and count[0].isdigit() and count[0] != "0"
    looked = [(y, "✗") for y in failed_rows] + [(status, count)]
    for y, text in looked:
        for cell in marked(cells, y, text):
            assert contrast(cell) >= 3.0, (env, rows[y], text, cell)
        if "NO_COLOR" in env:  # colour gone: the failure is still marked, bold
            assert all(c.bold for c in marked(cells, y, text)), (rows[y], text)


@pytest.mark.asyncio
@pytest.mark.parametrize("width", [80, 100, 60])
async def test_a_narrow_status_line_keeps_the_failures_and_problems(tmp_path, width):
    """At 80 columns the line ended at "… graph breaks ·": the failures and the input problems
    were cut off. Narrow, the least needed parts go first, the name is shortened, and those stay."""
    from conftest import ready

    from tlview.ui.app import TlviewApp
    from tlview.ui.status_line import StatusLine

    trace = next((GENERATED / "failures" / "trace").glob("*.log"))
    damaged = tmp_path / trace.name
    damaged.write_bytes(trace.read_bytes() + b"V1121 not a record at all\n")  # an input problem
    app = TlviewApp(str(damaged))
    async with app.run_test(size=(width, 24)) as pilot:
        await ready(app, pilot)
        await pilot.pause()
        line = app.query_one(StatusLine).text
        assert len(line) <= width
        assert "3 failures" in line and "1 input problem" in line, line
        if width >= 100:
            assert "recompiles" in line and "graph break" in line, line


def test_counts_are_said_in_their_number():
    """`1 recompile`, `1 compile, 1 span`: never `1 recompiles`; a time has its unit."""
    import re
    import subprocess
    import sys

    from conftest import CORPUS

    report = subprocess.run([sys.executable, "-m", "tlview", "--report", str(CORPUS / "recompiles" / "trace")],
                            capture_output=True, text=True, timeout=120, check=True).stdout
    assert "  1 recompile scale_by_int" in report and "  4 recompiles pooled" in report
    assert not re.search(r"\b1 (recompiles|compiles|spans|compile ids|graph breaks|failures)\b", report)


@pytest.mark.asyncio
async def test_an_export_says_what_made_it_and_its_times_have_units():
    """torch.export has no Dynamo frame: its compile's Summary says so (it read `function ?
    location ?`), and the metrics of no compile id read in seconds (it read `0.001062`)."""
    from conftest import SIZE, press, ready

    from tlview.ui.app import TlviewApp

    app = TlviewApp(str(GENERATED / "export" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        summary = app.detail.query_one("#summary-pane")
        outside = summary.copy_text()
        assert "compilation metrics of no compile id" in outside
        assert any(line.startswith("backend (AOT+Inductor)") and line.endswith(" s") for line in outside.splitlines())
        for _ in range(4):  # the group's records, the export's frame, then its [0/0]
            if "[0/0]" in summary.copy_text():
                break
            await press(pilot, "j")
        text = summary.copy_text()
        assert "made by   torch.export (no Dynamo frame" in text and "function  ?" not in text


@pytest.mark.asyncio
async def test_a_text_guard_tree_has_one_header():
    """TORCH_LOGS text logs one guard tree from three places (its header, its lines, its latency):
    the Guards pane showed `# guards / GUARDS: / # guards`; one header now, the tree whole."""
    from conftest import CORPUS, SIZE, press, ready

    from tlview.ui.app import TlviewApp
    from tlview.ui.guards_pane import guards_text

    app = TlviewApp(str(CORPUS / "recompiles" / "torch_logs.txt"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "j")
        text = guards_text(app._selection(app.tree.entry))
        lines = text.splitlines()
        assert lines.count("# guards") == 1 and lines[:2] == ["# guards", "GUARDS:"]
        assert "TREE_GUARD_MANAGER:" in lines and any("EQUALS_MATCH: L['n'] == " in line for line in lines)


@pytest.mark.asyncio
async def test_the_footer_shows_whole_hints_at_80_columns():
    """At 80x24 the footer cut its last hint ("m Maxi", "^p palettez"): whole hints only."""
    from conftest import CORPUS, ready

    from tlview.ui.app import TlviewApp
    from tlview.ui.key_hints import KeyHints

    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        footer = app.query_one(KeyHints)
        footer.unsay()
        app.query_one("#graph-view").focus()  # a pane's keys: more than fit
        await pilot.pause()
        line = str(footer.render()).rstrip()
        assert len(line) <= 80 and line.startswith(" / Search") and "? Help" in line
        words = {description for _, _, description in footer.shown}
        assert line.endswith(tuple(words)), line  # ends on a whole hint


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {}], ids=["NO_COLOR", "256 colours"])
def test_focus_is_visible_without_colour(terminal, env):
    """The view with the keys has a bar on its left (a focused pane looked like the tab bar); a
    bar, not a colour, so that it shows with NO_COLOR too."""
    from conftest import CORPUS

    term = terminal(f"{tlview_command()} {CORPUS / 'graph_breaks' / 'trace'}", width=120, height=30, env=env)
    term.wait_for("compile ids ·")

    def bars() -> set[str]:
        """The first cell right of the tree, on the Summary's rows."""
        rows = term.screen().split("\n")[3:9]  # (below the headline and the tabs)
        return {row.split("\u2595", 1)[1][:1] or " " for row in rows if "\u2595" in row}

    term.wait_for("function  step")
    assert bars() == {" "}  # the tree has the keys
    term.keys("\t", "\t")  # the tabs, then the Summary
    deadline = Deadline(10)
    while bars() != {"▌"} and not deadline.passed():
        time.sleep(0.05)
    assert bars() == {"▌"}, term.screen()
    term.keys("j")  # the Summary reads the key: the tree's cursor stays
    term.keys("\x1b[Z", "\x1b[Z")  # Shift+Tab back to the tree
    deadline = Deadline(10)
    while bars() != {" "} and not deadline.passed():
        time.sleep(0.05)
    assert bars() == {" "}, term.screen()


@pytest.mark.asyncio
async def test_a_narrow_tree_keeps_each_label_s_count_and_badges():
    """At 80x24 the tree is 40% of the screen: a long frame label loses its middle, never its
    count (it read `with_break, resumed at compile_error.py:54  1▕`)."""
    import re

    from conftest import CORPUS, ready

    from tlview.ui.app import TlviewApp

    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        tree = app.tree
        rows = []
        for y in range(min(tree.size.height, len(tree._tree_lines))):
            entry = tree._tree_lines[y].node.data
            rows.append((entry, tree.render_line(y).text.rstrip()))
        frames = [(e, text) for e, text in rows if e.kind == "frame"]
        assert frames and any("…" in text for _, text in frames)  # some were too long
        for entry, text in frames:
            assert len(text) <= tree.scrollable_content_region.width
            assert re.search(rf"  {entry.compile_ids} ids?$", text), text
            location = entry.title.rsplit(":", 1)[-1]
            assert text.split("  ")[-2].endswith(location), text  # the line number stays
        for entry, text in rows:
            if entry.kind == "compile":
                assert f"[{entry.node.id}]" in text and entry.status.word in text, text


@pytest.mark.asyncio
async def test_a_restarted_compile_shows_the_guards_its_final_attempt_built():
    """[0/0] of graph_breaks restarted after its graph break: its first attempt built no guards,
    [0/0_1] built 13 (its G13 badge). On [0/0] the Guards pane said "no guards recorded"; it shows
    the guards of the attempt that compiled, and says whose they are."""
    from conftest import CORPUS, SIZE, press, ready

    from tlview.ui.app import TlviewApp

    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        entry = app.tree.entry
        assert entry.kind == "compile" and entry.node.id == "0/0"
        assert [n.id for n in entry.compile.attempts] == ["0/0", "0/0_1"]
        await press(pilot, "3")
        text = app.detail.copy_text()
        assert text.splitlines()[0] == "# the guards of 0/0_1, the attempt that compiled"
        assert "TREE_GUARD_MANAGER:" in text
        await press(pilot, "j")  # the attempt itself: its own guards, no word on whose
        assert app.tree.entry.kind == "attempt"
        assert app.detail.copy_text().splitlines()[0] == "# dynamo_cpp_guards_str"
