"""The frame tree as the UI shows it: groups (ranks, or processes with no rank) > frames >
compiles > attempts, filtered.

Built once from the index, then kept up to date from the index's journal of changed compiles
(`apply`): the cost of an update follows what changed, not the size of the tree. Each update says
what it added, changed and removed (a TreeDelta), so the widget touches only those nodes.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tlview.domain.compile_node import Compile, CompileNode
from tlview.domain.group import Group
from tlview.domain.places import resumed
from tlview.domain.rank_history import RankGroups
from tlview.domain.role import Role
from tlview.domain.status import Status
from tlview.domain.verdict import Kind
from tlview.views.filters import Filter


@dataclass(eq=False)
class TreeEntry:
    key: tuple  # stable: ("group", g), ("frame", g, frame key), ("cid", g, compile id)
    kind: str  # group, outside (records of no compile id), frame, compile, attempt
    group: Group
    order: tuple  # where it goes among its siblings
    node: CompileNode | None = None
    compile: Compile | None = None
    status: Status | None = None
    parent: TreeEntry | None = None
    children: list[TreeEntry] = field(default_factory=list)
    compile_ids: int = 0  # compile ids at or below this entry (shown)
    frame_compiles: list[Compile] = field(default_factory=list)  # a frame's compiles, shown or not
    label: str = ""  # a group's: `rank 3`, or `process 11055 · its file · its start`

    @property
    def rank(self) -> int | None:
        return self.group.rank

    @property
    def title(self) -> str:
        """What a frame or group entry is called; a compile id's own id."""
        if self.kind == "group":
            return self.label
        if self.kind == "frame":
            return frame_title(self)
        if self.node is None:  # (an outside, compile or attempt entry is its node's)
            raise ValueError(f"a {self.kind} entry with no node")
        if self.kind == "outside":
            return outside_title(self.node)
        return f"[{self.node.id}]"

    def shows(self, kind: Kind) -> bool:
        """A stop for a jump (b/r/x/p): a compile (or Export entry) whose verdict has such a problem."""
        return self.kind in ("compile", "outside") and self.compile is not None and self.compile.verdict.has(kind)

    def compiles_below(self) -> list[TreeEntry]:
        if self.kind == "compile":
            return [self]
        return [c for child in self.children for c in child.compiles_below()]


# The semantic jumps (b/r/x/p): what each stops at, by name.
JUMPS: dict[str, Callable[[TreeEntry], bool]] = {
    "break": lambda e: e.shows(Kind.GRAPH_BREAK),
    "recompile": lambda e: e.shows(Kind.RECOMPILE),
    "error": lambda e: e.shows(Kind.FAILURE) or e.shows(Kind.FRAME_SKIPPED),  # (both are ✗ error)
    "perf": lambda e: e.shows(Kind.PERF),
}


def outside_title(node: CompileNode) -> str:
    """What a group's records of no compile id are: export's, or just loose ones."""
    exported = any(a.kind.role is Role.EXPORT for a in node.artifacts)
    return ("export" if exported else "records of no compile id") + f"  [{node.id}]"


def frame_title(entry: TreeEntry) -> str:
    """`!0 forward  model.py:12`: the frame's function and file, from its first named compile."""
    autograd, frame = entry.key[2]
    if frame is None and autograd is not None:
        return f"compiled autograd !{autograd}"
    # named by any of its compiles, also those a filter hides (a refused recompile has no name)
    named = next((n for c in list(entry.frame_compiles) for n in c.attempts if n.function()), None)
    node = named or entry.children[0].node
    if node is None:  # (a frame's entries below are its compiles': each a node's)
        raise ValueError("a frame entry with no compile below")
    location = node.location()
    where = location.rsplit("/", 1)[-1] if location else ""
    prefix = f"!{autograd} " if autograd is not None else ""
    if node.compile is not None and node.compile.verdict.export:
        return "torch.export (no Dynamo frame)"
    function = node.function() or "?"
    resumed_in = resumed(function)
    if resumed_in and where:  # torch's name for the code after a graph break: say it as a person would
        return f"{prefix}{resumed_in.function}, resumed at {where}"
    return f"{prefix}{function}  {where}".rstrip()




@dataclass
class TreeDelta:
    """What an update did: entries added (parents first), changed (labels), removed."""

    rebuilt: bool = False
    added: list[TreeEntry] = field(default_factory=list)
    changed: list[TreeEntry] = field(default_factory=list)
    removed: list[TreeEntry] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.rebuilt or self.added or self.changed or self.removed)


class TreeModel:
    """The tree of one index under one filter; `live` marks the newest compile `compiling`."""

    def __init__(self, index, flt: Filter | None = None, live: bool = False,
                 ranks: RankGroups | None = None) -> None:
        self.index = index
        self.filter = flt or Filter()
        self.live = live
        # Alike ranks (rank_history.py): the first stands for its group at the top
        # level, named by them all; the others are left out (`rank:N` shows any one of them).
        self.ranks = ranks
        self.folding = ranks if ranks is not None and ranks.folds and self.filter.rank is None else None
        self.folded = self.folding.folded_nodes() if self.folding is not None else 0
        self.rebuild()

    def rebuild(self, compiles: list[Compile] | None = None) -> None:
        """The tree of `compiles`, by default every compile the index holds."""
        self.roots: list[TreeEntry] = []
        self.by_key: dict[tuple, TreeEntry] = {}
        self.shown = 0
        self._newest: dict = {}  # group -> its newest node (live)
        self._entries: list[TreeEntry] | None = None
        self.grouped = self.index.grouped  # groups at the top level
        if compiles is None:
            # Snapshots (one C-level copy each): the indexing thread may add compiles meanwhile.
            compiles = [c for frame in list(self.index.frames.values()) for c in list(frame.compiles)]
            compiles += [n.compile for n in list(self.index.outside.values())]
        compiles.sort(key=lambda c: c.head.seq)
        self.apply(compiles, building=True)

    @property
    def hidden(self) -> int:
        """Compile ids the filter hides (not those of ranks whose group another rank stands for)."""
        return len(self.index.nodes) - self.shown - self.folded

    def stands_for_itself(self, group: Group) -> bool:
        return self.folding is None or self.folding.stands_for_itself(group.rank)

    # ---- updating ------------------------------------------------------------------------------

    def apply(self, compiles: Iterable[Compile], building: bool = False) -> TreeDelta:
        """Bring the entries of these compiles (new or changed) up to date."""
        delta = TreeDelta(rebuilt=building)
        if not building and not self.grouped and self.index.grouped:
            # A second rank or process: groups become the top level. Of what is shown and these
            # only: the rest of the index comes in later parts, so regrouping costs a part's time.
            shown = {id(e.compile): e.compile for e in self.by_key.values() if e.compile is not None}
            self.rebuild(list({**shown, **{id(c): c for c in compiles}}.values()))
            return TreeDelta(rebuilt=True)
        todo = {id(c): c for c in compiles if c.attempts}
        if self.live:
            for compile_ in [c for c in todo.values() if not c.head.is_outside]:
                for older in self._note_newest(compile_):
                    todo.setdefault(id(older), older)
        touched: dict[int, TreeEntry] = {}
        for compile_ in sorted(todo.values(), key=lambda c: c.head.seq):
            self._apply_one(compile_, delta, touched)
        # Counts and statuses follow the children: frames first, then their groups, once each.
        while touched:
            parents: dict[int, TreeEntry] = {}
            for entry in touched.values():
                self._recount(entry)
                if not building and entry not in delta.added:
                    delta.changed.append(entry)
                if entry.parent is not None:
                    parents[id(entry.parent)] = entry.parent
            touched = parents
        if delta.added or delta.removed or building:
            self._entries = None
        return delta

    def _note_newest(self, compile_: Compile) -> list[Compile]:
        """Track the newest compile per group; return the one it replaced (its status changes)."""
        newest = max(compile_.attempts, key=lambda n: n.seq)
        current = self._newest.get(compile_.group)
        if current is None or newest.seq > current.seq:
            self._newest[compile_.group] = newest
            return [current.compile] if current is not None and current.compile is not compile_ else []
        return []

    def status_of(self, compile_: Compile) -> Status:
        status = compile_.status
        if self.live and status.unfinished:
            newest = self._newest.get(compile_.group)
            if newest is not None and newest.compile is compile_:
                return Status.COMPILING  # following: a compile under way has no metrics yet
        return status

    def _apply_one(self, compile_: Compile, delta: TreeDelta, touched: dict) -> None:
        if compile_.head.is_outside:
            self._apply_outside(compile_.head, delta)
            return
        group = compile_.group
        key = ("cid", group, compile_.key)
        entry = self.by_key.get(key)
        attempts = list(compile_.attempts)
        shown = ((self.filter.rank is None or group.rank == self.filter.rank) and self.stands_for_itself(group)
                 and (not self.filter.active or any(self.filter.matches(n) for n in attempts)))
        if not shown:
            if entry is not None:
                self._remove(entry, delta, touched)
            return
        status = self.status_of(compile_)
        if entry is None:
            frame = self._frame_entry(compile_, delta)
            entry = TreeEntry(key, "compile", group, (attempts[0].seq,), attempts[0], compile_, status)
            self._insert(frame, entry, delta)
            touched[id(frame)] = frame
        elif entry.status is not status:
            entry.status = status
            delta.changed.append(entry)
        else:
            delta.changed.append(entry)  # its badges may have changed
        known = {child.key for child in entry.children}
        for node in attempts[1:]:
            child_key = ("cid", group, node.cid)
            if child_key not in known:
                self._insert(entry, TreeEntry(child_key, "attempt", group, (node.cid.attempt,), node,
                                              compile_, status), delta)
        for child in entry.children:
            if child.status is not status:
                child.status = status
                delta.changed.append(child)
        touched[id(entry.parent)] = entry.parent

    def _apply_outside(self, node: CompileNode, delta: TreeDelta) -> None:
        """A group's records of no compile id (export's): one entry, first in its group, shown
        when it holds more than the torch version and the filter keeps it (a failed export)."""
        key = ("outside", node.group)
        entry = self.by_key.get(key)
        if ((self.filter.active and not self.filter.matches(node)) or not node.outside_items()
                or not self.stands_for_itself(node.group)):
            return
        compile_ = node.compile
        if compile_ is None:  # (an Export entry's node has its compile: Index.outside_node)
            return
        status = compile_.status
        if entry is None:
            self._insert(self._group_entry(node.group, delta), TreeEntry(key, "outside", node.group, (-1,), node,
                                                                          compile_, status), delta)
        else:
            entry.status = status
            delta.changed.append(entry)

    def _group_entry(self, group: Group, delta: TreeDelta) -> TreeEntry | None:
        """The top-level entry of a rank or process (None when there is one group only)."""
        if not self.grouped:
            return None
        parent = self.by_key.get(("group", group))
        if parent is None:
            ranks = self.folding.of(group.rank) if self.folding is not None else None
            parent = TreeEntry(("group", group), "group", group, group.order(self.index.started(group)),
                               label=ranks.title() if ranks is not None else self.index.group_label(group))
            self._insert(None, parent, delta)
        return parent

    def _frame_entry(self, compile_: Compile, delta: TreeDelta) -> TreeEntry:
        group = compile_.group
        frame_key = ("frame", group, compile_.key.frame_key)
        frame = self.by_key.get(frame_key)
        if frame is None:
            parent = self._group_entry(group, delta)
            # Where the frame began, not where its first compile id shown began: a filter that
            # hides [0/0] kept [0/1] and moved its frame after frames that began later.
            first = compile_.frame.compiles[0] if compile_.frame is not None and compile_.frame.compiles else compile_
            frame = TreeEntry(frame_key, "frame", group, (first.head.seq,),
                              frame_compiles=compile_.frame.compiles if compile_.frame is not None else [])
            self._insert(parent, frame, delta)
        return frame

    def _insert(self, parent: TreeEntry | None, entry: TreeEntry, delta: TreeDelta) -> None:
        siblings = parent.children if parent is not None else self.roots
        if not siblings or siblings[-1].order <= entry.order:
            siblings.append(entry)  # the usual case: things arrive in order
        else:
            siblings.insert(bisect_right(siblings, entry.order, key=lambda s: s.order), entry)
        entry.parent = parent
        self.by_key[entry.key] = entry
        delta.added.append(entry)
        if entry.node is not None:
            self.shown += 1

    def _remove(self, entry: TreeEntry, delta: TreeDelta, touched: dict) -> None:
        parent = entry.parent
        siblings = parent.children if parent is not None else self.roots
        siblings.remove(entry)
        for gone in [entry, *entry.children]:
            self.by_key.pop(gone.key, None)
            self.shown -= gone.node is not None
        delta.removed.append(entry)
        touched.pop(id(entry), None)
        if parent is not None and not parent.children:
            self._remove(parent, delta, touched)
        elif parent is not None:
            touched[id(parent)] = parent

    @staticmethod
    def _recount(entry: TreeEntry) -> None:
        """A frame's or group's count and status follow its children."""
        if entry.kind == "frame":
            entry.compile_ids = sum(1 + len(c.children) for c in entry.children)
        else:
            entry.compile_ids = sum(c.compile_ids for c in entry.children)
        entry.status = Status.worst(c.status for c in entry.children)

    # ---- reading -------------------------------------------------------------------------------

    def walk(self):
        stack = list(reversed(self.roots))
        while stack:
            entry = stack.pop()
            yield entry
            stack.extend(reversed(entry.children))

    def compile_entries(self) -> list[TreeEntry]:
        """Compile ids and attempts, in tree order."""
        if self._entries is None:
            self._entries = [e for e in self.walk() if e.node is not None]
        return self._entries

    def newest_compile(self) -> TreeEntry | None:
        shown = [e for e in (self.by_key.get(("cid", n.group, n.compile.key)) for n in self._newest.values()) if e]

        def newest_attempt(entry: TreeEntry) -> int:
            return max(n.seq for n in entry.compile.attempts) if entry.compile is not None else -1

        return max(shown, key=newest_attempt, default=None)

    def next_matching(self, current: TreeEntry | None, predicate, step: int,
                      wrap: bool = True) -> TreeEntry | None:
        """The next (step 1) or previous (step -1) entry where `predicate` holds; past the last
        (first) one it wraps around, or, with `wrap=False`, gives None."""
        entries = self.compile_entries()
        if not entries:
            return None
        try:
            here = entries.index(current) if current is not None else -1
        except ValueError:
            here = -1
        n = len(entries)
        start = here if here >= 0 else (-1 if step > 0 else n)
        for i in range(1, n + 1):
            at = start + i * step
            if not wrap and not 0 <= at < n:
                return None
            candidate = entries[at % n]
            if predicate(candidate):
                return candidate
        return None

    def matching(self, predicate) -> list[TreeEntry]:
        """Every shown entry where `predicate` holds, in tree order (for "2 of 5")."""
        return [e for e in self.compile_entries() if predicate(e)]
