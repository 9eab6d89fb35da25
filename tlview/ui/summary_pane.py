"""Summary of the selected compile id, frame or rank: status, where, why, times, counts, failures."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.containers import Vertical

from tlview.diagnose.classify import diagnose_node
from tlview.domain.artifacts import Artifact
from tlview.domain.role import Role
from tlview.domain.status import Status
from tlview.domain.verdict import Kind, place_of
from tlview.index.registry import cache_outcome
from tlview.report.rich_text import CAUSE_STYLE, source_block, status_text
from tlview.source.user_source import SourceFiles
from tlview.textsafe import visible
from tlview.ui.pane import Pane, Selection, plain_text
from tlview.ui.rendered_view import RenderedHere
from tlview.views.tree import TreeEntry

TIMES = [("entire_frame_compile_time_s", "whole frame"), ("backend_compile_time_s", "backend (AOT+Inductor)"),
         ("inductor_compile_time_s", "inductor"), ("code_gen_time_s", "codegen"),
         ("dynamo_time_before_restart_s", "dynamo before restart")]
COUNTS = [("guard_count", "guards"), ("shape_env_guard_count", "shape guards"),
          ("graph_op_count", "graph ops"), ("graph_node_count", "graph nodes"),
          ("cache_size", "cache entries before")]
# (not num_graph_breaks: a running total of the process, not this compile's: its own breaks are
# the verdict's)


def _kv_table() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    return table


def compile_summary(entry: TreeEntry, grouped: bool = False, sources: SourceFiles | None = None) -> Group:
    """Reads the user stack from disk, and the user's lines at each problem (`sources`).
    `grouped`: the run has several ranks or processes."""
    node = entry.node
    compile_ = entry.compile
    assert node is not None and compile_ is not None  # a compile entry has both (views/tree.py makes it so)
    status = entry.status or compile_.status  # "compiling" while following
    parts: list[RenderableType] = []
    title = Text(f"{status.symbol} [{node.id}] {status.word}", style=status.style)
    if node.rank is not None or grouped:
        title.append(f"   {node.group.label()}", style="dim")
    parts.append(title)
    verdict = compile_.verdict
    function, location = place_of(compile_)
    where = _kv_table()
    if verdict.export and not (node.function() or function):  # no frame: say what made it
        where.add_row("made by", Text("torch.export (no Dynamo frame, so no function or location)"))
    else:
        where.add_row("function", Text(visible(node.function() or function or "?")))
        where.add_row("location", Text(visible(node.location() or location or "?")))
    where.add_row("attempts", Text(", ".join(f"[{n.id}]" for n in compile_.attempts)))
    if (recompile := verdict.recompile) is not None:
        where.add_row("recompile of", Text(f"[{recompile.against.id}] (its guard failed)" if recompile.against
                                           else "? (the reason was not logged)" if not recompile.logged
                                           else "? (not in these logs)"))
    where.add_row("problems", Text(", ".join(kind.count(verdict.count(kind)) for kind in Kind
                                             if verdict.count(kind)) or "none"))
    parts.append(where)
    diagnoses = diagnose_node(node)
    if diagnoses:
        parts.append(Text("\nwhy, and what to do", style="bold"))
        for d in diagnoses:
            said = d.kind if d.cause == d.kind else f"{d.kind} · {d.cause}"  # (a frame run eagerly's are one)
            line = Text(f"  {said}: ", style=CAUSE_STYLE.get(d.kind, ""))
            line.append(visible(d.why))
            parts.append(line)
            parts.append(Text(f"    fix: {visible(d.fix)}", style="dim"))
            if sources is not None and d.place and (excerpt := sources.excerpt(*d.place)) is not None:
                parts.append(source_block(excerpt.as_dict()))
    stack = node.full_stack()
    if stack:
        parts.append(Text("\nuser stack", style="bold"))
        parts.append(Text("\n".join("  " + visible(s) for s in stack)))
    metrics = compile_.final_metrics or {}
    if metrics:
        times = _kv_table()
        for key, label in TIMES:
            if isinstance(metrics.get(key), (int, float)):
                times.add_row(label, f"{metrics[key]:.3f} s")
        counts = _kv_table()
        for key, label in COUNTS:
            if metrics.get(key) is not None:
                counts.add_row(label, visible(str(metrics[key])))
        parts += [Text("\ncompile times", style="bold"), times, Text("\ncounts", style="bold"), counts]
    elif checks := compile_.guard_checks:
        parts.append(Text(f"\nguards  {checks} checks in the logged guard tree (TORCH_LOGS=guards)"))
    caches = [a.name for n in compile_.attempts for a in n.artifacts_in(Role.CACHE)]
    if caches:
        line = Text("\ncaches  ", style="bold")
        for name in caches:
            hit = cache_outcome(name) == "hit"
            line.append(f"{'✓' if hit else '✗'} {name}  ", style="green" if hit else "yellow")
        parts.append(line)
    failure = verdict.failure
    if failure is not None and failure.evidence.fail_type:
        parts.append(Text(f"\nfailure: {visible(failure.evidence.fail_type)}", style="bold red"))
        parts.append(Text(visible(failure.evidence.fail_reason)))
    for error in node.errors:
        parts.append(Text("\nerror", style="bold red"))
        parts.append(Text(visible(error[:4000])))
    for restart in verdict.of(Kind.RESTART):
        parts.append(Text(f"\nrestarted [{restart.compile_id}] because", style="bold yellow"))
        reason = restart.evidence if restart.logged else restart.why
        parts.append(Text(visible(str(reason).split("\n Developer debug context")[0])))
    if node.problems:
        parts.append(Text("\nproblems in the input", style="bold red"))
        for problem in node.problems:
            parts.append(Text(visible(problem.describe())))
    return Group(*parts)


def outside_summary(entry: TreeEntry) -> Group:
    """A group's records of no compile id: export's programs, guards and symbols, what they are."""
    node = entry.node
    compile_ = entry.compile
    assert node is not None and compile_ is not None  # an outside entry has both (views/tree.py makes it so)
    counts: dict[str, int] = {}
    for name in [a.name for a in node.outside_items() if isinstance(a, Artifact) and a.role is not Role.DYNAMIC] + \
            [d.kind for d in node.dynamic]:
        counts[name] = counts.get(name, 0) + 1
    verdict = compile_.verdict
    parts: list[RenderableType] = [
        Text(visible(entry.title), style="bold magenta"),
        Text("Records written outside any compile: torch.export's, or a compile's records that "
             "carry no compile id. Graphs shows the exported programs, Guards the guards "
             "added, Dynamic shapes the symbols.", style="dim")]
    table = _kv_table()
    for name, count in sorted(counts.items(), key=lambda kv: -kv[1]):
        table.add_row(visible(name), str(count))
    parts += [Text("\nrecords", style="bold"), table]
    if node.metrics:
        counts_table = _kv_table()
        for key, label in TIMES + COUNTS:
            value = node.metrics.get(key)
            if isinstance(value, (int, float)) and (key, label) in TIMES:
                counts_table.add_row(label, f"{value:.3f} s")
            elif value is not None:
                counts_table.add_row(label, visible(str(value)))
        parts += [Text("\ncompilation metrics of no compile id", style="bold"), counts_table]
    for failure in verdict.of(Kind.FAILURE):
        parts.append(Text(f"\n✗ {failure.cause}: ", style="bold red"))
        parts.append(Text(visible(failure.why)))
        parts.append(Text(visible(failure.evidence.fail_reason[:4000]), style="dim"))
    return Group(*parts)


def group_summary(entry: TreeEntry) -> Group:
    counts: dict[Status, int] = {}
    for item in entry.compiles_below():
        assert item.status is not None  # a compile entry has its status (views/tree.py makes it so)
        counts[item.status] = counts.get(item.status, 0) + 1
    table = _kv_table()
    table.add_row("compile ids", str(entry.compile_ids))
    for status, count in sorted(counts.items(), key=lambda kv: kv[0].word):
        table.add_row(status_text(status), str(count))
    return Group(Text(visible(entry.title), style="bold"), table)


class SummaryPane(Vertical, Pane):

    def compose(self):
        yield RenderedHere(id="summary-body")

    def show(self, selection: Selection) -> None:
        body = self.query_one("#summary-body", RenderedHere)
        entry = selection.entry
        if entry is None:
            body.update(Text("Select a compile id on the left.", style="dim"))
        elif entry.kind == "outside":
            body.update(outside_summary(entry))
        elif entry.node is not None:
            body.update(compile_summary(entry, grouped=selection.index.grouped, sources=selection.sources))
        else:
            body.update(group_summary(entry))

    def copy_text(self) -> str:
        return plain_text(self.query_one("#summary-body", RenderedHere).content)
