"""The summary as `--report` and markdown print it for many ranks: one rank stands for each group
of alike ranks (the summary's `rank_groups`: one compile history, the same collectives run and
execution order), named by its group ("[0/0] ranks 0-1022"); the ranks that it stands for are
left out of every listing, and their files are one line. The groups say which ranks they hold:
one text log of many ranks (torchrun --tee) folds as a file per rank does. `--json` keeps every
rank's data (and the groups).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from tlview.domain.rank_runs import ranks_of_runs
from tlview.report.json_types import (
    CompileEntry,
    GraphBreakGroup,
    OutsideEntry,
    RankGroupEntry,
    SourceFileEntry,
    Summary,
)
from tlview.report.rich_text import whose
from tlview.report.summary import CompileEntries, listed

# A record of one rank: a summary's (typed here) or one of tlview.diagnose's (a dict).
Ranked = TypeVar("Ranked", CompileEntry, OutsideEntry, GraphBreakGroup, dict[str, Any])


def fold(summary: Summary) -> Summary:
    """A copy of `summary` with the listings that repeat per rank folded into rank groups, when
    some ranks share a history: the files always, the compile ids when several ranks are listed
    (with `--rank`, that rank's own)."""
    groups = {g["rank"]: g for g in summary.get("rank_groups") or ()}
    if all(g["count"] == 1 for g in groups.values()):
        return summary
    listed_ranks = {rank for rank, _ in listed(summary["compiles"]) if rank is not None}
    if len(listed_ranks) < 2:  # one rank listed (`--rank`): only the files are folded
        return {**summary, "sources": _sources(summary["sources"], groups)}
    group_of: dict[int | None, int] = {rank: g["rank"] for g in groups.values() for rank in ranks_of_runs(g["ranks"])}

    def kept_one(item: Ranked) -> Ranked | None:
        stands_for = group_of.get(item.get("rank"))
        if stands_for is None:
            return item  # no rank, or none of a group
        if stands_for == item["rank"]:
            group = groups[stands_for]
            if group["count"] > 1:
                return {**item, "ranks_said": group["said"], "ranks_title": group["title"]}
            return {**item, "ranks_title": group["title"]}
        return None

    def kept(items: list[Ranked]) -> list[Ranked]:
        return [found for item in items if (found := kept_one(item)) is not None]

    compiles = summary["compiles"]  # (made as they are read: folded as they are read)
    folded: Summary = {
        **summary,
        "compiles": compiles.map(kept_one) if isinstance(compiles, CompileEntries) else kept(list(compiles)),
        "outside_compiles": kept(summary["outside_compiles"]),
        "graph_break_summary": kept(summary["graph_break_summary"]),
        "timeline": kept(summary["timeline"]), "sources": _sources(summary["sources"], groups)}
    run = summary["run_summary"]
    folded["run_summary"] = {**run, "recompiling_frames": kept(run["recompiling_frames"]),
                             "graph_breaks": kept(run["graph_breaks"])}
    if summary.get("caches"):
        folded["caches"] = {**summary["caches"], "compiles": kept(summary["caches"]["compiles"])}
    return folded


def _sources(sources: list[SourceFileEntry], groups: dict[Any, RankGroupEntry]) -> list[SourceFileEntry]:
    """A group's trace files as one entry (at its first file's place): how many, their bytes."""
    out: list[SourceFileEntry] = []
    at: dict[int, SourceFileEntry] = {}
    for source in sources:
        group = groups.get(source.get("rank_group"))
        if source["kind"] != "trace" or group is None or group["count"] == 1:
            out.append(source)
            continue
        entry = at.get(group["rank"])
        if entry is None:
            entry = at[group["rank"]] = {**source, "files": 0, "bytes": 0, "records": 0,
                                         "ranks_said": group["said"], "ranks_title": group["title"]}
            out.append(entry)
        entry["files"] += 1
        entry["bytes"] += source["bytes"]
        entry["records"] += source["records"]
    return out


def who(item: Mapping[str, Any]) -> str:
    """`ranks 0-1022` for a rank that stands for its group, else `rank 3`, `process 11055`, ""."""
    return item.get("ranks_said") or whose(item.get("rank"), item.get("process"))


def named(item: Mapping[str, Any], key: str = "id") -> str:
    """`[0/0] ranks 0-1022`, `[1/0] rank 1023`."""
    return f"[{item[key]}] {who(item)}".rstrip()


def source_said(source: SourceFileEntry) -> str:
    """`1,023 files of ranks 0-1022 (alike ranks), the first …/rank_0.log`, or the path."""
    if source.get("files", 1) > 1:
        return (f"{source['files']:,} files of {source['ranks_said']} (alike ranks), "
                f"the first {source['path']}")
    return source["path"]
