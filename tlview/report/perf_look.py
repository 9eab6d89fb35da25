"""The perf problems of a run as --report and markdown list them: those alike once, what costs
time before what is informational, then the most frequent first."""

from __future__ import annotations

from tlview.domain.perf import COSTS_TIME
from tlview.report.alike import Alike, ProblemOf


def costliest_first(found: list[Alike[ProblemOf]]) -> list[Alike[ProblemOf]]:
    return sorted(found, key=lambda alike: (alike.first[1].get("severity") != COSTS_TIME, -alike.count))
