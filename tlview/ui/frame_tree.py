"""The frame tree widget: renders tlview.model.tree's TreeModel with Textual's Tree.

It is built once per model and then changed by deltas (what the model added, changed, removed):
a live update touches the nodes that changed, never the whole tree. Big trees stay fast: Textual's
Tree lays out every line of its expanded nodes on each change, so past EXPAND_ENTRIES entries the
frames are collapsed (but the cursor's), and a collapsed frame's compile ids are added to the
widget only when it is expanded (measured: 10,000 expanded ids cost 100 ms per live update).
"""

from __future__ import annotations

from rich.text import Text
from textual.css.scalar import Unit
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tlview.model.look import entry_text
from tlview.model.tree import TreeDelta, TreeEntry, TreeModel
from tlview.ui.keys import TREE_BINDINGS

EXPAND_ENTRIES = 1500  # entries shown expanded; past this, frames start collapsed


class FrameTree(Tree[TreeEntry]):
    """Groups (ranks, processes) > frames > compile ids > attempts."""

    BINDINGS = TREE_BINDINGS
    _adding_many = False  # in show_model: the tree's caches are invalidated once, at its end


    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("compile ids", id=id)
        self.show_root = False
        self.guide_depth = 3
        self.auto_expand = False
        self.model: TreeModel | None = None
        self._by_key: dict[tuple, TreeNode[TreeEntry]] = {}
        self._pending: set[int] = set()  # ids of nodes whose children are not added yet
        self._collapsed_big = False  # past EXPAND_ENTRIES: frames were collapsed

    def _invalidate(self) -> None:
        # Textual's Tree invalidates its line cache and lays itself out again on every node added:
        # building 20,000 rank nodes spent 3 s of the main thread there. A whole build does it once.
        if not self._adding_many:
            super()._invalidate()

    def get_label_width(self, node: TreeNode[TreeEntry]) -> int:
        # Tree's default renders every label to measure it, on every expand: O(lines) renders.
        icon = len(self.ICON_NODE) if node.allow_expand else 0
        return node.label.cell_len + icon

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
        self._by_key.clear()
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

    def apply(self, delta: TreeDelta) -> None:
        """Show what changed in the model: added, changed and removed entries only."""
        if delta.rebuilt:
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
        for entry in delta.added:
            if entry.key in self._by_key:
                continue
            parent = self.root if entry.parent is None else self._by_key.get(entry.parent.key)
            if parent is None or parent.id in self._pending:
                continue  # its parent is collapsed and not built: it comes when expanded
            self._add(parent, entry, expand, position=True)
        for entry in delta.changed:
            node = self._by_key.get(entry.key)
            if node is not None:
                node.set_label(entry_text(entry))
                if entry.children and not node.allow_expand:
                    node.allow_expand = True

    def _collapse_frames(self) -> None:
        self._collapsed_big = True
        keep = set()
        node = self.cursor_node
        while node is not None:
            keep.add(node.id)
            node = node.parent
        for node in list(self._by_key.values()):
            if node.data.kind == "frame" and node.is_expanded and node.id not in keep:
                node.collapse()

    def _add(self, parent: TreeNode, entry: TreeEntry, expand: bool, position: bool = False) -> TreeNode:
        has_children = bool(entry.children) or entry.kind in ("frame", "group")
        before = None
        if position:  # its place among the siblings already shown
            siblings = entry.parent.children if entry.parent is not None else self.model.roots
            at = siblings.index(entry)
            before = next((self._by_key[s.key] for s in siblings[at + 1:] if s.key in self._by_key), None)
        node = parent.add(entry_text(entry), data=entry, before=before, allow_expand=has_children,
                          expand=has_children and (expand or entry.kind == "group"))
        self._by_key[entry.key] = node
        if node.is_expanded or entry.kind == "group":
            for child in entry.children:
                if child.key not in self._by_key:
                    self._add(node, child, expand)
        elif has_children:
            self._pending.add(node.id)
        return node

    def _materialize(self, node: TreeNode) -> None:
        if node.id in self._pending:
            self._pending.discard(node.id)
            for child in node.data.children:
                if child.key not in self._by_key:
                    self._add(node, child, expand=False)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        self._materialize(event.node)

    # ---- finding -------------------------------------------------------------------------------

    def node_for_key(self, key: tuple) -> TreeNode | None:
        """The widget node of an entry, building its collapsed parents if needed."""
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

    # ---- keys ----------------------------------------------------------------------------------

    def action_open(self) -> None:
        if self.entry is not None and self.entry.node is not None:
            # Not a message: a key typed right after Enter (`/` to search the pane) must find the
            # focus already moved, and a message would be handled after it.
            self.app.open_entry(self.entry)
        elif self.cursor_node is not None and self.cursor_node.allow_expand:
            self.cursor_node.toggle()

    def action_expand_node(self) -> None:
        node = self.cursor_node
        if node is not None and node.allow_expand:
            self._materialize(node)
            node.expand()

    def action_collapse_or_parent(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded and node.children:
            node.collapse()
        elif node.parent is not None and node.parent is not self.root:
            self.move_cursor(node.parent)
