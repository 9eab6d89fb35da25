"""The whole run: problems ranked by cost, where compile time goes, and where ranks diverge."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual import work
from textual.containers import VerticalScroll
from textual.widgets import Static

from tlview.diagnose.costs import run_summary, timeline
from tlview.diagnose.ranks import describe, divergence
from tlview.model.index import Index
from tlview.model.look import phase_legend, ref, seconds, short_path, timeline_bar, whose
from tlview.textsafe import one_line, visible
from tlview.ui.pane import Pane, Selection, plain_text


def run_view(index: Index, rank) -> Group:
    summary = run_summary(index, rank)
    rows = timeline(index, rank)
    grouped = len(index.groups()) > 1  # then every line that names a compile id names its rank
    parts = [Text(f"Total compile time {seconds(summary['total_compile_seconds'])}"
                  + (f" (rank {rank})" if rank is not ... else ""), style="bold")]
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
    if rows:
        parts.append(phase_legend("\nCompile time by compile id  "))
        longest = rows[0]["total"] or 1.0
        parts += [timeline_bar(row, longest, grouped) for row in rows[:40]]
    div = divergence(index)
    lines = describe(div)
    if len(div["ranks"]) > 1:
        parts.append(Text(f"\nRanks {','.join(map(str, div['ranks']))}", style="bold"))
        if lines:
            parts += [Text(f"  ⚠ {line}", style="red") for line in lines[:40]]
        else:
            parts.append(Text("  the ranks agree: same compile ids, recompiles, cache hits and "
                              "collective schedules", style="green"))
    return Group(*parts)


class RunPane(Pane, VerticalScroll):
    def compose(self):
        yield Static(id="run-body")

    def show(self, selection: Selection) -> None:
        self.load(selection.index, selection.rank)

    @work(thread=True, exclusive=True, group="run-load")
    def load(self, index: Index, rank) -> None:
        view = run_view(index, rank)
        self.app.call_from_thread(self.query_one("#run-body", Static).update, view)

    def copy_text(self) -> str:
        return plain_text(self.query_one("#run-body", Static).content)
