"""How the compile timeline (diagnose/timeline.py) looks, as rich Text: one lane per rank on a
shared axis (when it compiled, side by side), then each rank's compile spans in the order they
ran, each a bar placed in time. For the Run pane and `--report`.

Everything from the logs goes through Text (never markup) and textsafe.
"""

from __future__ import annotations

from rich.text import Text

from tlview.diagnose.costs import LINE_TIMES
from tlview.domain.status import Status
from tlview.report.rich_text import counted, seconds
from tlview.textsafe import visible

BAR_MIN, BAR_MAX = 20, 80
NARROW_BAR = 8
ROWS_PER_LANE = 60  # a lane with more spans shows its first ones (its lane line shows them all)
LANES_DRAWN = 32  # a job of 20,000 ranks: the first ranks are drawn, one rank's own view shows it
CLOCK_WORDS = {
    "chromium": "chromium events",
    "metrics": "compilation metrics (start time + compile time)",
    "text": "TORCH_LOGS line times (ms; a compile id's first to last line)",
}


def duration(value: float | None) -> str:
    """`3.05 s`, `12 ms`, `—` (never ended)."""
    if value is None:
        return "—"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def offset(value: float) -> str:
    return f"+{value:.2f} s" if value < 100 else f"+{value:.0f} s"


def timeline_lines(timeline: dict, width: int = 120, rows_per_lane: int = ROWS_PER_LANE,
                   lanes_drawn: int = LANES_DRAWN) -> list[Text]:
    """The timeline in lines of at most about `width` columns."""
    rows, lanes = timeline["rows"], timeline["lanes"]
    left_out = lanes[lanes_drawn:]
    lanes = lanes[:lanes_drawn]
    if not rows:
        return [Text("Compile timeline: no times are known", style="bold"),
                Text("  " + _why_no_times(timeline), style="dim")]
    clocks = {lane["clock"] for lane in lanes if lane["clock"]}
    head = Text("\nCompile timeline", style="bold")
    head.append(f"  0 s = {timeline['origin_text'] or 'the first compile'}, by "
                f"{', '.join(CLOCK_WORDS.get(c, c) for c in sorted(clocks))}", style="dim")
    out = [head]
    total = timeline["span_s"] or 1e-9
    by_lane: dict = {}
    for row in rows:
        by_lane.setdefault((row["rank"], row["process"]), []).append(row)
    owned = [by_lane.get((lane["rank"], lane["process"]), []) for lane in lanes]
    shown = [row for own in owned for row in own[:rows_per_lane]]
    label_width = max(len(lane["label"]) for lane in lanes) + 2
    ids = max((len(r["id"]) for r in shown), default=5)
    # the start and duration columns, when the pane is wide enough for them and a bar
    numbers = width >= label_width + 62
    row_label = max(label_width, min(44, max((len(_row_label(r, ids, numbers).plain) for r in shown), default=0) + 1))
    bar = max(BAR_MIN, min(BAR_MAX, width - row_label - 24))  # room after it for a function name
    if row_label + bar + (2 if numbers else 10) > width:  # narrow (80x24): the bars shrink
        bar = max(NARROW_BAR, width - row_label - (2 if numbers else 10))
    if len(lanes) > 1 or len(shown) < len(rows):  # when each rank compiled, side by side
        out.append(_axis(label_width, bar, total))
        for lane, own in zip(lanes, owned):
            line = Text(f"  {lane['label']}".ljust(label_width))
            line.append_text(_lane_bar(own, bar, total))
            words = f" {duration(lane['busy_s'])} compiling, {counted(lane['compiles'], 'compile')}"
            line.append(words if len(line.plain) + len(words) <= width else f" {duration(lane['busy_s'])}",
                        style="dim")
            out.append(line)
    for lane, own in zip(lanes, owned):
        title = Text(f"\n{lane['label']}", style="bold")
        title.append(f"  {counted(lane['compiles'], 'compile')}, {counted(lane['spans'], 'span')}, compiling "
                     f"{duration(lane['busy_s'])} of {duration(total)}", style="dim")
        out.append(title)
        out.append(_axis(row_label, bar, total))
        for row in own[:rows_per_lane]:
            out.append(_row_line(row, ids, numbers, row_label, bar, total, width))
        if len(own) > rows_per_lane:
            out.append(Text(f"  … {len(own) - rows_per_lane} later spans (its lane above shows them all)",
                            style="dim"))
    if left_out:
        out.append(Text(f"\n  … {len(left_out):,} more ranks or processes not drawn "
                        f"({visible(left_out[0]['label'])} to {visible(left_out[-1]['label'])}): "
                        "filter by a rank to see its own timeline", style="dim"))
    if timeline["left_out"]:
        out.append(Text(f"  not drawn (only TORCH_LOGS line times, another clock): "
                        f"{', '.join(timeline['left_out'])}", style="dim"))
    if timeline["chromium_events_skipped"]:
        out.append(Text(f"  {timeline['chromium_events_skipped']} chromium events skipped (torn or not "
                        "JSON)", style="yellow"))
    return out


def _why_no_times(timeline: dict) -> str:
    if timeline["chromium_events_skipped"]:
        return f"the {timeline['chromium_events_skipped']} chromium events could not be read"
    return ("these logs have no chromium events, no compile start times and no log line times "
            "(TORCH_TRACE has them; so do TORCH_LOGS lines)")


def _axis(pad: int, bar: int, total: float) -> Text:
    """`│0 s          3.77 s│`: the ends of the axis, over the bars."""
    left, right = "0 s", offset(total).lstrip("+")
    line = Text(" " * pad, style="dim")
    if bar < len(left) + len(right) + 1:
        left = ""  # too narrow for both ends: the span's length is what tells
    line.append("│" + left.ljust(max(0, bar - len(right)), " ") + right[:bar] + "│", style="dim")
    return line


def _cells(row: dict, bar: int, total: float) -> tuple[int, int]:
    """The first cell and the cell after the last of a span (at least one cell)."""
    start = min(bar - 1, int(row["start_s"] / total * bar))
    end = max(start + 1, min(bar, round(row["end_s"] / total * bar + 0.4999)))
    return start, end


def _lane_bar(rows: list[dict], bar: int, total: float) -> Text:
    """One line: a cell is filled when the rank compiled then (worst status of that cell's spans)."""
    worst: list[Status | None] = [None] * bar
    for row in rows:
        status = Status.of_word(row["status"]) if row["status"] else Status.MISSING
        start, end = _cells(row, bar, total)
        for cell in range(start, end):
            worst[cell] = Status.worst([worst[cell], status])
    text = Text("│", style="dim")
    for cell_status in worst:
        text.append("█" if cell_status else " ", style=cell_status.style if cell_status else "")
    text.append("│", style="dim")
    return text


def _row_label(row: dict, ids: int, numbers: bool = True) -> Text:
    """`  ✓ [0/0] compile    +0.05 s  3.05 s`: status, compile id, what, start and duration (in a
    narrow pane the duration follows the bar, and the bar's place is the start)."""
    status = Status.of_word(row["status"]) if row["status"] else None
    label = Text(f"  {status.symbol if status else ' '} ", style=status.style if status else "")
    label.append(f"[{row['id']}]", style="bold")
    label.append(" " * (ids - len(row["id"])) + f" {row['what'][:10]:<10}")
    if numbers:
        label.append(f" {offset(row['start_s']):>9} {duration(row['seconds']):>7}")
    return label


def _row_line(row: dict, ids: int, numbers: bool, label_width: int, bar: int, total: float,
              width: int) -> Text:
    status = Status.of_word(row["status"]) if row["status"] else None
    line = _row_label(row, ids, numbers)
    line.append(" " * max(1, label_width - len(line.plain)))
    start, end = _cells(row, bar, total)
    line.append("│", style="dim")
    line.append(" " * start)
    line.append(("█" if row["ended"] else "▒") * (end - start), style=status.style if status else "dim")
    line.append(" " * (bar - end))
    line.append("│", style="dim")
    if not numbers:
        line.append(f" {duration(row['seconds'])}")
    if not row["ended"]:
        line.append(" not ended", style="yellow")
    room = width - len(line.plain) - 1
    if row["function"] and room >= 6:
        name = visible(row["function"])
        line.append(" " + (name if len(name) <= room else name[:room - 1] + "…"), style="dim")
    return line


def total_said(run_summary: dict, capital: bool = False) -> str:
    """`total compile time 0.81 s, from TORCH_LOGS line times (...)`: the seconds and their clock."""
    said = f"{'T' if capital else 't'}otal compile time {seconds(run_summary['total_compile_seconds'])}"
    if LINE_TIMES in run_summary.get("times_from", ()):
        said += f", from {LINE_TIMES}"
    return said
