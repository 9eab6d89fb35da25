"""Summary of the selected compile id, frame or rank: status, where, times, counts, failures."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from tlview.diagnose.classify import diagnose_node
from tlview.model.index import Index
from tlview.report.text_report import CAUSE_STYLE
from tlview.model.tree import STATUS_SYMBOL, TreeEntry
from tlview.textsafe import visible
from tlview.ui.frame_tree import STATUS_STYLE

TIMES = [("entire_frame_compile_time_s", "whole frame"), ("backend_compile_time_s", "backend (AOT+Inductor)"),
         ("inductor_compile_time_s", "inductor"), ("code_gen_time_s", "codegen"),
         ("dynamo_time_before_restart_s", "dynamo before restart")]
COUNTS = [("guard_count", "guards"), ("shape_env_guard_count", "shape guards"),
          ("graph_op_count", "graph ops"), ("graph_node_count", "graph nodes"),
          ("cache_size", "cache entries before"), ("num_graph_breaks", "graph breaks")]


def _kv_table() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    return table


def compile_summary(index: Index, entry: TreeEntry) -> Group:
    node = entry.node
    compile_ = entry.compile
    status = entry.status or compile_.status  # "compiling" while following
    parts = []
    title = Text(f"{STATUS_SYMBOL[status]} [{node.id}] {status}", style=STATUS_STYLE[status])
    if node.rank is not None:
        title.append(f"   rank {node.rank}", style="dim")
    parts.append(title)
    where = _kv_table()
    where.add_row("function", Text(visible(node.function() or "?")))
    where.add_row("location", Text(visible(node.location() or "?")))
    attempts = ", ".join(f"[{n.id}]" for n in compile_.attempts)
    where.add_row("attempts", Text(attempts))
    if node.cid.is_recompile:
        reasons = node.effective_recompile_reasons()
        where.add_row("recompile of", Text(", ".join(sorted({f"[{r.failed_id}]" for r in reasons if r.failed_id})) or "?"))
    parts.append(where)
    diagnoses = diagnose_node(node)
    if diagnoses:
        parts.append(Text("\nwhy, and what to do", style="bold"))
        for d in diagnoses:
            line = Text(f"  {d.kind} · {d.cause}: ", style=CAUSE_STYLE.get(d.kind, ""))
            line.append(visible(d.why))
            parts.append(line)
            parts.append(Text(f"    fix: {visible(d.fix)}", style="dim"))
    stack = node.full_stack()
    if stack:
        parts.append(Text("\nuser stack", style="bold"))
        parts.append(Text("\n".join("  " + visible(s) for s in stack)))
    metrics = compile_.final_metrics or {}
    if metrics:
        times = _kv_table()
        for key, label in TIMES:
            if metrics.get(key) is not None:
                times.add_row(label, f"{metrics[key]:.3f} s")
        counts = _kv_table()
        for key, label in COUNTS:
            if metrics.get(key) is not None:
                counts.add_row(label, str(metrics[key]))
        parts += [Text("\ncompile times", style="bold"), times, Text("\ncounts", style="bold"), counts]
    caches = [a.name for n in compile_.attempts for a in n.artifacts
              if a.name.endswith(("_cache_hit", "_cache_miss", "_cache_bypass"))]
    if caches:
        line = Text("\ncaches  ", style="bold")
        for name in caches:
            hit = name.endswith("_hit")
            line.append(f"{'✓' if hit else '✗'} {name}  ", style="green" if hit else "yellow")
        parts.append(line)
    if metrics.get("fail_type"):
        parts.append(Text(f"\nfailure: {metrics['fail_type']}", style="bold red"))
        parts.append(Text(visible(str(metrics.get("fail_reason") or ""))))
    for error in node.errors:
        parts.append(Text("\nerror", style="bold red"))
        parts.append(Text(visible(error[:4000])))
    for reason in compile_.restart_reasons:
        parts.append(Text("\nrestarted because", style="bold yellow"))
        parts.append(Text(visible(reason.split("\n Developer debug context")[0])))
    if node.problems:
        parts.append(Text("\nproblems in the input", style="bold red"))
        for problem in node.problems:
            parts.append(Text(visible(problem.describe())))
    return Group(*parts)


def group_summary(index: Index, entry: TreeEntry) -> Group:
    counts: dict[str, int] = {}
    for item in _compiles_under(entry):
        counts[item.status] = counts.get(item.status, 0) + 1
    line = Text(visible(entry.label), style="bold")
    table = _kv_table()
    table.add_row("compile ids", str(entry.compile_ids))
    for status, count in sorted(counts.items()):
        table.add_row(Text(f"{STATUS_SYMBOL.get(status, '?')} {status}", style=STATUS_STYLE.get(status, "")), str(count))
    return Group(line, table)


def _compiles_under(entry: TreeEntry):
    for child in entry.children:
        if child.kind == "compile":
            yield child
        else:
            yield from _compiles_under(child)


class SummaryPane(VerticalScroll):
    def compose(self):
        yield Static(id="summary-body")

    def show(self, index: Index, entry: TreeEntry | None) -> None:
        body = self.query_one("#summary-body", Static)
        if entry is None:
            body.update(Text("Select a compile id on the left.", style="dim"))
        elif entry.node is not None:
            body.update(compile_summary(index, entry))
        else:
            body.update(group_summary(index, entry))

    def plain_text(self) -> str:
        return str(self.query_one("#summary-body", Static).render())
