"""The keys of the explorer's trees (the frame tree, the compare view's problems): TREE_BINDINGS,
with h/l that collapse or go up and expand, and Enter that opens what the cursor is on."""

from __future__ import annotations


class TreeKeys:
    """Mixed into a Textual Tree, which sets `BINDINGS = TREE_BINDINGS` itself (Textual reads
    the BINDINGS of widget classes only, not of a mixin)."""

    def open_node(self, node) -> bool:
        """Enter on `node`: True when it opened something (else a branch folds or unfolds)."""
        return False

    def before_expand(self, node) -> None:
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
