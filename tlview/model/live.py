"""A live index: the follower's new and replaced files applied to an index, step by step.

When a file is truncated, rewritten or rotated (a job re-run into the same folder), the index is
built again from the files as they are now: what the old content said cannot be taken back record
by record, and an index of files being followed is small enough to rebuild.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tlview.model.index import Index
from tlview.source.follow import Follower


@dataclass
class LiveUpdate:
    bytes_read: int = 0
    new_files: list[str] = field(default_factory=list)
    rebuilt: bool = False  # `index` is a new object
    messages: list[str] = field(default_factory=list)
    waiting: str = ""


class LiveIndex:
    def __init__(self, path: str, force_polling: bool = False, poll_interval: float = 1.0,
                 kind: str | None = None, verify_md5: bool = False) -> None:
        self.follower = Follower(path, force_polling, poll_interval, kind)
        self.verify_md5 = verify_md5
        self.index = Index(verify_md5=verify_md5)

    def step(self, limit: int | None = None, read: bool = True) -> LiveUpdate:
        """Take in what changed on disk: new files, replaced files, appended bytes (with `read`)."""
        update = LiveUpdate()
        sizes = {s.path: s.scanned_to for s in self.index.sources}
        changes = self.follower.sync(sizes)
        update.waiting = changes.waiting
        if changes.replaced:
            update.rebuilt = True
            for path in changes.replaced:
                update.messages.append(f"{path} was truncated or replaced: indexed again")
            self.index.close()
            notes = self.index.notes
            self.index = Index(verify_md5=self.verify_md5)
            self.index.notes.extend(notes + update.messages)
            for known in self.follower.known.values():
                self.index.add_log(known.log)
        for log in changes.new_logs:
            self.index.add_log(log)
            update.new_files.append(log.path)
        if read:
            update.bytes_read = self.index.refresh(limit)
        return update

    def catch_up(self) -> None:
        """Read everything there is now (the end of a test, or before a headless report)."""
        while self.step().bytes_read:
            pass

    def finish(self) -> None:
        """The writers are done: close the last open records."""
        self.index.finish()
