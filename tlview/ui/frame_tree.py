"""The frame tree widget: renders tlview.views.tree's TreeModel with Textual's Tree.

It is built once per model and then changed by deltas (what the model added, changed, removed):
a live update touches the nodes that changed, never the whole tree. Big trees stay fast: Textual's
Tree lays out every line of its expanded nodes on each change, so past EXPAND_ENTRIES entries the
frames are collapsed (but the cursor's), and a collapsed frame's compile ids are added to the
widget only when it is expanded (measured: 10,000 expanded ids cost 100 ms per live update).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from rich.text import Text
from textual._loop import loop_last
from textual.cache import LRUCache
from textual.css.scalar import Unit
from textual.geometry import Size
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets._tree import _TreeLine
from textual.widgets.tree import TreeNode

from tlview.report.rich_text import elided, entry_text
from tlview.ui.keys import TREE_BINDINGS
from tlview.ui.text_size import SizesSeen
from tlview.ui.tree_keys import KeyedTree
from tlview.views.bookmarks import MARK, Bookmarks
from tlview.views.tree import TreeDelta, TreeEntry, TreeModel

EXPAND_ENTRIES = 1500  # entries shown expanded; past this, frames start collapsed
# Seconds between two layouts of the tree while a backlog comes in slices (app.refresh_views):
# a layout costs O(lines), 30-100 ms at 60,000 lines, and one per slice held every key.
LAYOUT_EVERY = 0.5
LAYOUT_SHARE = 5
LAYOUT_READING = 2.0
LAYOUT_AFTER_KEY = 0.05  # seconds between two looks for a moment with no key coming first
LAYOUT_HOLD = 0.1  # seconds the indexing steps back for a layout while a person reads
DRAWN_LINES = 256  # drawn lines kept (FrameTree._render_line)


@runtime_checkable
class TreeApp(Protocol):
    """What the tree asks of the explorer it is in."""

    def reading(self) -> bool: ...  # the user reads: a layout waits
    def hold_back(self, seconds: float) -> None: ...  # keys wait this long for the frame
    def open_entry(self, entry: TreeEntry) -> None: ...  # Enter: into the pane


class FrameTree(KeyedTree[TreeEntry]):
    """Groups (ranks, processes) > frames > compile ids > attempts."""

    BINDINGS = TREE_BINDINGS
    _adding_many = False  # adding nodes: the tree's caches are invalidated once, at the end
    _stale = False  # nodes were added and the lines are not laid out again yet
    _laid_out = 0.0  # time.monotonic() of the last layout
    _build_seconds = 0.0  # what the last layout took
    _previous_lines = None  # the lines of the last layout, while the next one is due
    _layout_due = False  # a layout is asked for (_lay_out_between_keys)

    def __init__(self, bookmarks: Bookmarks | None = None, *, id: str | None = None) -> None:
        # Each top-level node's lines as last laid out: [lines, widest, first line], kept until
        # _add changes below it. 20,000 ranks are 60,000 lines: laying all out took 100-260 ms,
        # and a key pressed then waited for it.
        self._top_lines: dict[int, list] = {}
        super().__init__("compile ids", id=id)
        self.show_root = False
        self.guide_depth = 3
        self.auto_expand = False
        self.model: TreeModel | None = None
        self.bookmarks = bookmarks if bookmarks is not None else Bookmarks()  # the app's: their rows are marked
        self._by_key: dict[tuple, TreeNode[TreeEntry]] = {}
        self._pending: set[int] = set()  # ids of nodes whose children are not added yet
        self._collapsed_big = False  # past EXPAND_ENTRIES: frames were collapsed
        self._widths: dict[int, tuple[Text, int]] = {}  # id(node) -> (its label, its width)
        self._drawn: LRUCache[tuple, Strip] = LRUCache(DRAWN_LINES)
        self._sizes_seen = SizesSeen()

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return (self._sizes_seen.changed(size, container_size, self.virtual_size)
                and super()._size_updated(size, virtual_size, container_size, layout))

    def render_lines(self, crop):
        self._pass_style = self.rich_style  # (Tree read it for every line: it walks every ancestor)
        try:
            return super().render_lines(crop)
        finally:
            self._pass_style = None

    _pass_style = None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        return self._render_line(y + scroll_y, scroll_x, scroll_x + self.size.width,
                                 self._pass_style or self.rich_style)

    def _render_line(self, y: int, x1: int, x2: int, base_style) -> Strip:
        # Textual's Tree keys its drawn lines by a counter bumped at every layout, so each layout
        # drew every line on screen again: at 10,000 compile ids, 40-60 ms a frame while the tree
        # filled in, and a key pressed then waited for it. Here a line is keyed by what it is
        # drawn from (its line number, which the mouse reads, and each node of its path: its id,
        # changes and place among its siblings), so lines a layout did not change are kept.
        lines = self._tree_lines
        if y >= len(lines):
            return super()._render_line(y, x1, x2, base_style)
        line = lines[y]
        width = max(self.virtual_size.width, self.size.width)
        key = (y, width, self.size.width, base_style, self._pseudo_class_state, self.has_focus, self.cursor_line == y,
               self.hover_line == y, self.guide_depth, self.show_guides, line.last,
               tuple((n._id, n._updates, n.is_last) for n in line.path))
        strip = self._drawn.get(key)
        if strip is None:
            strip = self._drawn[key] = super()._render_line(y, 0, width, base_style)
        return strip.crop(x1, x2)

    def notify_style_update(self) -> None:
        self._drawn.clear()
        super().notify_style_update()

    def _invalidate(self) -> None:
        # Textual's Tree invalidates its line cache and lays itself out again on every node added:
        # building 20,000 rank nodes spent 3 s of the main thread there. A whole build does it once.
        if self._adding_many:
            self._stale = True  # (`_add` noted which top-level subtrees changed)
        else:
            # A change not placed by _add (expanded, collapsed, removed, resized): all of it.
            self._top_lines.clear()
            self._lay_out_added()
            self._previous_lines = None

    def _lay_out_added(self) -> None:
        """Lay the lines out again at the next refresh, keeping the top-level subtrees that
        _changed_below did not mark."""
        self._stale = False
        self._laid_out = time.monotonic()
        lines = self._tree_lines_cached
        super()._invalidate()
        self._previous_lines = lines

    def lay_out_if_stale(self) -> None:
        if self._stale:
            self._lay_out_added()

    def lay_out_when_due(self, more_to_come: bool) -> None:
        """New lines are laid out at once when nothing more is coming. While more comes (a backlog
        shown in slices, the first read of the logs), at most every LAYOUT_EVERY, and for at most
        1/LAYOUT_SHARE of the time; while keys come (a person reads), every LAYOUT_READING: a key
        that lands on a layout waits for it and the frame it makes (20-60 ms each at 20,000
        ranks); and never while a key comes first."""
        if not self._stale:
            return
        if not more_to_come:
            self._lay_out_added()
            return
        since = time.monotonic() - self._laid_out
        wait = max(LAYOUT_EVERY, LAYOUT_SHARE * self._build_seconds)
        if since >= wait and (since >= LAYOUT_READING or not getattr(self.app, "reading", bool)()):
            self._lay_out_between_keys()

    def _lay_out_between_keys(self) -> None:
        """Lay out once the messages queued now are handled, and not while a key comes first: a
        key read while a slice ran waited for the layout that slice asked for and the frame it
        made (60-130 ms at 20,000 ranks), before it was even handled."""
        if not self._layout_due:
            self._layout_due = True
            self.call_later(self._lay_out_unless_keys)

    def _lay_out_unless_keys(self) -> None:
        keys_first = getattr(self.app, "keys_first", None)
        if self._stale and keys_first is not None and keys_first():
            self.set_timer(LAYOUT_AFTER_KEY, self._lay_out_unless_keys)
            return
        self._layout_due = False
        if self._stale and isinstance(self.app, TreeApp) and self.app.reading():
            self.app.hold_back(LAYOUT_HOLD)  # the layout and its frame, before the next key
        self.lay_out_if_stale()

    def get_label_width(self, node: TreeNode[TreeEntry]) -> int:
        # Tree's default renders every label to measure it, on every expand: O(lines) renders.
        # Measured once per label: a Text's cell_len joins its parts again on every call.
        label = node._label
        known = self._widths.get(id(node))
        if known is None or known[0] is not label:
            known = self._widths[id(node)] = (label, label.cell_len + (len(self.ICON_NODE) if node.allow_expand else 0))
        return known[1]

    def _build(self) -> None:
        """Textual's Tree._build, with each line's width found as its line is made (Textual's
        measures every line again after: 4.4 M measures in 231 builds while 20,000 ranks came in,
        52 s of the main thread), and the top-level subtrees no node was added to since the last
        layout kept as they were (a top-level node's lines do not depend on its siblings: with no
        root shown, each is drawn as a last child). The leading tops kept in place are the start
        of the last build's lines, taken as they are: ranks come in at the end, and joining the
        lines of all 20,000 again took 20-50 ms a layout (1.1 s of the main thread in one fill)."""
        started = time.perf_counter()
        width_of = self.get_label_width
        guide_depth = self.guide_depth
        kept = self._top_lines  # (a top changed below was dropped from it; anything else cleared it)
        tops = self.root._children  # show_root is False
        in_place = lines_in_place = widest = 0
        previous, self._previous_lines = self._previous_lines, None
        if previous is not None:
            for top in tops:
                laid = kept.get(top._id)
                if laid is None or laid[2] != lines_in_place:
                    break
                in_place += 1
                lines_in_place += len(laid[0])
                widest = max(widest, laid[1])
        lines: list[_TreeLine[TreeEntry]] = previous[:lines_in_place] if previous and in_place else []
        for top in tops[in_place:]:
            laid = kept.get(top._id)
            if laid is None:
                laid = kept[top._id] = [*self._lay_out(top, width_of, guide_depth), -1]
            if laid[2] != len(lines):  # moved: its nodes' line numbers too
                for number, line in enumerate(laid[0], len(lines)):
                    line.path[-1]._line = number
                laid[2] = len(lines)
            lines.extend(laid[0])
            widest = max(widest, laid[1])
        self._tree_lines_cached = lines
        self.virtual_size = Size(widest if lines else self.size.width, len(lines))
        if self.cursor_line != -1:
            if self.cursor_node is not None:
                self.cursor_line = self.cursor_node._line
            if self.cursor_line >= len(lines):
                self.cursor_line = -1
        self._build_seconds = time.perf_counter() - started

    @staticmethod
    def _lay_out(top: TreeNode[TreeEntry], width_of, guide_depth: int) -> tuple[list, int]:
        """The lines of one top-level node and its expanded descendants, and the widest."""
        lines: list[_TreeLine[TreeEntry]] = []
        add_line = lines.append
        widest = 0

        def add_node(path: list, node: TreeNode[TreeEntry], last: bool) -> None:
            nonlocal widest
            child_path = [*path, node]
            add_line(_TreeLine(child_path, last))
            widest = max(widest, width_of(node) + len(path) * guide_depth)
            if node._expanded:
                for last_child, child in loop_last(node._children):
                    add_node(child_path, child, last_child)

        add_node([], top, True)
        return lines, widest

    def watch_virtual_size(self, size) -> None:
        """The tree's side grows to fit its widest label (capped at 40% by the CSS). Set here, not
        by `width: auto`: that followed the Tree's transient sizes, and a frame now and then drew
        the tree at its minimum width and blank. It never shrinks back: no jumping panes."""
        side = self.parent
        if side is None or not self.root.children:
            return
        wanted = size.width + 2  # the scrollbar and the border
        current = side.styles.width
        if current is None or (current.unit == Unit.CELLS and wanted > current.value):
            side.styles.width = wanted

    def render_label(self, node: TreeNode[TreeEntry], base_style, style) -> Text:
        """Textual's label, its middle left out where it is wider than the tree (the side is at
        most 40% of the screen): its counts and badges stay."""
        label = super().render_label(node, base_style, style)
        depth, parent = 0, node._parent
        while parent is not None and parent is not self.root:
            depth, parent = depth + 1, parent._parent
        return elided(label, self.scrollable_content_region.width - depth * self.guide_depth,
                      counted=node.data is not None and node.data.kind in ("frame", "group"))

    def process_label(self, label) -> Text:
        # Labels are always Text built by entry_text: never parse them as markup.
        return label if isinstance(label, Text) else Text(str(label))

    @property
    def entry(self) -> TreeEntry | None:
        """The entry under the cursor."""
        node = self.cursor_node
        return node.data if node is not None else None

    # ---- building ------------------------------------------------------------------------------

    def show_model(self, model: TreeModel) -> None:
        """Show a model whole (a new filter, a new index); keep the cursor on the same entry."""
        cursor_key = self.entry.key if self.entry is not None else None
        self.model = model
        self.clear()
        # Tree.clear() numbers the new nodes from 0 again: a line drawn of the old tree had the
        # same node ids and changes, and its drawing was taken for the new one's (a folded
        # tree's first rank kept its unfolded label, "rank 0", 1 start in 5 at 120 columns).
        self._drawn.clear()
        self._by_key.clear()
        self._widths.clear()
        self._pending.clear()
        expand = sum(1 for _ in model.walk()) <= EXPAND_ENTRIES
        self._collapsed_big = not expand
        self._adding_many = True
        try:
            for entry in model.roots:
                self._add(self.root, entry, expand)
        finally:
            self._adding_many = False
            self._invalidate()
        # The same compile id if it is still shown, else the first one: never a node of the old tree.
        if cursor_key is None or not self.select_key(cursor_key):
            first = next(iter(model.compile_entries()), None)
            if first is None or not self.select_key(first.key):
                self.move_cursor(None)

    def apply(self, delta: TreeDelta, more_to_come: bool = False) -> None:
        """Show what changed in the model: added, changed and removed entries only; the new lines
        are laid out when due (lay_out_when_due)."""
        if delta.rebuilt:
            assert self.model is not None  # (a delta comes from the model shown)
            self.show_model(self.model)
            return
        for entry in delta.removed:
            node = self._by_key.pop(entry.key, None)
            for child in entry.children:
                self._by_key.pop(child.key, None)
            if node is not None:
                node.remove()
        expand = len(self._by_key) <= EXPAND_ENTRIES
        if not expand and not self._collapsed_big:
            self._collapse_frames()  # grown past the limit while following: once
        self._adding_many = True
        try:
            self._add_entries(delta.added, expand)
        finally:
            self._adding_many = False
        self.lay_out_when_due(more_to_come)
        for entry in delta.changed:
            node = self._by_key.get(entry.key)
            if node is not None:
                node.set_label(self.label_of(entry))
                self._changed_below(node)  # its width
                if entry.children and not node.allow_expand:
                    node.allow_expand = True

    def _collapse_frames(self) -> None:
        self._collapsed_big = True
        keep = set()
        node = self.cursor_node
        while node is not None:
            keep.add(node.id)
            node = node.parent
        # Marked collapsed, not collapse()d: Textual posts a NodeCollapsed per node, which bubbles
        # up to the App (nothing here listens): at 20,000 ranks, 80,000 dispatches that held the
        # keys pressed meanwhile for 300 ms. One layout after.
        for node in list(self._by_key.values()):
            if node.data is not None and node.data.kind == "frame" and node._expanded and node.id not in keep:
                node._expanded = False
                node._updates += 1
        self._invalidate()

    def _add_entries(self, added: list[TreeEntry], expand: bool) -> None:
        """Add new entries in their places among the siblings shown. The model holds the entries
        shown plus these new ones, so a new entry's place is before the first sibling after it
        that is not new. One search per entry over all its siblings cost 5.7 s for 4,671 ids."""
        model = self.model
        assert model is not None  # (entries are added to the model shown)
        by_parent: dict[int, tuple[TreeEntry | None, list[TreeEntry]]] = {}
        for entry in added:  # parents first: a parent's group comes before its children's
            by_parent.setdefault(id(entry.parent), (entry.parent, []))[1].append(entry)
        for parent_entry, entries in by_parent.values():
            parent = self.root if parent_entry is None else self._by_key.get(parent_entry.key)
            if parent is None or parent.id in self._pending:
                continue  # its parent is collapsed and not built: they come when it is expanded
            new = {id(e) for e in entries if e.key not in self._by_key}
            if not new:
                continue
            siblings = parent_entry.children if parent_entry is not None else model.roots
            if all(id(s) in new for s in siblings[len(siblings) - len(new):]):
                places: Sequence[int] = range(len(siblings) - len(new), len(siblings))  # the usual case: appended
            else:
                places = sorted(i for i, s in enumerate(siblings) if id(s) in new)
            before: dict[int, TreeNode | None] = {}
            following = None  # the old sibling after a run of new ones
            for at in reversed(places):
                if at + 1 < len(siblings) and id(siblings[at + 1]) not in new:
                    following = self._by_key.get(siblings[at + 1].key)
                before[at] = following
            for at in places:
                if siblings[at].key not in self._by_key:  # (or added with its parent)
                    self._add(parent, siblings[at], expand, before=before[at])

    def _add(self, parent: TreeNode, entry: TreeEntry, expand: bool, before: TreeNode | None = None) -> TreeNode:
        has_children = bool(entry.children) or entry.kind in ("frame", "group")
        node = parent.add(self.label_of(entry), data=entry, before=before, allow_expand=has_children,
                          expand=has_children and (expand or entry.kind == "group"))
        self._by_key[entry.key] = node
        self._changed_below(parent)
        if node.is_expanded or entry.kind == "group":
            for child in entry.children:
                if child.key not in self._by_key:
                    self._add(node, child, expand)
        elif has_children:
            self._pending.add(node.id)
        return node

    def label_of(self, entry: TreeEntry) -> Text:
        """The entry's label, after the bookmark's mark where it is bookmarked."""
        label = entry_text(entry)
        return Text.assemble((f"{MARK} ", "bold"), label) if entry.key in self.bookmarks else label

    def relabel(self, key: tuple) -> None:
        """Draw the entry with `key` again (its bookmark came or went)."""
        node = self._by_key.get(key)
        if node is not None and node.data is not None:
            node.set_label(self.label_of(node.data))
            self._changed_below(node)  # its width

    def _changed_below(self, node: TreeNode) -> None:
        """Lay out the top-level subtree of `node` again at the next layout."""
        while node.parent is not None and node.parent is not self.root:
            node = node.parent
        self._top_lines.pop(node._id, None)

    def _materialize(self, node: TreeNode[TreeEntry]) -> None:
        if node.id in self._pending and node.data is not None:
            self._pending.discard(node.id)
            for child in node.data.children:
                if child.key not in self._by_key:
                    self._add(node, child, expand=False)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        self._materialize(event.node)

    # ---- finding -------------------------------------------------------------------------------

    def node_for_key(self, key: tuple) -> TreeNode | None:
        """The widget node of an entry, building its collapsed parents if needed."""
        self.lay_out_if_stale()  # the node has its line
        node = self._by_key.get(key)
        if node is not None or self.model is None:
            return node
        entry = self.model.by_key.get(key)
        chain = []
        while entry is not None:
            chain.append(entry)
            entry = entry.parent
        for ancestor in reversed(chain[1:]):
            ancestor_node = self._by_key.get(ancestor.key)
            if ancestor_node is not None:
                self._materialize(ancestor_node)
        return self._by_key.get(key)

    def select_key(self, key: tuple) -> bool:
        """Put the cursor on the entry with `key` (expanding its parents); False if not shown."""
        node = self.node_for_key(key)
        if node is None:
            return False
        parent = node.parent
        while parent is not None and parent is not self.root:
            if not parent.is_expanded:
                parent.expand()
            parent = parent.parent
        # Asking for a line makes the Tree lay its lines out now, so the node has its line and the
        # cursor moves at once (waiting for a refresh let a key pressed meanwhile go elsewhere).
        self.get_node_at_line(0)
        self.move_cursor(node)
        return True

    # ---- keys (tree_keys.KeyedTree) -----------------------------------------------------------

    def open_node(self, node: TreeNode[TreeEntry]) -> bool:
        if node.data is None or node.data.node is None:
            return False
        # Not a message: a key typed right after Enter (`/` to search the pane) must find the
        # focus already moved, and a message would be handled after it.
        if isinstance(self.app, TreeApp):
            self.app.open_entry(node.data)
        return True

    def before_expand(self, node: TreeNode[TreeEntry]) -> None:
        self._materialize(node)
