"""The perf problems of a run as --report, markdown and the Perf pane list them: those alike
once, what costs time before what is informational, then the most frequent first."""

from __future__ import annotations

from tlview.domain.perf import COSTS_TIME
from tlview.report.alike import Alike, ProblemOf


def cost_order(severity: str | None, count: int) -> tuple[bool, int]:
    """Where problems said alike `count` times go in the list: sorted on this, costliest first."""
    return severity != COSTS_TIME, -count


def costliest_first(found: list[Alike[ProblemOf]]) -> list[Alike[ProblemOf]]:
    return sorted(found, key=lambda alike: cost_order(alike.first[1].get("severity"), alike.count))
