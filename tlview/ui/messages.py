"""Messages between the UI's widgets."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class JumpToCompile(Message):
    """Select the tree entry with this key (a recompile reason names the compile it came from)."""

    key: tuple


@dataclass
class IndexProgress(Message):
    """The indexing worker read more: `done` of `total` bytes."""

    done: int
    total: int
    finished: bool = False

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgress) and not message.finished
