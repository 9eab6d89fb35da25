"""Why the compiled code is not as fast as it could be: the selected compile id's perf problems
(the verdict's, costs-time first) with why, the user's line and the fix, its CUDA-graph
partitions and where its compile time went; on a frame, a rank or a compile id with none, the
run's perf problems, costliest first, one line each (Enter goes to the compile id)."""

from __future__ import annotations

from rich.console import Group
from rich.style import Style
from rich.text import Text
from textual.containers import Vertical

from tlview.diagnose.classify import fix_for
from tlview.domain.compile_node import Compile, CompileNode
from tlview.domain.perf import DISABLED_REASON, INFORMATIONAL, PerfEvidence, compile_breakdown, compile_time_said
from tlview.domain.verdict import CompileProblem, Kind
from tlview.report.perf_look import cost_order
from tlview.report.rich_text import CAUSE_STYLE, counted, ref, source_block
from tlview.report.stack_trie_look import OPENS
from tlview.textsafe import one_line, visible
from tlview.ui.messages import JumpToCompile
from tlview.ui.pane import Pane, Selection, plain_text
from tlview.ui.rendered_view import RenderedHere, RenderedView

STYLE = CAUSE_STYLE[Kind.PERF.key]
RUN_LIST_WHY = 110  # characters of a problem's why on its line of the run's list


def costs_time_first(problems: list[CompileProblem]) -> list[CompileProblem]:
    return sorted(problems, key=lambda p: cost_order(p.severity, 1))


def perf_view(selection: Selection) -> Group:
    """The selected compile id's perf problems, else (none selected, or none of its own) the run's."""
    if selection.index is None:  # no run (the compare view with a filter that keeps nothing)
        return Group(Text("no run selected", style="dim"))
    entry = selection.entry
    parts: list = []
    if entry is not None and entry.kind in ("compile", "attempt") and entry.compile is not None:
        problems = [p for p in entry.compile.verdict.of(Kind.PERF) if entry.kind == "compile" or p.node is entry.node]
        nodes = entry.compile.attempts if entry.kind == "compile" else [entry.node]
        if problems:
            parts += compile_part(entry.title, costs_time_first(problems), selection)
        else:
            parts += [Text(f"No perf problems in {entry.title}.", style="dim"), Text("")]
        parts += partitions_part([n for n in nodes if n is not None])
        parts += compile_time_part(entry.compile)
        if problems:
            return Group(*parts)
    parts += run_part(selection)
    return Group(*parts)


def compile_part(title: str, problems: list[CompileProblem], selection: Selection) -> list:
    """Each problem as --report says it: `cause (severity): why`, the fix, the user's line."""
    costly = sum(1 for p in problems if p.severity != INFORMATIONAL)
    head = Text(f"{title} {Kind.PERF.count(len(problems))}", style="bold")
    head.append(f"   {costly} cost time" if costly != len(problems) else "", style="dim")
    parts: list = [head, Text("")]
    for problem in problems:
        line = Text(f"{problem.cause} ({problem.severity or ''}): ", style=STYLE)
        line.append(visible(problem.why))
        parts.append(line)
        if problem.message:
            parts.append(Text(f"  torch: {visible(one_line(problem.message, 200))}", style="dim"))
        parts.append(Text(f"  fix: {visible(fix_for(problem))}", style="cyan"))
        # the user's lines where the problem names its own (a long compile, a fallback kernel
        # has none: the compile's place would say nothing of it)
        excerpt = selection.excerpt(problem.source_place) if problem.place_told else None
        if excerpt is not None:
            parts.append(source_block(excerpt.as_dict(), indent="  "))
        elif problem.place_told and problem.location:
            parts.append(Text(f"  at {visible(problem.location)}", style="dim"))
        parts.append(Text(""))
    return parts


def partitions_part(nodes: list[CompileNode]) -> list:
    """What torch's `cudagraphs` lines told of each attempt: its partitions and the ops kept out
    of the CUDA graphs (and why), whole-graph skips, sizes recorded, re-recordings."""
    told = [(node, node.perf) for node in nodes if node.perf is not None and _tells(node.perf)]
    if not told:
        return []
    parts: list = [Text("CUDA graphs", style="bold")]
    for node, perf in told:
        if len(told) > 1:
            parts.append(Text(f" [{node.id}]", style="dim"))
        for partitions in perf.partitions:
            said = f"  {counted(partitions.total, 'partition')}: "
            if partitions.ops and all(op.reason == DISABLED_REASON for op in partitions.ops):
                # (every graph of a default-mode run says so: no problem)
                parts.append(Text(said + "CUDA graphs off (not mode=\"reduce-overhead\")", style="dim"))
                continue
            kept_out = partitions.total - partitions.cudagraphable
            parts.append(Text(said + f"{partitions.cudagraphable} cudagraphable, {kept_out} not",
                              style="bold" if kept_out else ""))
            for op in partitions.ops:
                line = Text(f"    {visible(op.name)} kept out: {visible(op.reason)}", style=STYLE)
                line.append(f"  {visible(op.fx or op.ir)}", style="dim")
                parts.append(line)
                if op.place:
                    parts.append(Text(f"      at {visible(op.place)}" + (f": {visible(op.code)}" if op.code else ""),
                                      style="dim"))
        for skip in perf.skips:
            parts.append(Text(f"  skipped whole: {visible(skip.reason)}", style=STYLE))
            if skip.place:
                parts.append(Text(f"      at {visible(skip.place)}" + (f": {visible(skip.code)}" if skip.code else ""),
                                  style="dim"))
        if perf.sizes:
            parts.append(Text(f"  a CUDA graph recorded for each of {perf.sizes} input sizes", style=STYLE))
        if perf.rerecords:
            parts.append(Text(f"  recorded again {perf.rerecords:,} times: {visible(perf.rerecord_reason or '?')}",
                              style=STYLE))
    parts.append(Text(""))
    return parts


def _tells(perf: PerfEvidence) -> bool:
    return bool(perf.partitions or perf.skips or perf.sizes or perf.rerecords)


def compile_time_part(compile_: Compile) -> list:
    """Where the compile's time went (its compilation metrics), as the compile-time problem says it."""
    time = compile_breakdown(compile_.final_metrics)
    if time is None:
        return []
    return [Text("compile time", style="bold"), Text(f"  {compile_time_said(time)}"), Text("")]


def run_part(selection: Selection) -> list:
    """The run's perf problems, those alike (cause and line) once, costliest first: one line each,
    naming the first compile id (Enter or a click goes there)."""
    compiles: dict[int, Compile] = {}
    for node in selection.index.iter_nodes(selection.rank):
        if node.compile is not None:
            compiles.setdefault(id(node.compile), node.compile)
    alike: dict[tuple, list[CompileProblem]] = {}
    for compile_ in compiles.values():
        for problem in compile_.verdict.of(Kind.PERF):
            alike.setdefault((problem.cause, problem.user_location, problem.why), []).append(problem)
    found = sorted(alike.values(), key=lambda same: cost_order(same[0].severity, len(same)))
    total = sum(len(same) for same in found)
    where = f"rank {selection.rank}" if isinstance(selection.rank, int) else "this run"
    if not found:
        return [Text(f"No perf problems in {where}.", style="dim")]
    parts: list = [Text(f"{Kind.PERF.count(total)} in {where}, costliest first (Enter: its compile id)",
                        style="bold")]
    for same in found:
        first = same[0]
        node = first.node
        line = Text(f"  {ref(node.id, node.rank)}" + (f" ×{len(same)}" if len(same) > 1 else ""),
                    style=Style(bold=True, meta={OPENS: node.compile.head.seq if node.compile else node.seq}))
        line.append(f" {first.cause} ({first.severity or ''}): ", style=STYLE)
        line.append(visible(one_line(first.why, RUN_LIST_WHY)))
        parts.append(line)
    return parts


class PerfPane(Vertical, Pane):
    _selection: Selection | None = None

    def compose(self):
        yield RenderedHere(id="perf-body")

    def show(self, selection: Selection) -> None:
        self._selection = selection
        self.query_one("#perf-body", RenderedHere).update(perf_view(selection))

    def on_rendered_view_opened(self, message: RenderedView.Opened) -> None:
        """A compile id of the run's list: selected in the tree (by its node's seq)."""
        message.stop()
        seq = message.meta.get(OPENS)
        selection = self._selection
        node = next((n for n in selection.index.iter_nodes() if n.seq == seq), None) \
            if selection is not None and seq is not None else None
        if node is not None:
            self.post_message(JumpToCompile(node))

    def copy_text(self) -> str:
        return plain_text(self.query_one("#perf-body", RenderedHere).content)
