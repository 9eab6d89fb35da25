"""Dynamic shapes of the selected compile id, grouped by kind (the model's order): symbols created
and specializations first, then guards added, open; the rest folded to one line with its count."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tlview.textsafe import visible
from tlview.ui.pane import Pane, Selection
from tlview.views.dynamic import DynamicGroup, group_dynamic

EXPAND_HINT = " · Enter to expand"


class DynamicPane(Tree, Pane):
    DEFAULT_CSS = "DynamicPane { background: $surface; }"

    def __init__(self, **kwargs) -> None:
        super().__init__("dynamic shapes", **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self._selection: Selection | None = None

    def show(self, selection: Selection) -> None:
        self.clear()
        self._selection = selection
        if selection.entry is None or selection.entry.node is None:
            return
        self.loading_started(self.load(selection))

    # a failure is shown (app._worker_changed)
    @work(thread=True, exclusive=True, group="dynamic-load", exit_on_error=False)
    def load(self, selection: Selection) -> None:
        # summaries read each event's fields from disk: thousands of them, here and not on the UI thread
        entry = selection.entry
        assert entry is not None and entry.node is not None  # show() loads only an entry with a node
        groups = group_dynamic(entry.node.dynamic)
        lines = [[Text(visible(event.summary)) for event in group.events] for group in groups]
        self.app.call_from_thread(self._fill, selection, groups, lines)

    def _fill(self, selection: Selection, groups: list[DynamicGroup], lines: list[list[Text]]) -> None:
        if selection is not self._selection:
            return  # another compile id was selected meanwhile
        if not groups:
            self.root.add_leaf(Text("no dynamic-shape events for this compile id", style="dim"))
        for group, texts in zip(groups, lines):
            node = self.root.add(self._header(group.label, len(texts), folded=group.folded),
                                 data=(group.label, texts), expand=not group.folded)
            if not group.folded:
                self._add_lines(node, texts)
        self.cursor_line = 0

    @staticmethod
    def _header(label: str, count: int, folded: bool) -> Text:
        header = Text(label, style="bold")
        header.append(f"  {count:,}", style="cyan")
        if folded:
            header.append(EXPAND_HINT, style="dim")
        return header

    @staticmethod
    def _add_lines(node: TreeNode, texts: list[Text]) -> None:
        """A group's events under its header (a folded one's when it is first opened)."""
        for text in texts:
            node.add_leaf(text)

    # (not `_opened`/`_closed`: Textual's MessagePump keeps its own `_closed` flag)
    @on(Tree.NodeExpanded)
    def _group_opened(self, event: Tree.NodeExpanded) -> None:
        event.stop()
        node = event.node
        if isinstance(node.data, tuple):
            if not node.children:
                self._add_lines(node, node.data[1])
            node.set_label(self._header(node.data[0], len(node.data[1]), folded=False))

    @on(Tree.NodeCollapsed)
    def _group_closed(self, event: Tree.NodeCollapsed) -> None:
        event.stop()
        node = event.node
        if isinstance(node.data, tuple):
            node.set_label(self._header(node.data[0], len(node.data[1]), folded=True))

    def copy_text(self) -> str:
        """What the pane shows: each group's header, and the events of the open ones."""
        out = []
        for node in self.root.children:
            out.append(_plain(node.label))
            if node.is_expanded:
                out += [f"  {_plain(child.label)}" for child in node.children]
        return "\n".join(out)


def _plain(label: str | Text) -> str:
    """A tree label's text (Textual keeps each label as Text, though it declares str too)."""
    return label.plain if isinstance(label, Text) else label
