"""The keys of the explorer's trees (the frame tree, the compare view's problems): h/l that
collapse or go up and expand, and Enter that opens what the cursor is on. Their bindings are
keys.TREE_BINDINGS and keys.COMPARE_TREE_BINDINGS (each tree sets its own BINDINGS)."""

from __future__ import annotations

from typing import TypeVar

from textual.widgets import Tree
from textual.widgets.tree import TreeNode

TreeData = TypeVar("TreeData")


class KeyedTree(Tree[TreeData]):
    """A Textual Tree with the explorer's tree keys; a tree says what Enter opens (`open_node`)
    and builds a branch's children when it is expanded (`before_expand`)."""

    def open_node(self, node: TreeNode[TreeData]) -> bool:
        """Enter on `node`: True when it opened something (else a branch folds or unfolds)."""
        return False

    def before_expand(self, node: TreeNode[TreeData]) -> None:
        """`node` is about to be expanded by a key (its children may be built only now)."""

    def action_open(self) -> None:
        node = self.cursor_node
        if node is None or self.open_node(node):
            return
        if node.allow_expand:
            self.before_expand(node)
            node.toggle()

    def action_expand_node(self) -> None:
        node = self.cursor_node
        if node is not None and node.allow_expand:
            self.before_expand(node)
            node.expand()

    def action_collapse_or_parent(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded and node.children:
            node.collapse()
        elif node.parent is not None and node.parent is not self.root:
            self.move_cursor(node.parent)
