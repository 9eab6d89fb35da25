"""Rank numbers as runs (`0-1022,1024`): how every list of ranks is printed. Re-exported by
report/rich_text.py (the domain's own modules use it from here: rich_text imports the tree)."""

from __future__ import annotations

from collections.abc import Iterable


def rank_runs(ranks: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted ranks as runs of consecutive numbers: [0, 1, 2, 5] -> [(0, 2), (5, 5)]."""
    runs: list[list[int]] = []
    for rank in sorted(ranks):
        if runs and rank == runs[-1][1] + 1:
            runs[-1][1] = rank
        else:
            runs.append([rank, rank])
    return [(a, b) for a, b in runs]


def joined_runs(runs: list[tuple[int, int]]) -> str:
    """`0-2,5`."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def ranks_of_runs(said: str) -> list[int]:
    """`0-2,5` -> [0, 1, 2, 5]: what joined_runs wrote, read back."""
    ranks: list[int] = []
    for run in filter(None, said.split(",")):
        first, _, last = run.partition("-")
        ranks.extend(range(int(first), int(last or first) + 1))
    return ranks


def ranks_text(ranks: Iterable[int]) -> str:
    """`ranks 0-3,8` (runs joined); `5,000 ranks (0-4999)` when there are many runs."""
    ordered = sorted(ranks)
    runs = rank_runs(ordered)
    if len(runs) > 6:
        return f"{len(ordered):,} ranks ({ordered[0]}-{ordered[-1]})"
    return f"rank{'s' if len(ordered) != 1 else ''} {joined_runs(runs)}"


def whose(rank: int | None = None, process: int | None = None) -> str:
    """`rank 1`, `process 11055`, or "" (one process, no rank)."""
    return f"rank {rank}" if rank is not None else (f"process {process}" if process is not None else "")


def ref(cid: str, rank: int | None = None, process: int | None = None) -> str:
    """A compile id as a line names it: `[0/1]`, with its rank or process in a run of several
    (`[0/1] rank 1`): compile ids of different ranks are unrelated."""
    return f"[{cid}] {whose(rank, process)}".rstrip()
