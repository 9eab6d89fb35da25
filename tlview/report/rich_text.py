"""How the model's things look, as rich Text: a status, a tree entry's label, a timeline bar.
Written once for the headless report and the UI (neither imports the other for it).

Everything from the logs goes through rich.text.Text (never markup) and textsafe, so brackets and
escape codes in payloads show literally.
"""

from __future__ import annotations

from rich.text import Text

from tlview.domain.compile_node import PHASES
from tlview.domain.perf import COSTS_TIME
from tlview.domain.places import short_path  # noqa: F401 - printed from here
from tlview.domain.rank_runs import joined_runs, rank_runs, ranks_text, ref, whose  # noqa: F401 - printed from here
from tlview.domain.status import Status
from tlview.domain.verdict import Kind
from tlview.textsafe import visible
from tlview.views.tree import TreeEntry

# What each kind of problem looks like, in the report's lists and the UI's panes (a failure in
# bold: without colour, weight says it).
CAUSE_STYLE = {"recompile": "cyan", "graph_break": "yellow", "restart": "yellow", "failure": "bold red",
               "frame_skipped": "bold red", "perf": "magenta"}
PHASE_STYLE = dict(zip(PHASES, ("blue", "magenta", "green", "yellow", "cyan")))
BAR_WIDTH = 40


def status_text(status: Status) -> Text:
    """`✗ error`, in the status's colour."""
    return Text(status.label, style=status.style)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 compile id`, `2 compile ids`."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def totals_line(totals: dict) -> str:
    """The run's counts in the README's words (one line for --report and the compare view)."""
    parts = [counted(totals["compile_ids"], "compile id"), counted(totals["frames"], "frame"),
             counted(totals["compiles"], "compile")]
    parts += [kind.count(totals[kind.word]) for kind in Kind if kind.said_when_none or totals[kind.word]]
    if by_design := totals.get("graph_breaks_by_design"):
        parts.append(f"{counted(by_design, 'graph break')} by PyTorch's design")
    return ", ".join(parts) + ", " + counted(totals["records"], "record")


def seconds(value: float | None) -> str:
    """`1.2 s`, or `unknown` where the logs have no time (never a false zero)."""
    return "unknown" if value is None else f"{value:.1f} s"


def distinct_paths(first: str, second: str) -> tuple[str, str]:
    """Two runs' paths as told apart: the folders they share left out
    (`/ci/job/compare/before/trace`, `/ci/job/compare/after/trace` -> `before/trace`,
    `after/trace`), the last part at least (the full paths are in --json)."""
    a, b = first.rstrip("/").split("/"), second.rstrip("/").split("/")
    shared = 0
    while shared < min(len(a), len(b)) - 1 and a[shared] == b[shared]:
        shared += 1
    return "/".join(a[shared:]) or first, "/".join(b[shared:]) or second


def entry_text(entry: TreeEntry) -> Text:
    """A tree entry's label: `✗ [3/4]  error  ↻4  ✂1  G13  ↯2  ⚠2` (symbol and word: readable
    without colour); a frame or rank with how many compile ids it holds."""
    if entry.kind in ("frame", "group"):
        label = Text(visible(entry.title), style="bold")
        label.append(f"  {entry.compile_ids} id{'s' if entry.compile_ids != 1 else ''}", style="dim")
        return label
    if entry.kind == "outside":
        assert entry.compile is not None and entry.node is not None, "an outside entry is of its records"
        failed = entry.compile.verdict.count(Kind.FAILURE)
        label = Text(("✗ " if failed else "") + visible(entry.title), style="bold red" if failed else "bold magenta")
        label.append(f"  {counted(len(entry.node.outside_items()), 'record')}", style="dim")
        if failed:
            label.append(f"  failed ×{failed}" if failed > 1 else "  failed", style="bold red")
        return label
    status = entry.status or Status.MISSING
    label = Text(f"{status.symbol} {entry.title}", style=status.style)
    badges = badges_of(entry)
    if entry.kind == "compile":
        badges.insert(0, status.word)
    if badges:
        label.append("  " + "  ".join(badges), style="dim" if entry.kind == "attempt" else "")
    if perf := perf_badge(entry):
        badge, costs_time = perf
        label.append(f"  {badge}", style="" if costs_time and entry.kind != "attempt" else "dim")
    return label


PERF_BADGE = "↯"  # (not ⚡: an emoji two cells wide, which terminals draw at one or two)


def perf_badge(entry: TreeEntry) -> tuple[str, bool] | None:
    """`↯N`: the perf problems of a compile (an attempt's, those in that attempt), and whether
    any costs time (else the badge is dim: informational only)."""
    assert entry.compile is not None and entry.node is not None, "a compile's or an attempt's entry"
    perf = [p for p in entry.compile.verdict.of(Kind.PERF) if entry.kind == "compile" or p.node is entry.node]
    if not perf:
        return None
    return f"{PERF_BADGE}{len(perf)}", any(p.severity == COSTS_TIME for p in perf)


def badges_of(entry: TreeEntry) -> list[str]:
    """A compile's badges count its verdict's problems (an attempt's, those in that attempt)."""
    node = entry.node
    assert entry.compile is not None and node is not None, "a compile's or an attempt's entry"
    problems = [p for p in entry.compile.verdict.problems if entry.kind == "compile" or p.node is node]
    badges = []
    recompile = next((p for p in problems if p.kind is Kind.RECOMPILE), None)
    if recompile is not None:
        reasons = len(node.reasons)
        badges.append(f"↻{reasons}" if recompile.logged and reasons else "↻?")
    breaks = sum(1 for p in problems if p.kind is Kind.GRAPH_BREAK)
    if breaks:
        badges.append(f"✂{breaks}")
    guards = (node.metrics or {}).get("guard_count") or node.text.guard_checks  # (text: its leaves)
    if guards:
        badges.append(f"G{guards}")
    if node.problems:
        badges.append(f"⚠{len(node.problems)}")
    return badges


def timeline_bar(row: dict, longest: float, grouped: bool = False) -> Text:
    """`[3/1] 10.2 s ████▓▓▓▒▒ ` — one block per phase, scaled to the longest compile."""
    # (a rank that stands for its group of ranks is named by them: `[0/0] ranks 0-1022`)
    label = f"[{row['id']}] {row['ranks_said']}" if grouped and row.get("ranks_said") else (
        ref(row["id"], row["rank"], row["process"]) if grouped else ref(row["id"]))
    text = Text(f"  {label}".ljust(22 if grouped else 12))
    text.append(f"{row['total']:7.2f} s ")
    for phase, style in PHASE_STYLE.items():
        cells = round(row[phase] / longest * BAR_WIDTH) if longest else 0
        text.append("█" * cells, style=style)
    text.append(f"  {visible(row['function'] or '')}", style="dim")
    return text


def phase_legend(title: str) -> Text:
    legend = Text(title, style="bold")
    for phase, style in PHASE_STYLE.items():
        legend.append("█ ", style=style)
        legend.append(f"{phase}  ", style="dim")
    return legend


MARK = "▶"  # the problem's own line among the user's source lines


def source_lines(source: dict) -> list[tuple[str, bool]]:
    """The user's lines at a problem (summary.py's `source`), numbered, the problem's marked:
    (`▶ 19 │     print(...)`, marked) each. The source's own text, made visible."""
    width = len(str(source["lines"][-1]["number"])) if source["lines"] else 1
    return [(f"{MARK if line['marked'] else ' '} {line['number']:>{width}} │ {visible(line['text'].rstrip())}",
             line["marked"]) for line in source["lines"]]


def missing_sources_line(missing: list[dict]) -> str | None:
    """Said once: the user's files not found here, and the flag that finds them."""
    if not missing:
        return None
    paths = [m["path"] for m in missing]
    more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
    return (f"source lines: {visible(paths[0])}{more} not read here ({missing[0]['why']}); "
            f"--source-root {visible(_folder(paths[0]))}=WHERE_IT_IS_HERE reads them from a copy")


def missing_sources_notice(missing: list[dict]) -> str | None:
    """The explorer's one-line notice of `missing_sources_line` (its title says "source"): the flag
    first and whole, then the file by its name, to fit a footer of 80 columns."""
    if not missing:
        return None
    paths = [m["path"] for m in missing]
    more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
    name = paths[0].rsplit("/", 1)[-1]
    return f"--source-root {visible(_folder(paths[0]))}=DIR reads {visible(name)}{more} ({missing[0]['why']})"


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else path


def source_block(source: dict, indent: str = "    ") -> Text:
    """The user's lines at a problem, as the panes show them: where, then the lines, the
    problem's own in bold."""
    text = Text(f"{indent}at {visible(source['path'])}:{source['line']}\n", style="dim")
    for line, marked in source_lines(source):
        text.append(f"{indent}{line}\n", style="bold" if marked else "dim")
    text.rstrip()
    return text


def elided(label: Text, room: int, counted: bool = False) -> Text:
    """A label that fits `room` cells: its title loses its middle, `step, resu…aks.py:25  1 id`,
    and keeps its badges (a compile's, after its id) or its count (a frame's or a rank's: its
    label's last part); cut at the end they went first: `with_break, resumed at compile_error.py:54  1▕`."""
    if label.cell_len <= room or room < 12:
        return label
    plain = label.plain
    cut = plain.rfind("  ") if counted else plain.find("  ")
    rest = len(plain) - cut if cut > 0 else 0
    title_room = room - rest - 1
    if title_room < 6:
        return label[:room - 1] + Text("…")
    tail = title_room // 2
    head = title_room - tail
    return label[:head] + Text("…", style=label.style) + label[cut - tail:]
