"""Graph breaks under the selected entry: reason, explanation, hints, where, de-duplicated."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.containers import Vertical

from tlview.domain.verdict import Kind
from tlview.report.rich_text import source_block
from tlview.textsafe import visible
from tlview.ui.pane import Pane, Selection, plain_text
from tlview.ui.rendered_view import RenderedHere
from tlview.views.tree import TreeEntry


def breaks_view(entry: TreeEntry, selection: Selection | None = None) -> Group:
    """The verdict's graph breaks: of the compiles below a frame or rank, of a compile, or of one
    attempt; those implied by a restart (not logged) are said so."""
    entries = entry.compiles_below() if entry.node is None else [entry]
    # (the None test is for mypy: the index makes a Compile for each node)
    compiles = [e.compile for e in entries if e.compile is not None]
    problems = [p for c in compiles for p in c.verdict.problems
                if entry.kind != "attempt" or p.node is entry.node]
    groups: dict[tuple, list] = {}
    implied = []
    for problem in problems:
        if problem.kind is Kind.GRAPH_BREAK and problem.logged:
            gb = problem.evidence
            groups.setdefault((gb.location, gb.reason, gb.detail), []).append((problem, gb))
        elif problem.kind is Kind.GRAPH_BREAK:
            implied.append(problem)
    restarts = [p for p in problems if p.kind is Kind.RESTART]
    parts = []
    if not groups and not implied:
        parts.append(Text("No graph breaks here.", style="dim"))
    for problem in implied:
        title = Text("a graph break, not logged ", style="bold yellow")
        title.append(f"[{problem.compile_id}]", style="dim")
        parts += [title, Text("  " + visible(problem.why)), Text("")]
    for (location, reason, detail), items in groups.items():
        problem, gb = items[0]
        title = Text(f"×{len(items)} ", style="bold yellow")
        title.append(visible(location or "?"), style="bold")
        title.append("   " + ", ".join(f"[{p.compile_id}]" for p, _ in items), style="dim")
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
        excerpt = selection.excerpt(problem.source_place) if selection is not None else None
        if excerpt is not None:
            parts.append(source_block(excerpt.as_dict()))
        parts.append(Text(""))
    if restarts:
        parts.append(Text(Kind.RESTART.count(len(restarts)) + ": " + ", ".join(
            f"[{p.compile_id}] {p.cause}" for p in restarts), style="bold"))
    return Group(*parts)


class BreaksPane(Vertical, Pane):

    def compose(self):
        yield RenderedHere(id="breaks-body")

    def show(self, selection: Selection) -> None:
        body = self.query_one("#breaks-body", RenderedHere)
        body.update(breaks_view(selection.entry, selection) if selection.entry is not None else Text(""))

    def copy_text(self) -> str:
        return plain_text(self.query_one("#breaks-body", RenderedHere).content)
