"""What a compile's status is, and how it looks: one word, one symbol (readable without colour), a
severity (the worst status of a frame or rank is its own), and a rich style.

Decided by the verdict (verdict.py), from tlparse's rule (`types.rs`: metrics with a fail_type ->
error; else no graph ops -> empty; else restart reasons -> break; else ok; no metrics -> missing),
with a compile that broke the graph without a restart a break too. While following, the newest
compile that has no metrics yet is `compiling`, not missing. A compile only TORCH_LOGS text tells
of, whose end no logged category shows, is `unlogged`.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class Status(Enum):
    OK = ("ok", "✓", 0, "green", "compiled")
    EMPTY = ("empty", "○", 1, "dim", "no graph ops")
    COMPILING = ("compiling", "…", 2, "cyan", "live, no metrics yet")
    MISSING = ("missing", "?", 2, "magenta", "no metrics")
    # TORCH_LOGS text without the categories that tell a compile's end (dynamo, graph_code, guards):
    # nothing went wrong that was logged; "missing" read as a compile that died.
    UNLOGGED = ("unlogged", "·", 0, "dim", "text only: its end was not logged")
    BREAK = ("break", "◐", 3, "yellow", "broke the graph")
    RESTART = ("restart", "◑", 3, "yellow", "restarted, not after a known graph break")
    ERROR = ("error", "✗", 4, "bold red", "failed")

    def __init__(self, word: str, symbol: str, severity: int, style: str, meaning: str) -> None:
        self.word = word
        self.symbol = symbol
        self.severity = severity
        self.style = style
        self.meaning = meaning

    @property
    def label(self) -> str:
        """`✗ error`: symbol and word."""
        return f"{self.symbol} {self.word}"

    @property
    def unfinished(self) -> bool:
        """No sign that the compile finished (while following: the one under way)."""
        return self in (Status.MISSING, Status.UNLOGGED)

    @classmethod
    def of_word(cls, word: str) -> Status:
        return _BY_WORD[word]

    @staticmethod
    def worst(statuses: Iterable[Status | None]) -> Status | None:
        worst = None
        for status in statuses:
            if status is not None and (worst is None or status.severity > worst.severity):
                worst = status
        return worst

    def __str__(self) -> str:
        return self.word


_BY_WORD = {s.word: s for s in Status}
