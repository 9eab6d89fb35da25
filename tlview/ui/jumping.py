"""Moving in the tree by meaning: b/r/x/p to the next graph break, recompile, error or perf
problem, `'`/`"` to the next bookmark (each says where it landed, and stops once at the last
before wrapping), `t` to the first compile id begun at a time, Enter on a recompile to the compile
whose guard failed, and the panes' own jumps. The explorer owns one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tlview.diagnose.compile_times import RunTimes
from tlview.diagnose.worst import JOB, WorstProblem
from tlview.domain.compile_node import CompileNode
from tlview.domain.verdict import Kind
from tlview.textsafe import one_line
from tlview.views.tree import JUMPS, TreeEntry

if TYPE_CHECKING:
    from tlview.ui.app import TlviewApp

NAMES = {"break": "graph break", "recompile": "recompile", "error": "error", "perf": "perf problem",
         "bookmark": "bookmark"}
KEYS = {"break": ("b", "B"), "recompile": ("r", "R"), "error": ("x", "X"), "perf": ("p", "P"),
        "bookmark": ("'", '"')}  # next, previous
# the pane that tells each kind of worst problem (worst.py): why it happened and what to do
WORST_PANES: dict[str | None, str] = {JOB: "run", Kind.FRAME_SKIPPED.key: "summary", Kind.FAILURE.key: "summary",
               Kind.RECOMPILE.key: "recompiles", Kind.GRAPH_BREAK.key: "breaks", Kind.PERF.key: "perf"}


class Jumps:
    def __init__(self, app: TlviewApp) -> None:
        self.app = app
        self._stopped_at_end: tuple | None = None  # (kind, step, entry key) after "the last ... ": wrap next

    def jump(self, kind: str, step: int) -> None:
        app = self.app
        here = app.tree.entry
        is_stop = app.bookmarks.marks if kind == "bookmark" else JUMPS[kind]
        job = self.job_entry() if kind == "error" else None

        def predicate(entry: TreeEntry) -> bool:
            return entry is job or is_stop(entry)  # the job hung or died: an error too, where it parted

        stops = app.model.matching(predicate)
        name = NAMES[kind]
        if not stops and kind == "bookmark":
            app.notify("no bookmarks" + (" shown under this filter" if app.bookmarks else
                                         ": M bookmarks the selected compile id"), timeout=2)
            return
        if not stops:
            app.notify(f"no {name}s" + (" under this filter" if app.flt.active else ""), timeout=2)
            return
        if len(stops) == 1 and here is stops[0]:
            app.notify(f"{here.title} is the only {name}", timeout=2)
            return
        wrap = self._stopped_at_end == (kind, step, here.key if here else None)
        target = app.model.next_matching(here, predicate, step, wrap=wrap)
        if target is None:  # past the last one: say so once, wrap on the next press
            self._stopped_at_end = (kind, step, here.key if here else None)
            edge, again = ("last", "first") if step > 0 else ("first", "last")
            key = KEYS[kind][0 if step > 0 else 1]
            app.notify(f"that was the {edge} {name}: {key} again goes to the {again}", timeout=3)
            return
        self._stopped_at_end = None
        self._go_to(target)
        if target is job and app.job_verdict is not None:
            app.detail.open("run")
            app.notify(f"{name} {stops.index(target) + 1} of {len(stops)}: {app.job_verdict.said}", timeout=3,
                       markup=False)
            return
        app.notify(f"{name} {stops.index(target) + 1} of {len(stops)}: {target.title}", timeout=1.5)

    def to_time(self, times: RunTimes, offset_s: float) -> None:
        """`t`: to the first compile id the tree shows that began at or after `offset_s`."""
        app = self.app
        shown = app.model.by_key
        moment = times.first_at_or_after(offset_s, lambda c: ("cid", c.group, c.key) in shown)
        at = times.clock_text(max(0.0, offset_s))
        if moment is None:
            app.notify(f"no compile id{' shown' if app.flt.active else ''} began at or after {at}", timeout=3)
            return
        entry = shown[("cid", moment.compile.group, moment.compile.key)]
        self._go_to(entry)
        app.notify(f"{entry.title} began at {times.clock_text(moment.start_s)} (+{moment.start_s:.1f}s)",
                   timeout=3, markup=False)

    def job_entry(self) -> TreeEntry | None:
        """The tree's entry where the job parted or died: the compile id its verdict names on
        its rank, else on the rank that stands for that rank's group, else that rank's first."""
        verdict = self.app.job_verdict
        if verdict is None or verdict.rank is None:
            return None
        ranks = self._ranks_for(verdict.rank)
        if (entry := self._entry_at(ranks, verdict.compile_id)) is not None:
            return entry
        # no compile id named (a rank's exception): its failed compile if one raised, else its first
        entries = [e for e in self.app.model.compile_entries() if e.rank in ranks]
        return next((e for e in entries if JUMPS["error"](e)), next(iter(entries), None))

    def _ranks_for(self, rank: int | None) -> list[int | None]:
        """The rank, and the rank that stands for its group in a folded tree."""
        groups = self.app.model.ranks
        return [rank] + ([g.rank] if rank is not None and groups is not None and (g := groups.of(rank)) else [])

    def _entry_at(self, ranks: list[int | None], compile_id: str | None) -> TreeEntry | None:
        """The tree's entry of a compile id, on the first of `ranks` that has it."""
        app = self.app
        for rank in ranks:
            node = app.index.node(rank, compile_id) if compile_id else None
            if node is not None and node.compile is not None \
                    and (entry := app.model.by_key.get(("cid", node.group, node.compile.key))):
                return entry
        return None

    def to_worst(self, worst: WorstProblem) -> None:
        """The cursor to the run's worst problem and its pane (the first screen): a recompile's
        Recompiles, a break's Graph breaks, a failure's or skipped frame's Summary."""
        node = worst.node
        entry = (self.app.model.by_key.get(("cid", node.group, node.compile.key))
                 if node is not None and node.compile is not None else None)
        if entry is None:
            entry = self._entry_at(self._ranks_for(worst.rank), worst.compile_id)
        if entry is None:
            return  # (hidden by the filter, or none named): the first screen stays
        self._go_to(entry)
        self.app.detail.open(WORST_PANES.get(worst.kind, "summary"))

    def to_job_verdict(self, quiet: bool = False) -> None:
        """The cursor to where the job parted or died, its Run pane telling why."""
        app = self.app
        verdict = app.job_verdict
        if verdict is None:
            return
        if (entry := self.job_entry()) is not None:
            self._go_to(entry)
        app.detail.open("run")
        if not quiet:
            app.notify(verdict.said, title="the job", severity="error", timeout=4, markup=False)

    def _go_to(self, target: TreeEntry) -> None:
        self.app.tree.select_key(target.key)
        self.app.screen.set_focus(self.app.tree)

    def open_entry(self, entry: TreeEntry) -> None:
        """Enter in the tree: a recompile goes to the compile whose guard failed; any other
        compile id puts the focus in its pane."""
        app = self.app
        recompile = entry.compile.verdict.recompile if entry.kind == "compile" and entry.compile else None
        target = recompile.against if recompile is not None else None
        if recompile is not None and target is not None:
            self.jump_to_node(target)
            app.notify(f"{entry.title} recompiled because a guard of [{target.id}] failed: "
                   f"{one_line(recompile.evidence.guard, 120)}", timeout=4, markup=False)
            return
        if recompile is not None and not recompile.logged:
            app.notify(f"{entry.title} recompiled, but its reason was not logged", timeout=3)
        elif recompile is not None:
            app.notify(f"{entry.title} recompiled, but the compile whose guard failed is not in "
                   "these logs", timeout=3)
        app.detail.focus_pane()

    def jump_to_node(self, node: CompileNode) -> None:
        """To `node`'s compile id in the tree (a pane's link: JumpToCompile)."""
        app = self.app
        if not app.tree.select_key(("cid", node.group, node.cid)):
            app.notify(f"[{node.id}] is hidden by the filter", severity="warning", markup=False)
            return
        app.screen.set_focus(app.tree)
