"""The whole run: when each rank compiled (a chronological timeline), problems ranked by cost,
the call stacks that led to every compile (the stack trie), caches, the longest compiles, and
where ranks diverge."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual import work
from textual.containers import VerticalScroll
from textual.widgets import Static

from tlview.diagnose.caches import cache_summary, outcome_words
from tlview.diagnose.costs import run_summary, timeline
from tlview.diagnose.ranks import describe, divergence
from tlview.diagnose.stack_trie import stack_trie
from tlview.diagnose.timeline import compile_timeline
from tlview.model.index import Index
from tlview.model.look import phase_legend, ranks_text, ref, seconds, short_path, timeline_bar, whose
from tlview.report.stack_trie_look import trie_tree
from tlview.report.timeline_look import timeline_lines
from tlview.textsafe import one_line, visible
from tlview.ui.pane import Pane, Selection, plain_text


def run_view(index: Index, rank, width: int = 120) -> Group:
    summary = run_summary(index, rank)
    rows = timeline(index, rank)
    grouped = index.grouped  # then every line that names a compile id names its rank
    parts = [Text(f"Total compile time {seconds(summary['total_compile_seconds'])}"
                  + (f" (rank {rank})" if rank is not ... else ""), style="bold")]
    parts += timeline_lines(compile_timeline(index, rank), width)
    if summary["recompiling_frames"]:
        parts.append(Text("\nFrames whose recompiles cost most (recompiles / all compiles of the frame)",
                          style="bold cyan"))
        for f in summary["recompiling_frames"][:15]:
            causes = ", ".join(f"{c} ×{n}" for c, n in f["causes"].items())
            line = Text(f"  {f['recompiles']:>3} ")
            if grouped:
                line.append(f"{whose(f['rank'], f['process'])} ", style="dim")
            line.append(visible(f["function"] or "?"), style="bold")
            line.append(f" {visible(short_path(f['location'] or '?'))}  {seconds(f['recompile_seconds'])} / "
                        f"{seconds(f['seconds'])}  {causes}", style="dim")
            parts.append(line)
    if summary["graph_breaks"]:
        parts.append(Text("\nGraph breaks by how often they happen", style="bold yellow"))
        for b in summary["graph_breaks"][:15]:
            line = Text(f"  ×{b['count']:<3}")
            if grouped:
                line.append(f"[{', '.join(b['compile_ids'])}] {whose(b['rank'], b['process'])} ", style="dim")
            line.append(f"{b['cause']}: ", style="yellow")
            line.append(one_line(b["why"], 110))
            parts.append(line)
            parts.append(Text(f"        fix: {one_line(b['fix'], 140)}", style="dim"))
    for failure in summary["failures"]:
        name = ref(failure["id"], failure["rank"], failure["process"]) if grouped else ref(failure["id"])
        parts.append(Text(f"\n{name} {failure['cause']}: {one_line(failure['why'], 120)}",
                          style="red"))
        parts.append(Text(f"        fix: {one_line(failure['fix'], 160)}", style="dim"))
    trie = stack_trie(index, rank)
    parts.append(Text(""))
    if trie.children:
        parts.append(trie_tree(trie, grouped, "Stack trie: the calls that led to each compile"))
    else:
        parts.append(Text("Stack trie: no call stacks in these logs" + (
            "" if index.has_traces else " (TORCH_LOGS text has none; a TORCH_TRACE does)"), style="dim"))
    caches = cache_summary(index, rank)
    if caches["caches"]:
        parts.append(Text("\nCaches", style="bold"))
        parts += [Text(f"  {c['label']}: {outcome_words(c)}") for c in caches["caches"].values()]
        parts += [Text(f"  bypassed ×{b['count']}: {one_line(b['reason'], 140)}", style="dim")
                  for b in caches["bypass_reasons"][:5]]
    if rows:
        parts.append(phase_legend("\nCompile time by compile id (longest first)  "))
        longest = rows[0]["total"] or 1.0
        parts += [timeline_bar(row, longest, grouped) for row in rows[:40]]
    div = divergence(index)
    lines = describe(div)
    if len(div["ranks"]) > 1:
        parts.append(Text(f"\n{ranks_text(div['ranks']).capitalize()}", style="bold"))
        if lines:
            parts += [Text(f"  ⚠ {line}", style="red") for line in lines[:40]]
        else:
            parts.append(Text("  the ranks agree: same compile ids, recompiles, cache hits and "
                              "collective schedules", style="green"))
    return Group(*parts)


class RunPane(Pane, VerticalScroll):
    def compose(self):
        yield Static(id="run-body")

    _shown: tuple | None = None
    _selection: Selection | None = None

    def show(self, selection: Selection) -> None:
        # The run is the same whatever compile id the cursor is on: built again only when the
        # rank, the pane's width or what was read changed.
        self._selection = selection
        index = selection.index
        width = self._width()
        shown = (id(index), selection.rank, width, index.bytes_read, len(index.nodes), len(index.problems))
        if shown != self._shown:
            self._shown = shown
            self.load(index, selection.rank, width, shown)

    def _width(self) -> int:
        return max(40, self.size.width - 2) if self.size.width else 120

    def on_resize(self) -> None:
        if self._selection is not None and self._shown is not None and self._width() != self._shown[2]:
            self.show(self._selection)

    @work(thread=True, exclusive=True, group="run-load")
    def load(self, index: Index, rank, width: int = 120, shown: tuple | None = None) -> None:
        view = run_view(index, rank, width)
        self.app.call_from_thread(self._put, view, shown)

    def _put(self, view, shown: tuple | None) -> None:
        # a load started before the last one (another width, rank or run) may end after it
        if shown == self._shown:
            self.query_one("#run-body", Static).update(view)

    def copy_text(self) -> str:
        return plain_text(self.query_one("#run-body", Static).content)
