"""Search in what a payload pane shows, as `less` and vim do: smart case (case-insensitive unless
the query has a capital), every occurrence counted, `n`/`N` move through them in order.

Matches are counted per line (line numbers and counts, not one object per occurrence): a query
like `a` in a 100,000-line graph is a few hundred thousand hits and must stay small.
"""

from __future__ import annotations

from bisect import bisect_right

from tlview.textsafe import visible

MAX_LINE = 4000  # characters shown (and searched) per line: a 10 MB single-line payload must not stall


def display_line(line: str) -> str:
    """A payload line as the pane draws it (and as search counts it): cut, tabs expanded, safe."""
    return visible(line[:MAX_LINE].expandtabs(4))


class TextSearch:
    """The matches of `query` in `lines` (displayed forms), and which one is current."""

    def __init__(self, query: str, lines: list[str]) -> None:
        self.query = query
        self.fold = query == query.lower()  # smart case
        needle = query.lower() if self.fold else query
        self._needle = needle
        self.lines: list[int] = []  # line numbers with a match, in order
        self.first: list[int] = []  # the match number of each such line's first match
        self.total = 0
        if needle:
            for number, line in enumerate(lines):
                shown = display_line(line)
                count = (shown.lower() if self.fold else shown).count(needle)
                if count:
                    self.lines.append(number)
                    self.first.append(self.total)
                    self.total += count
        self._on_line = {line: i for i, line in enumerate(self.lines)}
        self.current = 0  # match number, 0-based

    def has_match(self, line: int) -> bool:
        return line in self._on_line

    def spans(self, line: int, shown: str) -> list[tuple[int, int, bool]]:
        """(start, end, is_current) of the matches in line `line`, drawn as `shown`."""
        at = self._on_line.get(line)
        if at is None:
            return []
        haystack = shown.lower() if self.fold else shown
        out, start, k = [], 0, 0
        while (start := haystack.find(self._needle, start)) >= 0:
            out.append((start, start + len(self._needle), self.first[at] + k == self.current))
            start += max(1, len(self._needle))
            k += 1
        return out

    def position(self) -> tuple[int, int]:
        """(line, column) of the current match, in the displayed form of its line."""
        at = bisect_right(self.first, self.current) - 1
        return self.lines[at], self.current - self.first[at]

    def column(self, shown: str, occurrence: int) -> int:
        haystack = shown.lower() if self.fold else shown
        start = -1
        for _ in range(occurrence + 1):
            start = haystack.find(self._needle, start + 1)
        return max(start, 0)

    def move(self, step: int, from_line: int | None = None) -> bool:
        """To the next (1) or previous (-1) match; from `from_line` (the view's top) on the first
        move. False when it wrapped around the end (the caller says so)."""
        if not self.total:
            return True
        if from_line is not None:  # the first match at or after the top of the view
            at = bisect_right(self.lines, from_line - 1)
            self.current = self.first[at] if at < len(self.lines) else 0
            return at < len(self.lines)
        target = self.current + step
        self.current = target % self.total
        return 0 <= target < self.total

    def describe(self) -> str:
        if not self.total:
            return f"/{self.query}: no match"
        return f"/{self.query}: match {self.current + 1:,} of {self.total:,}"
