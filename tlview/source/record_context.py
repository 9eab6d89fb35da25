"""Which compile id a record belongs to: its rank and compile-id fields, as a small context code.

An object each TraceFile owns (`context_codes`); the file's sink hands out the codes. The context
sits at the end of an envelope (`}, "frame_id": 0, ..., "has_payload": "…"}`): a tail seen before
gives its code with no JSON parsing; the rank comes from the file name when it has one (one file,
one process). The rank a file's records give is kept in the file's `rank` / `rank_from_record`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from tlview.source.trace_file import TraceFile

CONTEXT_KEYS = frozenset(
    {"rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "has_payload",
     "subgraph_name", "severity", "timestamp", "pathname", "thread"}
)

_PLAIN_TYPES = frozenset({int, type(None), type(...)})  # context values cached by value


class RecordContexts:
    """Context codes for a TraceFile's records (see the module's docstring)."""

    def __init__(self, file: TraceFile) -> None:
        self.file = file
        # an envelope's tail (`"frame_id": 0, ..., "has_payload": "`) -> its context code; the
        # scanner reads it directly (a dict lookup a record: the hot path)
        self.by_tail: dict[bytes, int] = {}
        self._by_fields: dict[tuple, int] = {}

    def from_tail(self, key: bytes, offset: int) -> int | None:
        """The context code of an envelope tail not in `by_tail` (None: not a context tail)."""
        text = key.rstrip(b" ,}\r")
        fields = loads_object(b"{" + text + b"}") if text else {}
        if fields is None or not fields.keys() <= CONTEXT_KEYS:
            return None  # not a context tail (e.g. a `stack` field): parse the whole record
        ctx = self.of_fields(fields, offset)
        self.by_tail[key] = ctx
        return ctx

    def of_fields(self, fields: dict, offset: int) -> int:
        """The context code of a record's fields (at `offset`). A field that is not there is `...`
        to the sink, which tells it from one written as null."""
        get = fields.get
        key = (get("rank", ...), get("compiled_autograd_id"), get("frame_id", ...),
               get("frame_compile_id", ...), get("attempt", ...))
        # Values other than ints are not cached: true == 1 and 1.0 == 1 as keys, and a record of
        # frame_id true must not take the code of frame 1 (nor the other way round).
        plain = _PLAIN_TYPES.issuperset(map(type, key))
        ctx = self._by_fields.get(key) if plain else None
        if ctx is None:
            file = self.file
            ctx = file.sink.context_code(file, self._rank_of(key[0], offset), key[1:], key[0], offset)
            if plain:
                self._by_fields[key] = ctx
        return ctx

    def _rank_of(self, rank: object, offset: int) -> int | None:
        if type(rank) is not int or not 0 <= rank < 1 << 64:
            rank = None  # not a rank: the file's (the sink reports it)
        file = self.file
        if file.rank_from_name is not None:
            # One file is one process: the name's rank holds for all its records. Records that say
            # otherwise were copied from another rank's file (tlparse also goes by the name).
            if rank is not None and rank != file.rank_from_name and not file.rank_from_record:
                file.rank_from_record = True
                file.sink.on_problem(file, offset, "rank mismatch",
                                     f"records say rank {rank}, the file name says rank "
                                     f"{file.rank_from_name}: going by the file name")
            return file.rank_from_name
        if rank is not None and not file.rank_from_record:
            file.rank = rank  # a process that logged before init_process_group: no rank in its name
            file.rank_from_record = True
        return rank if rank is not None else file.rank


def loads_object(data: bytes) -> dict | None:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and value else None
