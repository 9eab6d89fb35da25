"""Every key of the apps and their widgets, each with what it does (its tooltip) and its section
in the help: the widgets take their BINDINGS from here, and the footer, the help screen (`?`,
from `key_table`) and the palette read them. Nothing here imports a widget (they import this)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

from tlview.ui.tabs import numbered_tabs

# Sections of the help screen, by binding id (not Binding.group: the footer would merge the keys).
HELP_SECTIONS: dict[str, str] = {}


def key(keys: str, action: str, description: str, section: str, tooltip: str, id: str, **kwargs) -> Binding:
    HELP_SECTIONS[id] = section
    return Binding(keys, action, description, tooltip=tooltip, id=id, **kwargs)


# ---- the explorer (TlviewApp) -----------------------------------------------------------------

BINDINGS: list[BindingType] = [
    key("q", "quit", "Quit", "App", "quit", "quit"),
    # Textual 8 binds Ctrl+C to copy, then to a "press q to quit" note: a viewer quits on it (text
    # selected with the mouse is still copied: the screen's binding comes first).
    key("ctrl+c", "quit", "Quit", "App", "quit", "quit-ctrl-c", key_display="Ctrl+C", show=False),
    # The terminal sends Ctrl+Z as a key while the app runs (raw mode): suspend as a shell job
    # would (driver.py gives the terminal back; `fg` redraws). No tooltip: everyone knows it.
    key("ctrl+z", "suspend_process", "Suspend", "App", "", "suspend", key_display="Ctrl+Z", show=False),
    key("question_mark", "help", "Help", "App", "this help", "help", key_display="?"),
    key("ctrl+p", "command_palette", "palette", "App", "command palette", "palette", show=False),
    key("slash", "filter", "Filter", "Filter", "filter: recompiles, graph_breaks, guards, dynamic, "
        "perf, perf_hints, output_code, errors, rank:N, or a regex (also searched in payloads)", "filter",
        key_display="/"),
    key("escape", "clear_filter", "Clear filter", "Filter", "in a pane: back to the tree; in the tree: "
        "clear the filter", "clear-filter", show=False),
    *[key(k, f"jump('{kind}', {step})", f"{kind.capitalize()}" if step > 0 else f"Prev {kind}", "Jumps",
          f"next / previous {what}", f"{'next' if step > 0 else 'prev'}-{kind}",
          show=step > 0 and kind != "perf")  # (the footer has no room for a fourth jump at 80 columns)
      for kind, keys, what in (("break", "bB", "graph break"), ("recompile", "rR", "recompile"),
                               ("error", "xX", "error"), ("perf", "pP", "perf problem"))
      for k, step in zip(keys, (1, -1))],
    # `m` maximizes (as in lnav/less it would mark): the mark is Shift+M; `'` and `"` go to them
    key("M", "toggle_bookmark", "Bookmark", "Jumps", "bookmark the selected compile id (again: remove "
        "it); for this session only", "toggle-bookmark", show=False),
    key("apostrophe", "jump('bookmark', 1)", "Bookmark", "Jumps", "next / previous bookmark",
        "next-bookmark", key_display="'", show=False),
    key("quotation_mark", "jump('bookmark', -1)", "Prev bookmark", "Jumps", "next / previous bookmark",
        "prev-bookmark", key_display='"', show=False),
    key("t", "jump_to_time", "Time", "Jumps", "jump to a time (HH:MM:SS, +90s, 50%): a histogram of "
        "compile ids and problems over the run", "jump-to-time", show=False),
    key("tab", "focus_next", "Next", "App", "move the focus: tree, pane, pane's list", "focus-next",
        show=False),
    key("shift+tab", "focus_previous", "Previous", "App", "move the focus: tree, pane, pane's list",
        "focus-previous", show=False),
    # shown where it applies: the live sign and "+N new — f: follow the newest" name it
    key("f", "toggle_follow", "Follow", "App", "follow the newest compile id (live)", "toggle-follow",
        show=False),
    key("left_square_bracket", "cycle_rank(-1)", "Prev rank", "Panes",
        "previous / next rank (all ranks, 0, 1, ...)", "prev-rank", key_display="[", show=False),
    key("right_square_bracket", "cycle_rank(1)", "Next rank", "Panes",
        "previous / next rank (all ranks, 0, 1, ...)", "next-rank", key_display="]", show=False),
    key("m", "toggle_maximize", "Maximize", "Panes", "maximize the panes / restore (Esc restores too)",
        "maximize"),
    key("o", "output_code", "Output code", "Panes", "the output code of the selected compile id",
        "output-code", show=False),
    key("y", "copy_payload", "Copy", "Panes", "copy the shown payload (OSC 52: works over SSH)", "copy",
        show=False),
    key("e", "open_external", "Pager", "Panes", "open the shown payload in $PAGER / $EDITOR",
        "open-external", show=False),
    # one row in the help: the panes by number (each pane's own tooltip is its tab's)
    *[key(n, f"show_tab('{tab_id}')", title, "Panes",
          "the panes: " + ", ".join(f"{n} {t}" for n, (_, t, _, _) in numbered_tabs()),
          f"tab-{tab_id}", show=False)
      for n, (tab_id, title, what, _) in numbered_tabs()],
]

# A user who presses these is reading: the cursor stops following the newest compile id.
USER_MOVES = {"up", "down", "j", "k", "pageup", "pagedown", "home", "end", "g", "G", "left",
              "right", "h", "l", "b", "B", "r", "R", "x", "X", "enter", "apostrophe", "quotation_mark"}

# ---- the trees (FrameTree, CompareTree) --------------------------------------------------------

TREE_BINDINGS: list[BindingType] = [
    key("j", "cursor_down", "Down", "Tree", "move down / up", "tree-down", show=False),
    key("k", "cursor_up", "Up", "Tree", "move down / up", "tree-up", show=False),
    key("h,left", "collapse_or_parent", "Collapse", "Tree", "collapse / expand", "tree-collapse", show=False),
    key("l,right", "expand_node", "Expand", "Tree", "collapse / expand", "tree-expand", show=False),
    key("g,home", "scroll_home", "Top", "Tree", "top / bottom", "tree-top", show=False),
    key("G,end", "scroll_end", "Bottom", "Tree", "top / bottom", "tree-bottom", show=False),
    key("enter", "open", "Open", "Tree", "on a recompile: go to the compile whose guard failed; "
        "else into the pane", "tree-open", show=False),
]

# ---- the panes' views (PayloadView, RenderedView) -------------------------------------------------

# The reading keys of every pane, payloads and panes drawn as one text (Summary, Graph breaks,
# Run) alike, so that every pane reads the same way.
SCROLL_BINDINGS: list[BindingType] = [
    key("j", "scroll_down", "Down", "Reading", "scroll down / up", "view-down", show=False),
    key("k", "scroll_up", "Up", "Reading", "scroll down / up", "view-up", show=False),
    key("g", "scroll_home", "Top", "Reading", "top / bottom of the payload", "view-top", show=False),
    key("G", "scroll_end", "Bottom", "Reading", "top / bottom of the payload", "view-bottom", show=False),
    key("space", "page_down", "Page down", "Reading", "page down", "view-page", show=False),
    # (in the tree the same keys fold and unfold: these are a pane's, when it has the focus)
    key("h,left", "scroll_sideways(-1)", "Left", "Reading", "scroll long lines sideways (less -S)",
        "view-left", show=False),
    key("l,right", "scroll_sideways(1)", "Right", "Reading", "scroll long lines sideways (less -S)",
        "view-right", show=False),
    key("0,home", "scroll_line_start", "Line start", "Reading",
        "back to the start of the lines (after a search scrolled right)", "view-line-start", show=False),
]

# `/`, `n`, `N` in a view of lines, as `less` does (search.LineSearch)
SEARCH_BINDINGS: list[BindingType] = [
    key("slash", "search", "Search", "Reading", "search in this pane by regex (tree: / filters)",
        "view-search", key_display="/"),
    key("n", "next_match(1)", "Next match", "Reading", "next / previous match", "view-next-match"),
    key("N", "next_match(-1)", "Prev match", "Reading", "next / previous match", "view-prev-match",
        show=False),
    key("escape", "end_search", "End search", "Reading", "end the search (else: clear the filter)",
        "view-end-search", show=False),
]

# The search bar: Esc ends the search (Enter submits it, as every Input does).
SEARCH_BAR_BINDINGS: list[BindingType] = [Binding("escape", "close_search", "End search", show=False)]

PAYLOAD_VIEW_BINDINGS: list[BindingType] = [
    *SCROLL_BINDINGS,
    *SEARCH_BINDINGS,
    key("w", "toggle_wrap", "Wrap", "Reading", "wrap long lines (on / off)", "view-wrap"),
]

RENDERED_VIEW_BINDINGS: list[BindingType] = [
    *SCROLL_BINDINGS,
    *SEARCH_BINDINGS,
    key("enter", "open_line", "Open", "Reading", "open the compile id on the line (the current match's, "
        "else the first on screen): the Run pane's stack trie", "view-open", show=False),
]

# The Recompiles pane's list of reasons (an OptionList: Enter selects).
RECOMPILE_LIST_BINDINGS: list[BindingType] = [
    key("enter", "select", "Open", "Reading", "on a recompile reason (4 Recompiles): go to the compile "
        "whose guard failed", "recompile-open", show=False),
]

# ---- the compare view (CompareApp, CompareTree) -----------------------------------------------

# The explorer's, but those of one run (follow it live, cycle its ranks; a `rank:N` filter still
# keeps one rank of both runs), and its filter's words (both runs, no payloads).
COMPARE_BINDINGS: list[BindingType] = [
    key("slash", "filter", "Filter", "Filter", "filter both runs: recompiles, graph_breaks, guards, "
        "dynamic, perf, perf_hints, output_code, errors, rank:N, or a regex (not in payloads)", "compare-filter",
        key_display="/") if isinstance(b, Binding) and b.id == "filter" else b
    for b in BINDINGS if not isinstance(b, Binding) or b.id not in (
        "toggle-follow", "prev-rank", "next-rank", "toggle-bookmark", "next-bookmark", "prev-bookmark",
        "jump-to-time")]
# The explorer's keys of one run say why they do nothing here (a key that did nothing, silently,
# read as a bug); no tooltip: not in the help.
COMPARE_BINDINGS += [
    key("f", "not_here('follow')", "Follow", "App", "", "compare-no-follow", show=False),
    key("left_square_bracket,right_square_bracket", "not_here('ranks')", "Ranks", "App", "",
        "compare-no-ranks", show=False),
    key("M,apostrophe,quotation_mark", "not_here('bookmarks')", "Bookmarks", "App", "",
        "compare-no-bookmarks", show=False),
    key("t", "not_here('time')", "Time", "App", "", "compare-no-time", show=False),
]

# The compare view's tree: Enter on a problem or a compile id goes into the pane.
COMPARE_TREE_BINDINGS: list[BindingType] = [
    key("enter", "open", "Open", "Tree", "into the pane", "compare-tree-open", show=False)
    if isinstance(b, Binding) and b.id == "tree-open" else b for b in TREE_BINDINGS]

# ---- the help screen (`?`) ---------------------------------------------------------------------

HELP_SCREEN_BINDINGS: list[BindingType] = [
    Binding("escape,q,question_mark", "dismiss", "Close"),
    # read as a pane is: it is longer than a small terminal
    Binding("j,down", "scroll('down')", "Down", show=False),
    Binding("k,up", "scroll('up')", "Up", show=False),
    Binding("space,pagedown", "scroll('page_down')", "Page down", show=False),
    Binding("pageup", "scroll('page_up')", "Page up", show=False),
    Binding("g,home", "scroll('home')", "Top", show=False),
    Binding("G,end", "scroll('end')", "Bottom", show=False),
]

# The jump to a time (`t`): the cursor over the histogram's buckets moves even as the input has
# the focus (its text is short: Backspace edits it); Enter jumps (the input's submit).
TIME_JUMP_BINDINGS: list[BindingType] = [
    Binding("escape", "dismiss", "Close"),
    Binding("left,h", "move_bucket(-1)", "Earlier", priority=True),
    Binding("right,l", "move_bucket(1)", "Later", priority=True),
]

KEY_NAMES = {"question_mark": "?", "apostrophe": "'", "quotation_mark": '"',
             "slash": "/", "escape": "Esc", "left_square_bracket": "[",
             "right_square_bracket": "]", "enter": "Enter", "left": "←", "right": "→",
             "home": "Home", "end": "End", "up": "↑", "down": "↓", "ctrl+p": "Ctrl+P", "tab": "Tab",
             "shift+tab": "Shift+Tab"}


def key_text(binding: Binding) -> str:
    return " ".join(binding.key_display or KEY_NAMES.get(k, k) for k in binding.key.split(","))


def key_range(keys: list[str]) -> str:
    """`1-9 0` for the numbered panes (the tenth is 0), else the keys one by one."""
    if len(keys) > 2 and all(k.isdigit() for k in keys):
        last = " 0" if keys[-1] == "0" else ""
        return f"{keys[0]}-{keys[-2] if last else keys[-1]}{last}"
    return " / ".join(keys)


def help_table(bindings: list[BindingType]) -> list[tuple[str, str, str]]:
    """(section, keys as shown, what they do): the bindings with a tooltip, grouped by section in
    the order each section first comes; those of one section that say the same thing share a row."""
    groups: dict[str, dict[str, list[str]]] = {}
    for binding in bindings:
        if not isinstance(binding, Binding) or not binding.tooltip:
            continue
        section = HELP_SECTIONS.get(binding.id or "", "Other")
        keys = groups.setdefault(section, {}).setdefault(binding.tooltip, [])
        if key_text(binding) not in keys:
            keys.append(key_text(binding))
    return [(section, key_range(keys), what) for section, rows in groups.items() for what, keys in rows.items()]


def key_table() -> list[tuple[str, str, str]]:
    """Every key of the explorer, as its help screen shows them: (section, key as shown, what it
    does). The app's, its tree's, then the payload views' (the panes drawn as one text read alike)."""
    return help_table([*BINDINGS, *TREE_BINDINGS, *PAYLOAD_VIEW_BINDINGS, *RENDERED_VIEW_BINDINGS,
                       *RECOMPILE_LIST_BINDINGS])


def compare_key_table() -> list[tuple[str, str, str]]:
    """The compare view's, as `key_table`."""
    return help_table([*COMPARE_BINDINGS, *COMPARE_TREE_BINDINGS, *PAYLOAD_VIEW_BINDINGS,
                       *RENDERED_VIEW_BINDINGS, *RECOMPILE_LIST_BINDINGS])
