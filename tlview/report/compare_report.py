"""`tlview --compare BEFORE AFTER --report`: what went away, what is new, what stayed, readable."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tlview.domain.verdict import Kind
from tlview.report.rich_text import short_path
from tlview.textsafe import FIX_CHARS, one_line, visible_data, visible_name

GROUPS = (("gone", "Gone", "green"), ("new", "New", "red"), ("same", "Same", "yellow"))


def render_compare(comparison: dict, console: Console) -> None:
    comparison = visible_data(comparison)
    before, after = comparison["before"], comparison["after"]
    head = Text("tlview compare", style="bold")
    head.append(f"  before: {visible_name(before['path'])}  after: {visible_name(after['path'])}", style="dim")
    console.print(head)
    table = Table(expand=False, pad_edge=False, show_edge=False, box=None)
    for name in ("", "before", "after"):
        table.add_column(name, justify="right" if name else "left")
    for key, label in (("compile_ids", "compile ids"), *((k.word, k.plural) for k in Kind
                                                          if k.said_when_none or before[k.word] or after[k.word]),
                       ("compile_seconds", "compile seconds")):
        table.add_row(label, str(before[key]), str(after[key]))
    console.print(table)
    if (change := comparison.get("compile_seconds_change")) is not None:
        console.print(Text(f"compile time {change:+.3f} s", style="green" if change <= 0 else "red"))
    for group, title, style in GROUPS:
        items = comparison[group]
        console.print(Text(f"\n{title} ({len(items)})", style=f"bold {style}"))
        if not items:
            console.print(Text("  (none)", style="dim"))
        for p in items:
            line = Text("  ")
            line.append(f"{p['kind']} ", style="bold")
            line.append(f"{p['cause']} ", style=style)
            line.append(f"in {p['function']} at {_where(p)}")
            line.append(f"  before {p['count_before']}, after {p['count_after']}", style="dim")
            console.print(line)
            console.print(Text(f"    why: {one_line(p['why'], 300)}"))
            console.print(Text(f"    fix: {one_line(p['fix'], FIX_CHARS)}", style="dim"))
            ids = [f"before {', '.join(p['compile_ids_before'])}" if p["compile_ids_before"] else "",
                   f"after {', '.join(p['compile_ids_after'])}" if p["compile_ids_after"] else ""]
            console.print(Text("    compile ids: " + "; ".join(filter(None, ids)), style="dim"))


def _where(problem: dict) -> str:
    a, b = problem["location_before"], problem["location_after"]
    if a and b and problem.get("file_renamed"):
        return f"{short_path(b)} (was {short_path(a)}: the file was renamed or moved)"
    if a and b and a != b:
        return f"{short_path(b)} (was {short_path(a)})"
    return short_path(problem["location"])
