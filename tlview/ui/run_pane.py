"""The whole run: when each rank compiled (a chronological timeline), problems ranked by cost,
the call stacks that led to every compile (the stack trie), caches, the longest compiles, and
where ranks diverge."""

from __future__ import annotations

import time

from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.containers import Vertical

from tlview.diagnose.caches import cache_summary, outcome_words
from tlview.diagnose.costs import run_summary, timeline
from tlview.diagnose.hang import hang_lines, job_verdict
from tlview.diagnose.ranks import divergence, other_lines
from tlview.diagnose.stack_trie import stack_trie
from tlview.diagnose.timeline import compile_timeline
from tlview.index.index import Index
from tlview.report.rich_text import phase_legend, ranks_text, ref, seconds, short_path, timeline_bar, whose
from tlview.report.stack_trie_look import OPENS, trie_tree
from tlview.report.timeline_look import timeline_lines, total_said
from tlview.textsafe import one_line, visible
from tlview.ui.keys_first import step_back
from tlview.ui.messages import JumpToCompile
from tlview.ui.pane import Pane, Selection, plain_text
from tlview.ui.rendered_view import RenderedView, render_strips

LOAD_GAP = 2  # after a load of the Run pane, this many times as long before the next one


class PaneLeft(Exception):
    """The Run pane was left while its view was built: the rest is not built."""


def run_view(index: Index, rank, width: int = 120, go_on=lambda: None) -> Group:
    """The whole run's view. Calls `go_on()` between its parts (each O(compiles)): the loading
    thread's say in it (it raises PaneLeft once the pane was left, and steps back for keys)."""

    div = divergence(index)
    go_on()
    rows = timeline(index, rank, go_on)
    summary = run_summary(index, rank, rows, between=go_on)
    go_on()
    grouped = index.grouped  # then every line that names a compile id names its rank
    parts: list[RenderableType] = []
    if verdict := job_verdict(div):  # what happened to the job, in one line, first
        parts.append(Text(visible(verdict.said), style="bold red"))
    if hang := hang_lines(div):  # then why
        parts.append(Text("Why the job may hang", style="bold red"))
        parts += [Text(f"  ⚠ {visible(line)}", style="red") for line in hang[:40]]
        parts.append(Text(""))
    parts += [Text(total_said(summary, capital=True)
                  + (f" (rank {rank})" if rank is not ... else ""), style="bold")]
    parts += timeline_lines(compile_timeline(index, rank, go_on), width)
    go_on()
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
                          style="bold red"))
        parts.append(Text(f"        fix: {one_line(failure['fix'], 160)}", style="dim"))
    trie = stack_trie(index, rank, go_on)
    go_on()
    parts.append(Text(""))
    if trie.children:
        # (parts: a stop between)
        parts += trie_tree(trie, grouped, "Stack trie: the calls that led to each compile").renderables
    else:
        parts.append(Text("Stack trie: no call stacks in these logs" + (
            "" if index.has_traces else " (TORCH_LOGS text has none; a TORCH_TRACE does)"), style="dim"))
    caches = cache_summary(index, rank, go_on)
    if caches["caches"]:
        parts.append(Text("\nCaches", style="bold"))
        parts += [Text(f"  {c['label']}: {outcome_words(c)}") for c in caches["caches"].values()]
        parts += [Text(f"  bypassed ×{b['count']}: {one_line(b['reason'], 140)}", style="dim")
                  for b in caches["bypass_reasons"][:5]]
    if rows:
        parts.append(phase_legend("\nCompile time by compile id (longest first)  "))
        longest = rows[0]["total"] or 1.0
        parts += [timeline_bar(row, longest, grouped) for row in rows[:40]]
    go_on()
    lines = other_lines(div)
    if len(div["ranks"]) > 1:
        parts.append(Text(f"\n{ranks_text(div['ranks']).capitalize()}", style="bold"))
        if lines:
            parts += [Text(f"  ⚠ {visible(line)}", style="red") for line in lines[:40]]
        elif hang:
            parts.append(Text("  see 'Why the job may hang' at the top", style="red"))
        else:
            parts.append(Text("  the ranks agree: same compile ids, recompiles, cache hits, collective "
                              "schedules, tensor metadata and graph execution order", style="green"))
    return Group(*parts)


class RunPane(Vertical, Pane):
    """The whole run. Its view is O(compiles): 1.6-2.8 s at 20,000 ranks. Built and rendered to
    lines in one thread at a time, and while the index grows at most a third of the time: a
    thread cannot be stopped, and a load started at every update while 20,000 ranks came in ran
    three or four at once for 15 s, and every key pressed meanwhile waited 150-600 ms for the
    main thread's turn. Between its parts the thread steps back while a key comes first."""

    def compose(self):
        yield RenderedView(id="run-body")

    _shown: tuple | None = None
    _selection: Selection | None = None
    _loading = False
    _wanted: tuple | None = None  # the newest load asked for while one ran
    _next_load_at = 0.0  # time.monotonic(): not before (LOAD_GAP times the last load)
    _on_screen = False  # (set here, read by the loading thread)

    def on_show(self) -> None:
        self._on_screen = True
        if self._selection is not None and self._shown is None:  # left before its view was built
            self.show(self._selection)
        self._start_wanted()

    def on_hide(self) -> None:
        self._on_screen = False

    def leave(self) -> None:
        self._on_screen = False  # (its thread stops at its next step; on_show starts it again)

    def show(self, selection: Selection) -> None:
        # The run is the same whatever compile id the cursor is on: built again only when the
        # rank, the pane's width or what was read changed.
        self._selection = selection
        index = selection.index
        width = self._width()
        if index is None:  # no run (the compare view with a filter that keeps nothing)
            self._shown = self._wanted = None
            note = Group(Text("no run selected", style="dim"))
            self.query_one("#run-body", RenderedView).show(note, render_strips(note, self.app.console, width))
            return
        shown = (id(index), selection.rank, width, index.bytes_read, len(index.nodes), len(index.problems))
        if shown != self._shown:
            self._shown = shown
            self._wanted = (index, selection.rank, width, shown)
            self._start_wanted()

    def _start_wanted(self) -> None:
        if self._loading or self._wanted is None or not self._on_screen:
            return  # (on_show starts what waits)
        wait = self._next_load_at - time.monotonic()
        if wait > 0:
            self.set_timer(wait, self._start_wanted)
            return
        args, self._wanted = self._wanted, None
        self._loading = True
        self.loading_started(self.load(*args))

    def loading_view(self) -> RenderedView:
        return self.query_one("#run-body", RenderedView)

    def _width(self) -> int:
        """The view's own columns, less a scrollbar's (the pane's less 2 left one column more
        than the view had: each wrapped line lost its last character)."""
        body = self.query_one("#run-body", RenderedView)
        return max(40, body.size.width - body.styles.scrollbar_size_vertical) if body.size.width else 120

    def on_resize(self) -> None:
        if self._selection is not None and self._shown is not None and self._width() != self._shown[2]:
            self.show(self._selection)

    @work(thread=True, group="run-load", exit_on_error=False)  # a failure is shown (app._worker_changed)
    def load(self, index: Index, rank, width: int = 120, shown: tuple | None = None) -> None:
        started = time.monotonic()
        view = strips = None
        left = False

        def go_on() -> None:
            if not self._on_screen:
                raise PaneLeft
            step_back(self.app)

        try:
            view = run_view(index, rank, width, go_on)
            strips = render_strips(view, self.app.console, width, between=go_on)
        except PaneLeft:
            left = True
        finally:  # a failure is shown by the app (a failed worker); the next load may still start
            self.app.call_from_thread(self._put, view, strips, shown, time.monotonic() - started, left)

    def _put(self, view, strips, shown: tuple | None, took: float, left: bool = False) -> None:
        self._loading = False
        self._next_load_at = time.monotonic() + LOAD_GAP * took
        if (left or view is None) and shown == self._shown:
            self._shown = None  # built when the pane is shown again (left, or it failed: tried then)
            if left and self._on_screen and self._selection is not None:
                self.show(self._selection)
                return
        # a load asked for a run that has grown since is not shown: the newer one follows
        if view is not None and strips is not None and shown == self._shown:
            self.query_one("#run-body", RenderedView).show(view, strips)
        self._start_wanted()

    def on_rendered_view_opened(self, message: RenderedView.Opened) -> None:
        """A compile id of the stack trie: selected in the tree (by its node's seq)."""
        message.stop()
        seq = message.meta.get(OPENS)
        node = next((n for n in self._selection.index.iter_nodes() if n.seq == seq), None) \
            if self._selection is not None and seq is not None else None
        if node is not None:
            self.post_message(JumpToCompile(node))

    def copy_text(self) -> str:
        return plain_text(self.query_one("#run-body", RenderedView).content)
