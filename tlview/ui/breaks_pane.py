"""Graph breaks under the selected entry: reason, explanation, hints, where, de-duplicated."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from tlview.model.tree import TreeEntry
from tlview.textsafe import visible
from tlview.ui.pane import Pane, Selection, plain_text


def breaks_view(entry: TreeEntry) -> Group:
    nodes = [n for c in entry.compiles_below() for n in c.compile.attempts] if entry.node is None else \
        [entry.node]
    groups: dict[tuple, list] = {}
    for node in nodes:
        for gb in node.breaks:
            groups.setdefault((gb.location, gb.reason, gb.detail), []).append((node, gb))
    restarts = [r for c in entry.compiles_below() for r in c.compile.restart_reasons] if entry.node is None else []
    parts = []
    if not groups:
        parts.append(Text("No graph breaks here.", style="dim"))
    for (location, reason, detail), items in groups.items():
        node, gb = items[0]
        title = Text(f"×{len(items)} ", style="bold yellow")
        title.append(visible(location or "?"), style="bold")
        title.append("   " + ", ".join(f"[{n.id}]" for n, _ in items), style="dim")
        parts.append(title)
        parts.append(Text("  " + visible(reason + (f" {detail}" if detail else ""))))
        if gb.explanation:
            parts.append(Text("  why: " + visible(gb.explanation), style="italic"))
        for hint in gb.hints:
            parts.append(Text("  hint: " + visible(hint), style="cyan"))
        if gb.url:
            parts.append(Text("  " + visible(gb.url), style="dim underline"))
        if gb.user_stack:
            parts.append(Text("\n".join("    " + visible(s) for s in gb.user_stack[-6:]), style="dim"))
        parts.append(Text(""))
    if restarts and not groups:
        parts.append(Text(f"{len(restarts)} restart(s)", style="bold"))
    return Group(*parts)


class BreaksPane(Pane, VerticalScroll):
    def compose(self):
        yield Static(id="breaks-body")

    def show(self, selection: Selection) -> None:
        body = self.query_one("#breaks-body", Static)
        body.update(breaks_view(selection.entry) if selection.entry is not None else Text(""))

    def copy_text(self) -> str:
        return plain_text(self.query_one("#breaks-body", Static).content)
