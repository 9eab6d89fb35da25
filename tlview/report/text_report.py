"""`tlview --report`: a readable summary of an index on stdout, rendered with rich.

Everything from the logs goes through rich.text.Text (never markup), made visible by textsafe,
so brackets and escape codes in payloads print literally.
"""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tlview.domain.reasons import reason_summary
from tlview.domain.status import Status
from tlview.report.alike import (
    Folding,
    Shown,
    diagnosis_key,
    failure_key,
    row_key,
    some_ids,
)
from tlview.report.cache_look import cache_lines
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


def _why(e: dict) -> Text:
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


def _add_failures(failures: Folding, entry: dict) -> None:
    for p in entry["verdict"]:
        if p["kind"] == "failure":
            failures.add((entry, p))


def _rstripped(text: Text) -> Text:
    text.rstrip()  # in place
    return text


def render_report(summary: dict, console: Console) -> None:
    # In a run of several ranks or processes, every compile id is named with its rank.
    grouped = len(listed(summary["compiles"])) > 1
    summary = fold(summary)  # ranks of one compile history: one stands for them, named by them all
    # Compile ids that say the same thing are one row, one line (alike.py), decided on the plain
    # data as the entries are read, once (summary.CompileEntries: made as they are read).
    rows, diagnosed, failures = Folding(row_key), Folding(diagnosis_key), Folding(failure_key)
    for e in summary["compiles"]:
        rows.add(e)
        for d in e["diagnosis"]:
            diagnosed.add((e, d))
        _add_failures(failures, e)
    for e in summary["outside_compiles"]:
        _add_failures(failures, e)
    rows, diagnosed, failures = rows.found, diagnosed.found, failures.found
    # Everything printed comes from the logs: escape codes in it are shown, never acted on: what
    # is printed of the compile ids is made visible as it is printed, the rest of the summary whole.
    shown = Shown()
    # (source_missing, of a streamed summary: known once the entries were read, made visible then)
    summary = visible_data({**{k: v for k, v in summary.items() if k not in ("compiles", "outside_compiles")},
                            "timeline": summary["timeline"][:TIMELINE_ROWS]})
    totals = summary["totals"]

    def cid(item: dict, key: str = "id") -> str:
        return named(item, key) if grouped else ref(item[key])

    def cids(first: dict, last: dict, count: int) -> str:
        """`[0/1]`, or for many alike `[0/1] … [0/99999] ×99,999` (`[0/1] … [0/9] rank 1 ×9`:
        those alike are of one rank)."""
        if count == 1:
            return cid(shown(first))
        return f"{ref(shown(first)['id'])} … {cid(shown(last))} ×{count:,}"

    head = Text()
    head.append("tlview report", style="bold")
    if summary.get("pytorch_version"):
        head.append(f"  torch {summary['pytorch_version']}")
    if summary.get("filter"):
        head.append(f"  filter: {summary['filter']}", style="cyan")
    console.print(head)
    if summary.get("hang_summary"):  # "why did my job hang" comes before anything else
        console.print(Text("Why the job may hang", style="bold red"))
        for line in summary["hang_summary"][:30]:
            console.print(Text(f"  {line}"))
    for source in summary["sources"]:
        line = Text(f"  {source['kind']:5} ", style="dim")
        line.append(visible_name(source_said(source)))
        line.append(f"  {source['bytes']:,} bytes, {counted(source['records'], 'record')}", style="dim")
        if source.get("rank") is not None and "ranks_said" not in source:
            line.append(f"  rank {source['rank']}", style="dim")
        console.print(line)

    if not rows:
        console.print(Text("No compile ids" + (" match the filter" if summary.get("filter") else
                                               " in these logs"), style="yellow"))
    by_rank: dict = {}
    for row in rows:
        by_rank.setdefault(row.first["rank"], []).append(row)
    for rank, entries in by_rank.items():
        title = shown(entries[0].first).get("ranks_title") or (f"rank {rank}" if rank is not None else None)
        table = Table(title=title, expand=False,
                      show_lines=False, title_justify="left", pad_edge=False)
        table.add_column("compile id", no_wrap=True)
        table.add_column("status", no_wrap=True)
        table.add_column("function / location", overflow="fold")
        table.add_column("breaks", justify="right")
        table.add_column("why (recompile reason / failure / break)", overflow="fold")
        for row in entries:
            e = shown(row.first)
            why = _why(e)
            if row.count > 1 and why.plain:  # how far the numbers went
                last = shown(row.last)
                why.append(f"… ×{row.count:,} alike, the last {cid(last)}: ", style="dim")
                why.append_text(_why(last))
            where = Text(visible_name(e["function"] or ""), style="bold")
            if e["location"]:
                where.append("  " + visible_name(short_path(e["location"])), style="dim")
            table.add_row(Text(cids(row.first, row.last, row.count)), status_text(Status.of_word(e["status"])), where,
                          str(len(e["graph_breaks"])) if e["graph_breaks"] else "",
                          _rstripped(why))
        console.print(table)

    if summary["graph_break_summary"]:
        console.print(Text("Graph breaks (distinct)", style="bold yellow"))
        for gb in summary["graph_break_summary"]:
            line = Text(f"  ×{gb['count']} ", style="yellow")
            line.append(visible_name(gb["location"] or "?"), style="bold")
            line.append(f"  {one_line(gb['reason'], 100)}")
            if gb["detail"]:
                line.append(f" {one_line(gb['detail'], 100)}", style="italic")
            where = f" {who(gb)}" if grouped else ""
            line.append(f"  [{some_ids(gb['compile_ids'])}]{where}", style="dim")
            console.print(line)

    # a frame run eagerly leads: none of it is compiled
    diagnosed.sort(key=lambda found: found.first[1]["kind"] != "frame_skipped")
    if diagnosed:
        console.print(Text("Why, and what to do", style="bold"))
        for found in diagnosed:
            e, d = shown(found.first[0]), visible_data(found.first[1])
            line = Text(f"  {cid(e)} ", style="bold")
            line.append(f"{d['kind']} · {d['cause']}: ", style=CAUSE_STYLE.get(d["kind"], ""))
            line.append(one_line(d["why"], 160))
            console.print(line)
            if found.count > 1:  # compile ids that say the same but for their numbers
                last = shown(found.last[0])
                more = Text(f"      and {found.count - 1:,} more alike, the last {cid(last)}: ", style="dim")
                more.append(one_line(visible(found.last[1]["why"]), 160))
                console.print(more)
            console.print(Text(f"      fix: {one_line(d['fix'], FIX_CHARS)}", style="dim"))
            if d.get("source"):
                console.print(Text(f"      at {visible_name(d['source']['path'])}:{d['source']['line']}", style="dim"))
                for text, marked in source_lines(d["source"]):
                    console.print(Text(f"      {text}", style="bold" if marked else "dim"))
        if said := missing_sources_line(visible_data(later(summary.get("source_missing", [])))):
            console.print(Text(f"  {said}", style="yellow"))

    run = summary["run_summary"]
    if run["recompiling_frames"] or run["graph_breaks"]:
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
    if summary["timeline"]:
        console.print(phase_legend("Compile time by compile id (longest first)  "))
        longest = summary["timeline"][0]["total"] or 1.0
        for row in summary["timeline"][:TIMELINE_ROWS]:
            console.print(timeline_bar(row, longest, grouped))
    for line in cache_lines(summary.get("caches"), cid):
        console.print(line)
    hang = set(summary.get("hang_summary") or ())
    if rest := [line for line in summary["divergence_summary"] if line not in hang]:
        console.print(Text("Ranks diverge", style="bold red"))
        for line in rest[:30]:
            console.print(Text(f"  {line}"))

    if failures:
        console.print(Text("Failures", style="bold red"))
        for found in failures:
            e, p = shown(found.first[0]), visible_data(found.first[1])
            said = cids(found.first[0], found.last[0], found.count) if "id" in e else "export"
            line = Text(f"  {said} ", style="red")
            line.append(visible(p["exception"] or "error") + ": ")
            # the whole reason: its later lines often say what went wrong (a LoweringError)
            reason = (p["fail_reason"] or p["message"] or p["why"]).rstrip()
            line.append(visible(reason).replace("\n", "\n      "))
            console.print(line)

    if summary["problems"]:
        body = Text()
        for p in sorted(summary["problems"], key=lambda p: (p["file"], p["line"]))[:50]:
            body.append(f"{visible(p['file'])}:{p['line']}: ", style="bold")
            body.append(f"{p['kind']}: ", style="red")
            body.append(visible(p["message"]) + "\n")
        if len(summary["problems"]) > 50:
            body.append(f"... and {len(summary['problems']) - 50} more\n")
        console.print(Panel(_rstripped(body), title="problems in the input", border_style="red", expand=False,
                            title_align="left"))
    for note in summary["notes"]:
        console.print(Text(f"note: {visible(note)}", style="dim"))

    t = Text("Totals" + (f" of what the filter keeps ({summary['filter']})" if summary.get("filter") else "")
             + ": ", style="bold")
    t.append(totals_line(totals))
    if totals["md5_bad"]:
        t.append(f", {totals['md5_bad']} md5 mismatches", style="red")
    if totals["problems"]:
        t.append(f", {counted(totals['problems'], 'problem')}", style="red")
    console.print(t)


