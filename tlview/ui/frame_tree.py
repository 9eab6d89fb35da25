"""The frame tree widget: renders tlview.model.tree's TreeModel with Textual's Tree.

Big trees stay fast: past EXPAND_LIMIT frames the frames start collapsed and their compile ids are
added to the widget only when a frame is expanded.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tlview.model.tree import TreeEntry, TreeModel
from tlview.textsafe import visible

EXPAND_LIMIT = 300
STATUS_STYLE = {"ok": "green", "break": "yellow", "error": "bold red", "empty": "dim",
                "missing": "magenta", "compiling": "cyan"}


def entry_label(entry: TreeEntry) -> Text:
    style = STATUS_STYLE.get(entry.status or "", "")
    if entry.kind in ("frame", "rank"):
        label = Text(visible(entry.label), style="bold")
        label.append(f"  {entry.compile_ids} id{'s' if entry.compile_ids != 1 else ''}", style="dim")
        return label
    head, _, badges = entry.label.partition("  ")
    label = Text(head, style=style)
    if badges:
        label.append("  " + badges, style="dim" if entry.kind == "attempt" else "")
    return label


class FrameTree(Tree[TreeEntry]):
    """Ranks > frames > compile ids > attempts."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("h", "collapse_or_parent", "Collapse", show=False),
        Binding("l", "expand_node", "Expand", show=False),
        Binding("left", "collapse_or_parent", "Collapse", show=False),
        Binding("right", "expand_node", "Expand", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
        Binding("home", "scroll_home", "Top", show=False),
        Binding("end", "scroll_end", "Bottom", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("compile ids", id=id)
        self.show_root = False
        self.guide_depth = 3
        self.auto_expand = False
        self._by_key: dict[tuple, TreeNode[TreeEntry]] = {}
        self._pending: dict[int, list[TreeEntry]] = {}  # node id -> children not yet added
        self.model: TreeModel | None = None

    def get_label_width(self, node: TreeNode[TreeEntry]) -> int:
        # Tree's default renders every label to measure it, on every expand: O(lines) renders.
        icon = len(self.ICON_NODE) if node.allow_expand else 0
        return node.label.cell_len + icon

    def process_label(self, label) -> Text:
        # Labels are always Text built by entry_label: never parse them as markup.
        return label if isinstance(label, Text) else Text(str(label))

    # ---- building ------------------------------------------------------------------------

    def show_model(self, model: TreeModel, rebuild: bool = False) -> None:
        """Show `model`; keep the cursor and expansion when only new entries arrived."""
        self.model = model
        if rebuild or not self._by_key:
            cursor_key = self.cursor_node.data.key if self.cursor_node and self.cursor_node.data else None
            self.clear()
            self._by_key.clear()
            self._pending.clear()
            expand = sum(1 for _ in self._frames(model)) <= EXPAND_LIMIT
            for entry in model.roots:
                self._add(self.root, entry, expand)
            if cursor_key is not None:
                self.select_key(cursor_key, move_only=True)
            return
        expand = len(self._by_key) <= EXPAND_LIMIT * 4
        for entry in model.roots:
            self._update(self.root, entry, expand)

    def _frames(self, model: TreeModel):
        for entry in model.walk():
            if entry.kind == "frame":
                yield entry

    def _add(self, parent: TreeNode, entry: TreeEntry, expand: bool) -> TreeNode:
        has_children = bool(entry.children)
        node = parent.add(entry_label(entry), data=entry, allow_expand=has_children,
                          expand=has_children and (expand or entry.kind == "rank"))
        self._by_key[entry.key] = node
        if has_children:
            if node.is_expanded or entry.kind == "rank":
                for child in entry.children:
                    self._add(node, child, expand)
            else:
                self._pending[node.id] = entry.children
        return node

    def _update(self, parent: TreeNode, entry: TreeEntry, expand: bool) -> None:
        node = self._by_key.get(entry.key)
        if node is None:
            self._add(parent, entry, expand)
            return
        node.data = entry
        node.set_label(entry_label(entry))
        if entry.children and not node.allow_expand:
            node.allow_expand = True
        if node.id in self._pending:
            self._pending[node.id] = entry.children
            return
        for child in entry.children:
            self._update(node, child, expand)

    def _materialize(self, node: TreeNode) -> None:
        children = self._pending.pop(node.id, None)
        if children:
            for child in children:
                self._add(node, child, expand=False)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        self._materialize(event.node)

    # ---- finding -------------------------------------------------------------------------

    def node_for_key(self, key: tuple) -> TreeNode | None:
        node = self._by_key.get(key)
        if node is not None:
            return node
        # not materialized yet: expand its frame
        if self.model is None:
            return None
        for frame in self._frames(self.model):
            if any(c.key == key or any(a.key == key for a in c.children) for c in frame.children):
                frame_node = self._by_key.get(frame.key)
                if frame_node is not None:
                    self._materialize(frame_node)
                    frame_node.expand()
                break
        return self._by_key.get(key)

    def select_key(self, key: tuple, move_only: bool = False) -> bool:
        """Put the cursor on the entry with `key` (expanding its parents); False if not shown."""
        node = self.node_for_key(key)
        if node is None:
            return False
        parent = node.parent
        while parent is not None and parent is not self.root:
            if not parent.is_expanded:
                self._materialize(parent)
                parent.expand()
            parent = parent.parent
        # After the refresh the lines are laid out; look the key up again then (a rebuild in
        # between would leave this node stale).
        self.call_after_refresh(self._move_to_key, key, not move_only)
        return True

    def _move_to_key(self, key: tuple, scroll: bool) -> None:
        node = self._by_key.get(key)
        if node is not None and node.tree is self:
            self.move_cursor(node)
            if scroll:
                self.scroll_to_node(node)

    # ---- keys ------------------------------------------------------------------------------

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
