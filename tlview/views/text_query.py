"""What the user types to search: a regular expression, as lnav and less take it, with smart case
(a query in lower case ignores case). A query that is not a valid regex is searched as the plain
text it is (`is_regex` False: the caller tells the user so, once); a compile id in brackets in it
(`[3/2]`) is always that text.

The one query of both searches: the tree's filter text (views/filters.py, and in payloads,
views/search.py) and a pane's search (ui/search.py).
"""

from __future__ import annotations

import re
from functools import lru_cache

# A compile id as tlview and torch write it, `[3/2]`, `[0/0_1]`, `[1/0] rank 2`: what a reader of
# these logs searches for most, and as a regex a class of its characters ("3", "/" or "2"), never
# what they meant (`/[3/2]` in the Run pane found every 2). Read as the text it is.
_COMPILE_ID = re.compile(r"\[\d+/\d+(?:_\d+)?\]")


class TextQuery:
    """A compiled query. Matches of no characters (`x*`, `^`) are not matches: there is nothing
    to show or count of them.

    A query that ignores case is searched in the text lowered, by a pattern that does not:
    `re.IGNORECASE` made the search of a run's payloads 2x slower (0.34 s -> 0.68 s over 31 M
    characters), lowering it as before costs what it did. (A lower-case pattern means the same in
    either: it has no capital to fold.)"""

    def __init__(self, text: str) -> None:
        self.text = text
        self.folds = text == text.lower()  # smart case
        try:
            self._pattern = re.compile(_COMPILE_ID.sub(lambda m: re.escape(m.group()), text))
            self.is_regex = True
        except (re.error, OverflowError, RecursionError):
            self._pattern = re.compile(re.escape(text))
            self.is_regex = False

    def _searched(self, text: str) -> tuple[re.Pattern[str], str]:
        """The pattern and the text it searches for `text`: lowered when the query ignores case,
        unless lowering moves characters (a few, like "İ", lower to two): then the text as it is,
        by a pattern that ignores case (slower, and rare)."""
        if not self.folds:
            return self._pattern, text
        lowered = text.lower()
        if len(lowered) == len(text):
            return self._pattern, lowered
        return re.compile(self._pattern.pattern, re.IGNORECASE), text

    def found_in(self, text: str) -> bool:
        pattern, haystack = self._searched(text)
        first = pattern.search(haystack)
        if first is None:
            return False
        return first.end() > first.start() or bool(self.spans(text))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each match in `text`, in order."""
        pattern, haystack = self._searched(text)
        return [m.span() for m in pattern.finditer(haystack) if m.end() > m.start()]

    def count(self, text: str) -> int:
        pattern, haystack = self._searched(text)
        return sum(1 for m in pattern.finditer(haystack) if m.end() > m.start())


@lru_cache(maxsize=64)
def text_query(text: str) -> TextQuery:
    """The query of `text`, compiled once (the tree's filter asks it of every compile id)."""
    return TextQuery(text)
