"""keys.py is the one table of the keys: the apps and their widgets take their BINDINGS from it,
and `key_table()` is what the help screen (`?`) lists, in its order."""

from textual.binding import Binding

from tlview.ui import keys
from tlview.ui.compare_app import CompareApp
from tlview.ui.compare_tree import CompareTree
from tlview.ui.frame_tree import FrameTree
from tlview.ui.help_screen import HelpScreen, sections
from tlview.ui.keys import key_table
from tlview.ui.payload_view import PayloadView
from tlview.ui.recompiles_pane import RecompileList
from tlview.ui.rendered_view import RenderedView


def test_the_apps_and_widgets_take_their_bindings_from_the_key_table():
    from tlview.ui.app import TlviewApp

    assert TlviewApp.BINDINGS is keys.BINDINGS and CompareApp.BINDINGS is keys.COMPARE_BINDINGS
    assert FrameTree.BINDINGS is keys.TREE_BINDINGS and CompareTree.BINDINGS is keys.COMPARE_TREE_BINDINGS
    assert PayloadView.BINDINGS is keys.PAYLOAD_VIEW_BINDINGS
    assert RenderedView.BINDINGS is keys.RENDERED_VIEW_BINDINGS
    assert HelpScreen.BINDINGS is keys.HELP_SCREEN_BINDINGS
    assert RecompileList.BINDINGS is keys.RECOMPILE_LIST_BINDINGS


def test_key_table_lists_every_key_with_a_tooltip_once_in_help_order():
    table = key_table()
    assert all(isinstance(row, tuple) and len(row) == 3 and all(isinstance(c, str) for c in row) for row in table)
    said = {what for _, _, what in table}
    for binding in [*keys.BINDINGS, *keys.TREE_BINDINGS, *keys.PAYLOAD_VIEW_BINDINGS,
                    *keys.RENDERED_VIEW_BINDINGS, *keys.RECOMPILE_LIST_BINDINGS]:
        assert isinstance(binding, Binding)
        assert (binding.tooltip in said) == bool(binding.tooltip), binding  # no tooltip: not in the help
    sections_in_order = list(dict.fromkeys(section for section, _, _ in table))
    assert sections_in_order == ["App", "Filter", "Jumps", "Panes", "Tree", "Reading"]
    # a section's rows stay together, and keys that say the same share a row
    assert len(sections_in_order) == len([s for i, (s, _, _) in enumerate(table) if i == 0 or table[i - 1][0] != s])
    assert ("Panes", "1-9 0", next(w for s, k, w in table if k == "1-9 0")) in table
    assert ("Jumps", "r / R", "next / previous recompile") in table
    assert ("Tree", "h ← / l →", "collapse / expand") in table
    assert ("App", "?", "this help") in table and ("App", "q / Ctrl+C", "quit") in table
    # Enter in the Run pane, Enter on a recompile reason, Tab: each in the help (#48)
    assert any(k == "Enter" and "Run pane" in w for _, k, w in table)
    assert any(k == "Enter" and "recompile reason" in w for _, k, w in table)
    assert any(k.startswith("Tab") for _, k, _ in table)


def test_the_help_screen_shows_the_key_table():
    table = key_table()
    rows = [(section, keys_, what) for section, section_rows in sections(table) for keys_, what in section_rows]
    assert rows == table


def test_the_compare_view_lists_its_own_filter_and_tree_keys():
    table = keys.compare_key_table()
    assert any(what.startswith("filter both runs") for _, _, what in table)
    assert ("Tree", "Enter", "into the pane") in table
    assert not any(k in ("f", "[ / ]") for _, k, _ in table)  # one run's: follow, ranks
