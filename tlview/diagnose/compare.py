"""Two runs compared: the recompiles, graph breaks and failures that went away, are new, or stayed.

Compile ids are never the key (a run numbers its frames in the order they compile: `0/0` may be
another function, or break for another reason, in the next run). A problem of the verdict is "the
same problem" when its kind, cause class, the user's function (a resume function counts as its
parent: code that moved across a new graph break is still the same function) and the gist of its
message (numbers taken out: `8 -> 10` and `10 -> 12` are one size recompile) agree. Its place
decides between problems with one key: the place after the file's consistent shift of lines (the
shift most of its compiled functions moved by), the nearest first. A file renamed or moved keeps
its problems when it holds the same functions, and the pair says so.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from tlview.diagnose.classify import fix_for
from tlview.diagnose.costs import run_summary
from tlview.domain.places import resumed, split_place
from tlview.domain.totals import totals
from tlview.domain.verdict import CompileProblem, Kind

KINDS = tuple(kind.key for kind in Kind)
_NUMBER = re.compile(r"\d+")


@dataclass(slots=True)
class Occurrence:
    """One problem at one compile id of one run."""

    kind: str  # recompile, graph_break, restart, failure
    cause: str  # the cause class
    function: str  # the user's function
    location: str  # the user's place (file:line)
    gist: str  # the message with numbers taken out
    why: str
    fix: str
    compile_id: str  # as shown: `0/1`, with its rank when the run has ranks: `rank 1 0/1`
    node: object | None = None  # where the explorer opens it
    resumed: bool = False  # found in the code after a graph break (a resume function)
    counted_as: str = ""  # the total it counts in (the verdict's: CompileProblem.counted_as)

    @property
    def file(self) -> str:
        return split_place(self.location)[0]

    @property
    def line(self) -> int:
        return split_place(self.location)[1] or 0


@dataclass(slots=True)
class ComparedProblem:
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
    renamed: bool = False  # its file has another name (or folder) in the second run

    @property
    def counted_as(self) -> str:
        """The total its occurrences count in (the verdict's word: `graph_breaks`)."""
        return (self.after or self.before)[0].counted_as

    @property
    def location(self) -> str:
        return self.location_after or self.location_before or ""

    @property
    def noun(self) -> str:
        """Its kind in words: `graph break`."""
        return next(kind.noun for kind in Kind if kind.key == self.kind)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "cause": self.cause, "function": self.function,
                "location": self.location, "location_before": self.location_before,
                "location_after": self.location_after, "why": self.why, "fix": self.fix,
                "file_renamed": self.renamed,
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
    gone: list[ComparedProblem]
    new: list[ComparedProblem]
    same: list[ComparedProblem]
    before_totals: dict
    after_totals: dict

    def count_changes(self) -> list[tuple[str, int, int]]:
        """(what, before, after) of each count the report's table has, failures first (what is
        looked for first), then the verdict's other kinds and the compile ids: the compare
        view's totals line."""
        kinds = sorted(Kind, key=lambda kind: kind is not Kind.FAILURE)
        counts = [(kind.plural, kind.word) for kind in kinds
                  if kind.said_when_none or self.before_totals[kind.word] or self.after_totals[kind.word]]
        counts += [("compile ids", "compile_ids")]
        return [(what, self.before_totals[key], self.after_totals[key]) for what, key in counts]

    @property
    def compile_seconds_change(self) -> float | None:
        return _change(self.before_totals["compile_seconds"], self.after_totals["compile_seconds"])

    def as_dict(self) -> dict:
        return {"before": {"path": self.before_name, **self.before_totals},
                "after": {"path": self.after_name, **self.after_totals},
                "compile_seconds_change": self.compile_seconds_change,
                "gone": [p.as_dict() for p in self.gone], "new": [p.as_dict() for p in self.new],
                "same": [p.as_dict() for p in self.same]}


def occurrences(index, keep=None, primary=True) -> list[Occurrence]:
    """Every problem to act on of a run (the verdicts' primary problems; all of them with
    `primary=False`), in compile order; with `keep`, of the compile ids it keeps (a filter, a rank)."""
    out = []
    ranked = len(index.ranks()) > 1
    nodes = [*index.outside.values(), *index.iter_nodes()]
    for compile_ in dict.fromkeys(n.compile for n in nodes if keep is None or keep(n)):
        for problem in compile_.verdict.owned_by(compile_):  # (an export's failure: once, at its entry)
            if problem.primary or not primary:
                out.append(_occurrence(problem, ranked))
    return out


def _occurrence(problem: CompileProblem, ranked: bool) -> Occurrence:
    node = problem.node
    shown = f"rank {node.rank} {node.id}" if ranked and node.rank is not None else node.id
    if node.is_outside:
        shown = f"export ({shown})" if shown != node.id else "export"
    return Occurrence(problem.kind.key, problem.cause, problem.function or "?", problem.user_location or "?",
                      _gist(problem.message or problem.why), problem.why, fix_for(problem), shown, node,
                      problem.resumed_at is not None, problem.counted_as)


def problems(index, keep=None) -> list[ComparedProblem]:
    """Every problem of a run, each with its occurrences (for --fail-on on one run: what the
    totals count)."""
    return [ComparedProblem(o[0].kind, o[0].cause, o[0].function, None, o[0].location, o[0].why, o[0].fix,
                    after=o) for o in _grouped(occurrences(index, keep, primary=False)).values()]


def compare(before, after, before_name: str = "before", after_name: str = "after", keep=None) -> Comparison:
    """Match the problems of two indexes (see the module's docstring)."""
    old = _grouped(occurrences(before, keep))
    new = _grouped(occurrences(after, keep))
    files, shifts = _file_map(before, after)
    candidates = []
    for k_old, found_old in old.items():
        o = found_old[0]
        mapped = files.get(o.file, o.file)
        for k_new, found_new in new.items():
            if k_new[:4] != k_old[:4]:
                continue
            n = found_new[0]
            other_file = int(n.file != mapped)
            distance = abs(n.line - (o.line + shifts.get(o.file, 0)))
            # (equally near: the one on the same side of a graph break)
            candidates.append(((other_file, distance, n.resumed != o.resumed, o.line), k_old, k_new))
    gone, added, same = [], [], []
    for _, k_old, k_new in sorted(candidates, key=lambda c: c[0]):
        if k_old in old and k_new in new:
            before_found, after_found = old.pop(k_old), new.pop(k_new)
            o = after_found[0]
            same.append(ComparedProblem(o.kind, o.cause, o.function, before_found[0].location, o.location, o.why,
                                o.fix, before_found, after_found,
                                renamed=before_found[0].file != o.file))
    for found in old.values():
        o = found[0]
        gone.append(ComparedProblem(o.kind, o.cause, o.function, o.location, None, o.why, o.fix, before=found))
    for found in new.values():
        o = found[0]
        added.append(ComparedProblem(o.kind, o.cause, o.function, None, o.location, o.why, o.fix, after=found))
    order = {kind: i for i, kind in enumerate(KINDS)}
    for group in (gone, added, same):
        group.sort(key=lambda p: (order.get(p.kind, 9), p.function, p.location))
    return Comparison(before_name, after_name, gone, added, same, _run_totals(before, keep),
                      _run_totals(after, keep))


def _file_map(before, after) -> tuple[dict[str, str], dict[str, int]]:
    """Which file of the second run each file of the first is (itself, or the new file that holds
    the most of its functions), and the lines its code moved by (the shift most of its compiled
    functions agree on)."""
    old, new = _functions_by_file(before), _functions_by_file(after)
    files = {f: f for f in old if f in new}
    fresh = [g for g in new if g not in old]
    for f in (f for f in old if f not in new):
        best = max(fresh, key=lambda g: len(old[f].keys() & new[g].keys()), default=None)
        if best is not None and old[f].keys() & new[best].keys():
            files[f] = best
    shifts = {}
    for f, g in files.items():
        moves = Counter(new[g][fn] - old[f][fn] for fn in old[f].keys() & new[g].keys())
        if moves:
            shifts[f] = moves.most_common(1)[0][0]
    return files, shifts


def _functions_by_file(index) -> dict[str, dict[str, int]]:
    """{file: {function: its line}} of every compiled frame that is the user's own function."""
    out: dict[str, dict[str, int]] = {}
    for node in index.iter_nodes():
        function, location = node.function(), node.location()
        if not function or not location or resumed(function):
            continue
        path, line = split_place(location)
        if line is not None:
            out.setdefault(path, {}).setdefault(function, line)
    return out


def _grouped(found: list[Occurrence]) -> dict[tuple, list[Occurrence]]:
    groups: dict[tuple, list[Occurrence]] = {}
    for o in found:
        groups.setdefault((o.kind, o.cause, o.function, o.gist, o.location), []).append(o)
    return groups


def _gist(text: str) -> str:
    return _NUMBER.sub("#", text.split("\n", 1)[0].strip())


def _run_totals(index, keep=None) -> dict:
    t = totals(index, keep=keep)
    return {"compile_ids": t.compile_ids, "compiles": t.compiles, "recompiles": t.recompiles,
            "graph_breaks": t.graph_breaks, "restarts": t.restarts, "errors": t.errors,
            "skipped_frames": t.skipped_frames, "graph_breaks_by_design": t.graph_breaks_by_design, "perf": t.perf,
            "compile_seconds": run_summary(index)["total_compile_seconds"]}


def _change(before: float | None, after: float | None) -> float | None:
    if before is None or after is None:
        return None
    return round(after - before, 3)
