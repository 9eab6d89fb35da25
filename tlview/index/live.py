"""Following a running job, in the model: the follower's new and replaced files applied to an
index step by step (LiveIndex), and what is news in what changed (LiveEvents), told once each.

When a file is truncated, rewritten or rotated (a job re-run into the same folder), the index is
built again from the files as they are now: what the old content said cannot be taken back record
by record.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tlview.domain.compile_node import Compile, CompileNode
from tlview.domain.perf import COSTS_TIME
from tlview.domain.verdict import Kind
from tlview.index.index import Index
from tlview.source.follow import Follower

IDLE_SECONDS = 2.0  # a followed log not written for this long: its open records are whole
# What a live event can say, most urgent first.
FAILED, RECOMPILED, GRAPH_BREAK, PERF_PROBLEM = "failed", "recompiled", "graph break", "perf problem"
_URGENCY = {FAILED: 0, RECOMPILED: 1, GRAPH_BREAK: 2, PERF_PROBLEM: 3}


@dataclass
class LiveUpdate:
    bytes_read: int = 0
    new_files: list[str] = field(default_factory=list)
    rebuilt: bool = False  # `index` is a new object
    messages: list[str] = field(default_factory=list)
    waiting: str = ""


class LiveIndex:
    """`ended` says when the input will not grow any more (a pipe closed, a job exited)."""

    def __init__(self, path: str, force_polling: bool = False, poll_interval: float = 1.0,
                 kind: str | None = None, verify_md5: bool = False,
                 ended: Callable[[], bool] = lambda: False, name: str | None = None) -> None:
        self.follower = Follower(path, force_polling, poll_interval, kind, name)
        self.verify_md5 = verify_md5
        self.ended = ended
        self.index = Index(verify_md5=verify_md5, following=True)
        self._grew_at = time.monotonic()
        self._idle_closed = False

    def step(self, limit: int | None = None, read: bool = True) -> LiveUpdate:
        """Take in what changed on disk: new files, replaced files, appended bytes (with `read`)."""
        update = LiveUpdate()
        sizes = {s.path: s.scanned_to for s in self.index.sources}
        changes = self.follower.sync(sizes)
        update.waiting = changes.waiting
        for path in changes.retired:
            update.messages.append(f"{path} is a followed log renamed away (rotated): its run is "
                                   "over, not read")
        if changes.replaced or changes.removed:
            # What the old content said cannot be taken back record by record: index again.
            update.rebuilt = True
            for path in changes.replaced:
                update.messages.append(f"{path} was truncated or replaced: indexed again")
            for path in changes.removed:
                update.messages.append(f"{path} was deleted or renamed: its records are gone")
            self.index.close()
            notes = self.index.notes
            self.index = Index(verify_md5=self.verify_md5, following=True)
            self.index.notes.extend(notes + update.messages)
            for known in self.follower.known.values():
                self.index.add_log(known.log)
        for log in changes.new_logs:
            self.index.add_log(log)
            update.new_files.append(log.path)
        if read:
            update.bytes_read = self.index.refresh(limit)
        if self.index.unreadable and not update.waiting:
            path, why = next(iter(self.index.unreadable.items()))
            update.waiting = f"{path}: cannot be read ({why}): following again once it can be"
        if update.bytes_read or update.new_files or update.rebuilt:
            self._grew_at, self._idle_closed = time.monotonic(), False
        return update

    def close_idle(self, idle: float | None = None) -> bool:
        """Nothing was written for `idle` seconds: the records still open in text logs are whole
        (a job's last line has no successor to end it), so close them; a later line starts a new
        record. True if that happened."""
        idle = IDLE_SECONDS if idle is None else idle
        if self._idle_closed or time.monotonic() - self._grew_at < idle:
            return False
        self._idle_closed = True
        return self.index.close_text_records()

    def catch_up(self) -> None:
        """Read everything there is now (the end of a test, or before a headless report)."""
        while self.step().bytes_read:
            pass

    def finish(self) -> None:
        """The writers are done: close the last open records."""
        self.index.finish()


@dataclass(frozen=True)
class LiveEvent:
    """News of one compile: it failed, recompiled, broke, has a perf problem that costs time (one
    event may say several)."""

    node: CompileNode  # the compile's first attempt
    what: tuple[str, ...]

    @property
    def title(self) -> str:
        return " + ".join(self.what)

    @property
    def severity(self) -> str:
        return "error" if FAILED in self.what else "warning"

    @property
    def message(self) -> str:
        """`[0/1] 0/0: n == 2`: the first reason, else the function (what happened is the title,
        said before it: not said again)."""
        compile_ = self.node.compile  # (the head of the compile the event is of: never None)
        recompile = compile_.verdict.recompile if compile_ is not None else None
        detail = (recompile.evidence.summary if RECOMPILED in self.what and recompile is not None
                  and recompile.logged else self.node.function() or "")
        return f"[{self.node.id}] {detail}"


_NEWS = ((Kind.FAILURE, FAILED), (Kind.RECOMPILE, RECOMPILED), (Kind.GRAPH_BREAK, GRAPH_BREAK))


def news_of(compile_: Compile) -> list[str]:
    """What a compile has to tell: its verdict's kinds of problem. A recompile under way waits for
    its reason (a trace writes it after the compile id's first records) to be told with it."""
    verdict = compile_.verdict
    recompile = verdict.recompile
    waiting = recompile is not None and not recompile.logged and verdict.status.unfinished
    news = [what for kind, what in _NEWS if verdict.has(kind) and not (kind is Kind.RECOMPILE and waiting)]
    # a perf problem that costs time is news; an informational one (a fallback kernel) is not
    if any(p.severity == COSTS_TIME for p in verdict.of(Kind.PERF)):
        news.append(PERF_PROBLEM)
    return news


class LiveEvents:
    """Which news has been told. A compile id often shows up before its reason does: each
    (compile, event) is told once, when it is first true."""

    def __init__(self) -> None:
        self._told: dict[tuple, set[str]] = {}
        self._seen: set[tuple] = set()

    def take(self, compiles: Iterable[Compile], tell: bool) -> tuple[list[LiveEvent], int]:
        """(events to tell, compile ids seen for the first time) in these changed compiles. With
        `tell` False (catching up, or after a rebuild) the news is noted but not told."""
        events = []
        new_ids = 0
        for compile_ in sorted((c for c in compiles if c.attempts), key=lambda c: c.head.seq):
            for node in compile_.attempts:
                key = (node.group, node.cid)
                if key not in self._seen:
                    self._seen.add(key)
                    new_ids += 1
            told = self._told.setdefault((compile_.group, compile_.key), set())
            fresh = [what for what in news_of(compile_) if what not in told]
            told.update(fresh)
            if fresh and tell:
                events.append(LiveEvent(compile_.head, tuple(fresh)))
        events.sort(key=lambda e: min(_URGENCY[w] for w in e.what))
        return events, new_ids
