"""Problems in the input: something in a file that could not be read as it should, told with its
file and line (counted lazily: the scan does not count lines)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tlview.source.reader import IncrementalFile


@dataclass(eq=False)
class InputProblem:
    source: IncrementalFile  # the TraceFile or TextLog
    offset: int
    kind: str  # bad line, bad json, md5 mismatch, unknown string, long line, ...
    message: str
    node: object | None = None  # the compile node of the record it is in, if any
    _line: int | None = None

    @property
    def path(self) -> str:
        return self.source.name

    @property
    def line(self) -> int:
        if self._line is None:
            try:
                self._line = self.source.line_number(self.offset)
            except OSError:
                self._line = 0
        return self._line

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}: {self.message}"
