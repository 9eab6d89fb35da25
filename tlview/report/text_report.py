"""`tlview --report`: a readable summary of an index on stdout, rendered with rich.

Everything from the logs goes through rich.text.Text (never markup), made visible by textsafe,
so brackets and escape codes in payloads print literally.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tlview.domain.ddp_split import DdpSplit
from tlview.domain.reasons import reason_summary
from tlview.domain.status import Status
from tlview.domain.verdict import Kind
from tlview.report.alike import (
    Alike,
    Folding,
    ProblemOf,
    Shown,
    diagnosis_key,
    failure_key,
    problem_key,
    row_key,
    some_ids,
)
from tlview.report.cache_look import cache_lines
from tlview.report.json_types import (
    CompileEntry,
    DiagnosisEntry,
    GraphBreakGroup,
    InputProblemEntry,
    JobVerdictEntry,
    OutsideEntry,
    RunSummary,
    SourceFileEntry,
    Summary,
    TimelineRow,
    Totals,
)
from tlview.report.perf_look import costliest_first
from tlview.report.rank_fold import fold, named, source_said, who
from tlview.report.rich_text import (
    CAUSE_STYLE,
    counted,
    missing_sources_line,
    phase_legend,
    ref,
    seconds,
    short_path,
    source_lines,
    status_text,
    timeline_bar,
    totals_line,
)
from tlview.report.summary import later, listed
from tlview.report.timeline_look import total_said
from tlview.textsafe import FIX_CHARS, one_line, visible, visible_data, visible_name

TIMELINE_ROWS = 12  # the longest compiles listed


def render_report(summary: Summary, console: Console) -> None:
    # In a run of several ranks or processes, every compile id is named with its rank.
    grouped = len(listed(summary["compiles"])) > 1
    summary = fold(summary)  # alike ranks (rank_groups): one stands for them, named by them all
    found = _Found.of(summary)
    # Everything printed comes from the logs: escape codes in it are shown, never acted on: what
    # is printed of the compile ids is made visible as it is printed, the rest of the summary whole.
    shown = Shown()
    names = _Names(grouped, shown)
    # (source_missing, of a streamed summary: known once the entries were read, made visible then)
    said: Summary = visible_data({**summary, "compiles": [], "outside_compiles": [],
                                  "timeline": summary["timeline"][:TIMELINE_ROWS]})
    _head(said, console)
    _hang(said["hang_summary"], said.get("job_verdict"), console)
    _headline(said, console)
    _sources(said["sources"], console)
    _compile_table(found.rows, names, bool(said.get("filter")), console)
    _graph_breaks(said["graph_break_summary"], grouped, console)
    _diagnoses(found.diagnosed, names, console)
    _perf(found.perf, names, console)
    if found.diagnosed:
        _missing_sources(said, console)
    _ddp_splits(found.rows, names, console)
    _costs(said["run_summary"], grouped, console)
    _timeline(said["timeline"], grouped, console)
    for line in cache_lines(said.get("caches"), names.one):
        console.print(line)
    _divergence(said, console)
    _failures(found.failures, names, console)
    _input_problems(said["problems"], console)
    for note in said["notes"]:
        console.print(Text(f"note: {visible(note)}", style="dim"))
    _totals(said["totals"], said.get("filter"), console)


@dataclass
class _Found:
    """Compile ids that say the same thing, one row or line each (alike.py), decided on the plain
    data as the entries are read, once (summary.CompileEntries: made as they are read)."""

    rows: list[Alike[CompileEntry]]
    diagnosed: list[Alike[tuple[CompileEntry, DiagnosisEntry]]]
    failures: list[Alike[ProblemOf]]
    perf: list[Alike[ProblemOf]]  # costliest first (perf_look.py)

    @classmethod
    def of(cls, summary: Summary) -> _Found:
        rows: Folding[CompileEntry] = Folding(row_key)
        diagnosed: Folding[tuple[CompileEntry, DiagnosisEntry]] = Folding(diagnosis_key)
        failures: Folding[ProblemOf] = Folding(failure_key)
        perf: Folding[ProblemOf] = Folding(problem_key)
        for e in summary["compiles"]:
            rows.add(e)
            for d in e["diagnosis"]:
                if d["kind"] != Kind.PERF.key:  # (in a section of their own)
                    diagnosed.add((e, d))
            for p in e["verdict"]:
                if p["kind"] == Kind.PERF.key:
                    perf.add((e, p))
            _add_failures(failures, e)
        for outside in summary["outside_compiles"]:
            _add_failures(failures, outside)
        # a frame run eagerly leads: none of it is compiled
        diagnosed.found.sort(key=lambda found: found.first[1]["kind"] != "frame_skipped")
        return cls(rows.found, diagnosed.found, failures.found, costliest_first(perf.found))


def _add_failures(failures: Folding[ProblemOf], entry: CompileEntry | OutsideEntry) -> None:
    for p in entry["verdict"]:
        if p["kind"] == "failure":
            failures.add((entry, p))


class _Names:
    """How the report names compile ids: with their rank in a run of several (`grouped`)."""

    def __init__(self, grouped: bool, shown: Shown) -> None:
        self.grouped, self.shown = grouped, shown

    def one(self, item: Mapping[str, Any], key: str = "id") -> str:
        return named(item, key) if self.grouped else ref(item[key])

    def alike(self, first: Mapping[str, Any], last: Mapping[str, Any], count: int) -> str:
        """`[0/1]`, or for many alike `[0/1] … [0/99999] ×99,999` (`[0/1] … [0/9] rank 1 ×9`:
        those alike are of one rank)."""
        if count == 1:
            return self.one(self.shown(first))
        return f"{ref(self.shown(first)['id'])} … {self.one(self.shown(last))} ×{count:,}"


def _rstripped(text: Text) -> Text:
    text.rstrip()  # in place
    return text


def _head(summary: Summary, console: Console) -> None:
    head = Text()
    head.append("tlview report", style="bold")
    if summary.get("pytorch_version"):
        head.append(f"  torch {summary['pytorch_version']}")
    if summary.get("filter"):
        head.append(f"  filter: {summary['filter']}", style="cyan")
    console.print(head)


def _hang(hang_summary: list[str], verdict: JobVerdictEntry | None, console: Console) -> None:
    if verdict is not None:  # what happened to the job, in one line, before anything else
        console.print(Text(verdict["said"], style="bold red"))
    if hang_summary:  # then why
        console.print(Text("Why the job may hang", style="bold red"))
        for line in hang_summary[:30]:
            console.print(Text(f"  {line}"))


def _headline(summary: Summary, console: Console) -> None:
    """The worst problem in one line, after the job's verdict (said once: a hang is both)."""
    verdict = summary.get("job_verdict")
    if (headline := summary.get("headline")) and not (verdict and verdict["said"] == headline):
        console.print(Text(headline, style="bold"))


def _sources(sources: list[SourceFileEntry], console: Console) -> None:
    for source in sources:
        line = Text(f"  {source['kind']:5} ", style="dim")
        line.append(visible_name(source_said(source)))
        line.append(f"  {source['bytes']:,} bytes, {counted(source['records'], 'record')}", style="dim")
        if source.get("rank") is not None and "ranks_said" not in source:
            line.append(f"  rank {source['rank']}", style="dim")
        console.print(line)


def _compile_table(rows: list[Alike[CompileEntry]], names: _Names, filtered: bool, console: Console) -> None:
    """A table of the compile ids per rank, those alike one row."""
    if not rows:
        console.print(Text("No compile ids" + (" match the filter" if filtered else " in these logs"),
                           style="yellow"))
    by_rank: dict[int | None, list[Alike[CompileEntry]]] = {}
    for row in rows:
        by_rank.setdefault(row.first["rank"], []).append(row)
    for rank, entries in by_rank.items():
        title = names.shown(entries[0].first).get("ranks_title") or (f"rank {rank}" if rank is not None else None)
        table = Table(title=title, expand=False,
                      show_lines=False, title_justify="left", pad_edge=False)
        table.add_column("compile id", no_wrap=True)
        table.add_column("status", no_wrap=True)
        table.add_column("function / location", overflow="fold")
        table.add_column("breaks", justify="right")
        table.add_column("why (recompile reason / failure / break)", overflow="fold")
        for row in entries:
            e = names.shown(row.first)
            why = _why(e)
            if row.count > 1 and why.plain:  # how far the numbers went
                last = names.shown(row.last)
                why.append(f"… ×{row.count:,} alike, the last {names.one(last)}: ", style="dim")
                why.append_text(_why(last))
            where = Text(visible_name(e["function"] or ""), style="bold")
            if e["location"]:
                where.append("  " + visible_name(short_path(e["location"])), style="dim")
            table.add_row(Text(names.alike(row.first, row.last, row.count)), status_text(Status.of_word(e["status"])),
                          where, str(len(e["graph_breaks"])) if e["graph_breaks"] else "",
                          _rstripped(why))
        console.print(table)


def _why(e: CompileEntry) -> Text:
    """The table's last column: the recompile's reason, the failure, the first breaks."""
    why = Text()
    for p in e["verdict"]:
        if p["kind"] == "recompile":
            why.append("recompile: ", style="cyan")
            if not p["logged"]:
                why.append("reason not logged\n")
                continue
            against = f"[{p['against']}] " if p["against"] else ""
            why.append(against + one_line(reason_summary(p["message"]), 120))
            if len(e["recompile_reasons"]) > 1:
                why.append(f" (+{len(e['recompile_reasons']) - 1} older cache entries failed too)",
                           style="dim")
            why.append("\n")
        elif p["kind"] == "failure":
            why.append(f"{p['exception'] or 'failed'}: ", style="red")
            why.append(one_line(e["fail_reason"] or p["why"], 120) + "\n")
    for gb in e["graph_breaks"][:2]:
        why.append("break: ", style="yellow")
        why.append(one_line(gb["detail"] or gb["reason"], 120) + "\n")
    return why


def _graph_breaks(groups: list[GraphBreakGroup], grouped: bool, console: Console) -> None:
    if groups:
        console.print(Text("Graph breaks (distinct)", style="bold yellow"))
    for gb in groups:
        line = Text(f"  ×{gb['count']} ", style="yellow")
        line.append(visible_name(gb["location"] or "?"), style="bold")
        line.append(f"  {one_line(gb['reason'], 100)}")
        if gb["detail"]:
            line.append(f" {one_line(gb['detail'], 100)}", style="italic")
        where = f" {who(gb)}" if grouped else ""
        line.append(f"  [{some_ids(gb['compile_ids'])}]{where}", style="dim")
        console.print(line)


def _diagnoses(diagnosed: list[Alike[tuple[CompileEntry, DiagnosisEntry]]], names: _Names,
               console: Console) -> None:
    """Why, and what to do: each cause once per place, with its fix and the user's lines."""
    if diagnosed:
        console.print(Text("Why, and what to do", style="bold"))
    for found in diagnosed:
        e, d = names.shown(found.first[0]), visible_data(found.first[1])
        line = Text(f"  {names.one(e)} ", style="bold")
        line.append(f"{d['kind']} · {d['cause']}: ", style=CAUSE_STYLE.get(d["kind"], ""))
        line.append(one_line(d["why"], 160))
        console.print(line)
        if found.count > 1:  # compile ids that say the same but for their numbers
            last = names.shown(found.last[0])
            more = Text(f"      and {found.count - 1:,} more alike, the last {names.one(last)}: ", style="dim")
            more.append(one_line(visible(found.last[1]["why"]), 160))
            console.print(more)
        console.print(Text(f"      fix: {one_line(d['fix'], FIX_CHARS)}", style="dim"))
        if d.get("source"):
            console.print(Text(f"      at {visible_name(d['source']['path'])}:{d['source']['line']}", style="dim"))
            for text, marked in source_lines(d["source"]):
                console.print(Text(f"      {text}", style="bold" if marked else "dim"))


def _perf(found: list[Alike[ProblemOf]], names: _Names, console: Console) -> None:
    """Why the compiled code is slower than it could be: what costs time first, then the most
    frequent; each with its severity, fix and the user's line."""
    if found:
        console.print(Text("Perf", style="bold"))
    for alike in found:
        p = visible_data(alike.first[1])
        line = Text(f"  {names.alike(alike.first[0], alike.last[0], alike.count)} ", style="bold")
        line.append(f"{p['cause']} ({p.get('severity') or ''}): ", style=CAUSE_STYLE.get(Kind.PERF.key, ""))
        line.append(one_line(p["why"], 160))
        console.print(line)
        console.print(Text(f"      fix: {one_line(p['fix'], FIX_CHARS)}", style="dim"))
        if p["location"]:
            console.print(Text(f"      at {visible_name(p['location'])}", style="dim"))


def _ddp_splits(rows: list[Alike[CompileEntry]], names: _Names, console: Console) -> None:
    """Why one module became several graphs: DDPOptimizer cut it at DDP's gradient buckets."""
    split = [found for found in rows if "ddp_split" in found.first]
    if split:
        console.print(Text("DDP graph splits", style="bold"))
    for found in split:
        said = DdpSplit.from_dict(visible_data(found.first["ddp_split"]))
        console.print(Text(f"  {names.alike(found.first, found.last, found.count)} {said.sentence()}"))
        for line in said.bucket_lines():
            console.print(Text(f"      {line}", style="dim"))


def _missing_sources(summary: Summary, console: Console) -> None:
    if said := missing_sources_line(visible_data(later(summary.get("source_missing", [])))):
        console.print(Text(f"  {said}", style="yellow"))


def _costs(run: RunSummary, grouped: bool, console: Console) -> None:
    """The frames that recompiled most, and the breaks whose compiles took longest."""
    if not (run["recompiling_frames"] or run["graph_breaks"]):
        return
    console.print(Text(f"Costs ({total_said(run)})", style="bold"))
    for f in run["recompiling_frames"][:10]:
        causes = ", ".join(f"{c} ×{n}" for c, n in f["causes"].items())
        line = Text(f"  {counted(f['recompiles'], 'recompile')} ", style="cyan")
        if grouped:
            line.append(f"({who(f)}) ", style="dim")
        line.append(f"{visible_name(f['function'] or '?')} ({visible_name(short_path(f['location'] or '?'))})")
        line.append(f"  recompiles took {seconds(f['recompile_seconds'])} (all compiles of the frame "
                    f"{seconds(f['seconds'])}); {causes}", style="dim")
        console.print(line)
    for b in run["graph_breaks"][:10]:
        line = Text(f"  ×{b['count']} break ", style="yellow")
        if grouped:
            line.append(f"[{some_ids(b['compile_ids'])}] {who(b)} ", style="dim")
        line.append(f"{b['cause']}: {one_line(b['why'], 100)}")
        line.append(f"  {seconds(b['seconds'])} in those compiles", style="dim")
        console.print(line)


def _timeline(rows: list[TimelineRow], grouped: bool, console: Console) -> None:
    if not rows:
        return
    console.print(phase_legend("Compile time by compile id (longest first)  "))
    longest = rows[0]["total"] or 1.0
    for row in rows[:TIMELINE_ROWS]:
        console.print(timeline_bar(row, longest, grouped))


def _divergence(summary: Summary, console: Console) -> None:
    """How the ranks diverge, but what "why the job may hang" said already."""
    hang = set(summary.get("hang_summary") or ())
    if rest := [line for line in summary["divergence_summary"] if line not in hang]:
        console.print(Text("Ranks diverge", style="bold red"))
        for line in rest[:30]:
            console.print(Text(f"  {line}"))


def _failures(failures: list[Alike[ProblemOf]], names: _Names, console: Console) -> None:
    if failures:
        console.print(Text("Failures", style="bold red"))
    for found in failures:
        e, p = names.shown(found.first[0]), visible_data(found.first[1])
        said = names.alike(found.first[0], found.last[0], found.count) if "id" in e else "export"
        line = Text(f"  {said} ", style="red")
        line.append(visible(p["exception"] or "error") + ": ")
        # the whole reason: its later lines often say what went wrong (a LoweringError)
        reason = (p["fail_reason"] or p["message"] or p["why"]).rstrip()
        line.append(visible(reason).replace("\n", "\n      "))
        console.print(line)


def _input_problems(problems: list[InputProblemEntry], console: Console) -> None:
    """What could not be read in the input files: the first 50, in a panel."""
    if not problems:
        return
    body = Text()
    for p in sorted(problems, key=lambda p: (p["file"], p["line"]))[:50]:
        body.append(f"{visible(p['file'])}:{p['line']}: ", style="bold")
        body.append(f"{p['kind']}: ", style="red")
        body.append(visible(p["message"]) + "\n")
    if len(problems) > 50:
        body.append(f"... and {len(problems) - 50} more\n")
    console.print(Panel(_rstripped(body), title="problems in the input", border_style="red", expand=False,
                        title_align="left"))


def _totals(totals: Totals, filter_said: str | None, console: Console) -> None:
    t = Text("Totals" + (f" of what the filter keeps ({filter_said})" if filter_said else "") + ": ",
             style="bold")
    t.append(totals_line(totals))
    if totals["md5_bad"]:
        t.append(f", {totals['md5_bad']} md5 mismatches", style="red")
    if totals["problems"]:
        t.append(f", {counted(totals['problems'], 'problem')}", style="red")
    console.print(t)
