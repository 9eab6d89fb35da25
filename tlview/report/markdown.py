"""`--report --markdown`: the report as GitHub-flavoured markdown, to paste into a bug report.

Text from the logs is made visible (textsafe: no escape codes) and kept out of markdown's way:
table cells escape `|` and backslashes, prose puts code in backticks, tracebacks go in fences
longer than any run of backticks inside them. No padding: nothing is wider than its content.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from tlview.diagnose.caches import outcome_words
from tlview.domain.verdict import Kind
from tlview.report.alike import Alike, Folding, ProblemOf, Shown, problem_key, row_key
from tlview.report.json_types import (
    CacheSummary,
    CompileEntry,
    OutsideEntry,
    SourceExcerptEntry,
    SourceFileEntry,
    Summary,
)
from tlview.report.perf_look import costliest_first
from tlview.report.rank_fold import fold, named
from tlview.report.rich_text import missing_sources_line, ref, short_path, totals_line
from tlview.report.summary import later, listed
from tlview.textsafe import one_line, visible_data, visible_name

_TICKS = re.compile(r"`+")


def markdown_report(summary: Summary) -> str:
    grouped = len(listed(summary["compiles"])) > 1
    summary = fold(summary)  # alike ranks (rank_groups): one stands for them, named by them all
    # Compile ids that say the same thing are one row, one section (alike.py), decided on the
    # plain data as the entries are read, once (summary.CompileEntries: made as they are read).
    rows: Folding[CompileEntry] = Folding(row_key)
    by_kind: dict[str, Folding[ProblemOf]] = {kind.key: Folding(problem_key) for kind in Kind}
    for entry in summary["compiles"]:
        rows.add(entry)
        _add_problems(by_kind, entry)
    for outside in summary["outside_compiles"]:
        _add_problems(by_kind, outside)
    # What is written of the compile ids is made visible as it is written, the rest whole.
    names = _Names(grouped, Shown())
    said: Summary = visible_data({**summary, "compiles": [], "outside_compiles": []})
    out = ["# torch.compile report", ""]
    out += _facts(said)
    if verdict := said.get("job_verdict"):  # what happened to the job, in one line, first
        out += [f"**{prose(verdict['said'])}**", ""]
    elif headline := said.get("headline"):  # else the worst problem (worst.py), in one line
        out += [f"**{prose(headline)}**", ""]
    if said.get("hang_summary"):  # then why
        out += ["## Why the job may hang", ""] + [f"- {prose(line)}" for line in said["hang_summary"][:30]] + [""]
    out += _sources(said["sources"])
    out += _table(rows.found, names)
    out += _caches(said.get("caches"), names.one)
    hang = set(said.get("hang_summary") or ())
    if rest := [line for line in said.get("divergence_summary", []) if line not in hang]:
        out += ["## Ranks diverge", ""] + [f"- {prose(line)}" for line in rest[:30]] + [""]
    for kind in Kind:
        found = by_kind[kind.key].found
        out += _problems_of(kind, costliest_first(found) if kind is Kind.PERF else found, names)
    if missing := missing_sources_line(visible_data(later(said.get("source_missing", [])))):
        out += [prose(missing), ""]
    return "\n".join(out).rstrip() + "\n"


class _Names:
    """How markdown names compile ids (in code spans): with their rank in a run of several."""

    def __init__(self, grouped: bool, shown: Shown) -> None:
        self.grouped, self.shown = grouped, shown

    def one(self, item: Mapping[str, Any]) -> str:
        return named(item) if self.grouped else ref(item["id"])

    def alike(self, first: Mapping[str, Any], last: Mapping[str, Any], count: int) -> str:
        """`` `[0/1]` ``, or for many alike `` `[0/1]` … `[0/99999]` ×99,999 ``."""
        shown_first = self.shown(first)
        if count == 1:
            return code(self.one(shown_first))
        return f"{code(ref(shown_first['id']))} … {code(self.one(self.shown(last)))} ×{count:,}"


def _facts(summary: Summary) -> list[str]:
    facts = [totals_line(summary["totals"])]
    if summary.get("pytorch_version"):
        facts.insert(0, f"torch {summary['pytorch_version']}")
    if summary.get("filter"):
        facts.append(f"filter: {summary['filter']}")
    return [prose(", ".join(facts)) + ".", ""]


def _sources(sources: list[SourceFileEntry]) -> list[str]:
    out = []
    for source in sources:
        said = (f"{source['files']:,} files of {source['ranks_said']} (alike ranks), the first "
                if source.get("files", 1) > 1 else "")
        out.append(f"- {source['kind']}: {prose(said)}{code(visible_name(source['path']))} "
                   f"({source['records']:,} records)")
    return [*out, ""]


def _table(rows: list[Alike[CompileEntry]], names: _Names) -> list[str]:
    """The compile ids, those alike one row."""
    if not rows:
        return []
    out = ["| compile id | status | function | location | cause |", "|---|---|---|---|---|"]
    for row in rows:
        entry = names.shown(row.first)
        causes = ", ".join(dict.fromkeys(d["cause"] for d in entry["diagnosis"]))
        out.append(f"| {names.alike(row.first, row.last, row.count)} | " + " | ".join(cell(x) for x in (
            entry["status"], entry["function"] or "", short_path(entry["location"] or ""),
            causes)) + " |")
    return [*out, ""]


def _problems_of(kind: Kind, items: list[Alike[ProblemOf]], names: _Names) -> list[str]:
    """A section per kind of problem: each problem (those alike once), why, the fix, the user's lines."""
    if not items:
        return []
    out = [f"## {kind.plural.capitalize()}", ""]
    for found in items:
        entry, p = names.shown(found.first[0]), visible_data(found.first[1])
        name = names.alike(found.first[0], found.last[0], found.count) if "id" in entry else "export"
        out.append(f"### {name} {prose(p['function'] or '')} "
                   f"({prose(short_path(p['location'] or ''))})")
        out += [""]
        if p["exception"]:
            out += [f"**Exception:** {code(p['exception'])}", ""]
        if p.get("severity"):
            out += [f"**Severity:** {prose(p['severity'])} · {code(p['cause'])}", ""]
        out += [f"**Why:** {prose(p['why'])}", ""]
        if found.count > 1:  # compile ids that say the same but for their numbers
            last = names.shown(found.last[0])
            said = code(names.one(last)) if "id" in last else "export"
            out += [f"**And {found.count - 1:,} more alike**, the last {said}: {prose(found.last[1]['why'])}", ""]
        out += [f"**Fix:** {prose(p['fix'])}", ""]
        if p.get("source"):
            out += _source_block(p["source"])
        if kind is Kind.FAILURE and (p["fail_reason"] or p["message"]):
            out += [fence(p["fail_reason"] or p["message"]), ""]
    return out


def _add_problems(by_kind: dict[str, Folding[ProblemOf]], entry: CompileEntry | OutsideEntry) -> None:
    for p in entry["verdict"]:
        if p["primary"]:
            by_kind[p["kind"]].add((entry, p))


def _source_block(source: SourceExcerptEntry) -> list[str]:
    """The user's lines at a problem as a python block; the problem's line marked by a comment."""
    lines = [f"# {short_path(visible_name(source['path']))}, line {source['line']}"]
    lines += [line["text"].rstrip() + ("  # <-- here" if line["marked"] else "") for line in source["lines"]]
    return [fence("\n".join(lines), "python"), ""]


def _caches(caches: CacheSummary | None, cid: Callable[[Mapping[str, Any]], str]) -> list[str]:
    """Hits, misses and bypasses per cache, then each compile id's lookups and the bypass reasons
    (a list: the report's one table stays the compile ids')."""
    if not caches or not caches["caches"]:
        return []
    labels = {name: c["label"] for name, c in caches["caches"].items()}
    out = ["## Caches", "", prose("; ".join(f"{c['label']}: {outcome_words(c)}"
                                            for c in caches["caches"].values())) + ".", ""]
    for entry in caches["compiles"][:50]:
        lookups = "; ".join(f"{labels.get(n, n)}: {outcome_words(c)}" for n, c in entry["caches"].items())
        out.append(f"- {code(cid(entry))} {prose(lookups)}")
    if len(caches["compiles"]) > 50:
        out.append(f"- ... {len(caches['compiles']) - 50} more compile ids")
    out += [f"- bypassed ×{b['count']} ({prose(labels.get(b['cache'], b['cache']))}): {prose(b['reason'])}"
            for b in caches["bypass_reasons"]]
    return out + [""]


def markdown_compare(comparison: dict) -> str:
    comparison = visible_data(comparison)
    before, after = comparison["before"], comparison["after"]
    out = ["# torch.compile: two runs compared", "",
           f"- before: {code(visible_name(before['path']))}", f"- after: {code(visible_name(after['path']))}", "",
           "| | before | after |", "|---|---|---|"]
    for key, label in (("compile_ids", "compile ids"), *((k.word, k.plural) for k in Kind
                                                          if k.said_when_none or before[k.word] or after[k.word]),
                       ("compile_seconds", "compile seconds")):
        out.append(f"| {label} | {before[key]} | {after[key]} |")
    out.append("")
    for group, title in (("gone", "Gone"), ("new", "New"), ("same", "Same")):
        items = comparison[group]
        out += [f"## {title} ({len(items)})", ""]
        if not items:
            out += ["(none)", ""]
            continue
        out += ["| kind | cause | function | location | before | after |", "|---|---|---|---|---|---|"]
        for p in items:
            out.append("| " + " | ".join(cell(x) for x in (
                p["kind"], p["cause"], p["function"], short_path(p["location"]),
                str(p["count_before"]), str(p["count_after"]))) + " |")
        out.append("")
        for p in items:
            out += [(f"- **{prose(p['kind'])}** in {prose(p['function'])}: {prose(p['why'])}. "
                     f"Fix: {prose(p['fix'])}")]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def cell(text) -> str:
    """A table cell: one line, markdown's own characters shown as they are (`<lambda>` is no HTML
    tag to GitHub, `__init__` no bold)."""
    return _MARKDOWN_OWN.sub(_escaped, one_line(str(text)))


# (a run of underscores inside a word makes no emphasis: `python_value` stays greppable; one at a
# word's edge can, `__init__`, and is escaped)
# `@name` pings that user where the report is pasted (GitHub): it goes in a code span, which
# mentions no one; `~` makes strike-through.
_MARKDOWN_OWN = re.compile(r"(?<![\w`])@[\w-]+|[\\`*\[\]<>#|&~]|_+")


def _escaped(m: re.Match) -> str:
    found, text = m.group(), m.string
    if found[0] == "@":
        return f"`{found}`"
    if found[0] == "_" and m.start() > 0 and m.end() < len(text) and \
            text[m.start() - 1].isalnum() and text[m.end()].isalnum():
        return found
    return "".join("\\" + c for c in found)


def prose(text) -> str:
    """Text in a paragraph or heading: markdown's own characters shown as they are."""
    return _MARKDOWN_OWN.sub(_escaped, one_line(str(text), 2000))


def code(text) -> str:
    """Inline code that holds any backticks (a longer run of them around it)."""
    text = one_line(str(text))
    ticks = "`" * (max((len(m) for m in _TICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(text: str, language: str = "") -> str:
    ticks = "`" * max(3, max((len(m) for m in _TICKS.findall(text)), default=0) + 1)
    return f"{ticks}{language}\n{text.rstrip()}\n{ticks}"
