"""Two runs compared: the recompiles, graph breaks and failures that went away, are new, or stayed.

Compile ids are never the key (a run numbers its frames in the order they compile: `0/0` may be
another function, or break for another reason, in the next run). A problem is "the same problem"
when its kind, cause class, function and the gist of its message (numbers taken out: `8 -> 10`
and `10 -> 12` are one size recompile) agree. Its place decides between problems with one key:
the same line first, then, when the code moved (an edit above it), the nearest line of the same
file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tlview.diagnose.classify import diagnose_failure, diagnose_graph_break, diagnose_recompile
from tlview.diagnose.costs import run_summary
from tlview.model.compile_node import CompileNode
from tlview.model.totals import totals

KINDS = ("recompile", "graph_break", "failure")
_NUMBER = re.compile(r"\d+")
_RESUME_SUFFIX = re.compile(r"_at_\d+$")  # torch_dynamo_resume_in_step_at_15: the line moves
_PLACE = re.compile(r"^(?P<file>.*?):(?P<line>\d+)$")


@dataclass(slots=True)
class Occurrence:
    """One problem at one compile id of one run."""

    kind: str  # recompile, graph_break, failure
    cause: str  # the diagnosis class
    function: str
    location: str  # the user's place (file:line)
    gist: str  # the message with numbers taken out
    why: str
    fix: str
    compile_id: str  # as shown: `0/1`, with its rank when the run has ranks: `rank 1 0/1`
    node: CompileNode | None = None  # where the explorer opens it


@dataclass(slots=True)
class Problem:
    """The occurrences of one problem in one run, or matched across two."""

    kind: str
    cause: str
    function: str
    location_before: str | None
    location_after: str | None
    why: str
    fix: str
    before: list[Occurrence] = field(default_factory=list)
    after: list[Occurrence] = field(default_factory=list)

    @property
    def location(self) -> str:
        return self.location_after or self.location_before or ""

    def as_dict(self) -> dict:
        return {"kind": self.kind, "cause": self.cause, "function": self.function,
                "location": self.location, "location_before": self.location_before,
                "location_after": self.location_after, "why": self.why, "fix": self.fix,
                "count_before": len(self.before), "count_after": len(self.after),
                "compile_ids_before": [o.compile_id for o in self.before],
                "compile_ids_after": [o.compile_id for o in self.after]}

    def line(self, verdict: str) -> str:
        """One line, for --fail-on and CI logs."""
        ids = ", ".join(o.compile_id for o in (self.after or self.before))
        return (f"{verdict} {self.kind} ({self.cause}) in {self.function} at {self.location}: {self.why}"
                f" [{ids}]")


@dataclass(slots=True)
class Comparison:
    before_name: str
    after_name: str
    gone: list[Problem]
    new: list[Problem]
    same: list[Problem]
    before_totals: dict
    after_totals: dict

    def as_dict(self) -> dict:
        return {"before": {"path": self.before_name, **self.before_totals},
                "after": {"path": self.after_name, **self.after_totals},
                "compile_seconds_change": _change(self.before_totals["compile_seconds"],
                                                  self.after_totals["compile_seconds"]),
                "gone": [p.as_dict() for p in self.gone], "new": [p.as_dict() for p in self.new],
                "same": [p.as_dict() for p in self.same]}


def occurrences(index) -> list[Occurrence]:
    """Every recompile, graph break and failure of a run, in compile order."""
    out = []
    ranked = len(index.ranks()) > 1
    for node in index.iter_nodes():
        if node.cid.frame is None and node.cid.autograd is None:
            continue
        shown = f"rank {node.rank} {node.id}" if ranked and node.rank is not None else node.id
        function = _RESUME_SUFFIX.sub("", node.function() or "?")
        here = node.location() or "?"
        # a recompile is one per compile, not one per restart attempt of it
        if (cause := node.recompile_cause) is not None and node is node.compile.head:
            d = diagnose_recompile(cause)
            out.append(Occurrence(d.kind, d.cause, function, here, _gist(d.why), d.why, d.fix, shown,
                                  node))
        for gb in node.breaks:
            d = diagnose_graph_break(gb)
            out.append(Occurrence(d.kind, d.cause, function, gb.where or here,
                                  _gist(gb.detail or gb.reason), d.why, d.fix, shown, node))
        if (failure := node.failure) is not None:
            d = diagnose_failure(failure.fail_type, failure.fail_reason)
            out.append(Occurrence(d.kind, d.cause, function, here, _gist(failure.fail_type or d.why),
                                  d.why, d.fix, shown, node))
    return out


def problems(index) -> list[Problem]:
    """A run's problems, each with its occurrences (for --fail-on on one run)."""
    return [Problem(o[0].kind, o[0].cause, o[0].function, None, o[0].location, o[0].why, o[0].fix,
                    after=o) for o in _grouped(occurrences(index)).values()]


def compare(before, after, before_name: str = "before", after_name: str = "after") -> Comparison:
    """Match the problems of two indexes (see the module's docstring)."""
    old = _grouped(occurrences(before))
    new = _grouped(occurrences(after))
    gone, added, same = [], [], []
    for key in [k for k in old if k in new]:  # the same line
        same.append(_matched(old.pop(key), new.pop(key)))
    for key in list(old):  # moved: the nearest line of the same file, same problem otherwise
        candidates = [k for k in new if k[:4] == key[:4] and _file(k[4]) == _file(key[4])]
        if candidates:
            nearest = min(candidates, key=lambda k: abs(_line(k[4]) - _line(key[4])))
            same.append(_matched(old.pop(key), new.pop(nearest)))
    for found in old.values():
        o = found[0]
        gone.append(Problem(o.kind, o.cause, o.function, o.location, None, o.why, o.fix, before=found))
    for found in new.values():
        o = found[0]
        added.append(Problem(o.kind, o.cause, o.function, None, o.location, o.why, o.fix, after=found))
    order = {kind: i for i, kind in enumerate(KINDS)}
    for group in (gone, added, same):
        group.sort(key=lambda p: (order.get(p.kind, 9), p.function, p.location))
    return Comparison(before_name, after_name, gone, added, same, _run_totals(before),
                      _run_totals(after))


def _grouped(found: list[Occurrence]) -> dict[tuple, list[Occurrence]]:
    groups: dict[tuple, list[Occurrence]] = {}
    for o in found:
        groups.setdefault((o.kind, o.cause, o.function, o.gist, o.location), []).append(o)
    return groups


def _matched(before: list[Occurrence], after: list[Occurrence]) -> Problem:
    o = after[0]
    return Problem(o.kind, o.cause, o.function, before[0].location, o.location, o.why, o.fix,
                   before=before, after=after)


def _gist(text: str) -> str:
    return _NUMBER.sub("#", text.split("\n", 1)[0].strip())


def _file(place: str) -> str:
    m = _PLACE.match(place)
    return m.group("file") if m else place


def _line(place: str) -> int:
    m = _PLACE.match(place)
    return int(m.group("line")) if m else 0


def _run_totals(index) -> dict:
    t = totals(index)
    return {"compile_ids": t.compile_ids, "compiles": t.compiles, "recompiles": t.recompiles,
            "graph_breaks": t.graph_breaks, "errors": t.errors,
            "compile_seconds": run_summary(index)["total_compile_seconds"]}


def _change(before: float | None, after: float | None) -> float | None:
    if before is None or after is None:
        return None
    return round(after - before, 3)
