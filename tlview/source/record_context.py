"""Which compile id a record belongs to: its rank and compile-id fields, as a small context code.

A mixin of TraceFile (its sink hands out the codes). The context sits at the end of an envelope
(`}, "frame_id": 0, ..., "has_payload": "…"}`): a tail seen before gives its code with no JSON
parsing; the rank comes from the file name when it has one (one file, one process).
"""

from __future__ import annotations

import orjson

CONTEXT_KEYS = frozenset(
    {"rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "has_payload",
     "subgraph_name", "severity", "timestamp", "pathname", "thread"}
)


class RecordContexts:
    """Context codes for a TraceFile's records (see the module's docstring)."""

    def _context_from_tail(self, key: bytes) -> int | None:
        text = key.rstrip(b" ,}\r")
        fields = loads_object(b"{" + text + b"}") if text else {}
        if fields is None or not fields.keys() <= CONTEXT_KEYS:
            return None  # not a context tail (e.g. a `stack` field): parse the whole record
        ctx = self._context(fields)
        self._tail_cache[key] = ctx
        return ctx

    def _context(self, fields: dict) -> int:
        get = fields.get
        key = (get("rank"), get("compiled_autograd_id"), get("frame_id"), get("frame_compile_id"),
               get("attempt"))
        try:
            ctx = self._context_cache.get(key)
        except TypeError:  # unhashable values (a list where a number belongs)
            ctx, key = None, None
        if ctx is None:
            ctx = self.sink.context_code(self, self._rank_of(key[0] if key else get("rank")),
                                         (get("compiled_autograd_id"), get("frame_id"),
                                          get("frame_compile_id"), get("attempt")))
            if key is not None:
                self._context_cache[key] = ctx
        return ctx

    def _rank_of(self, rank) -> int | None:
        if not isinstance(rank, int) or isinstance(rank, bool):
            rank = None
        if self.rank_from_name is not None:
            # One file is one process: the name's rank holds for all its records. Records that say
            # otherwise were copied from another rank's file (tlparse also goes by the name).
            if rank is not None and rank != self.rank_from_name and not self.rank_from_record:
                self.rank_from_record = True
                self.sink.on_problem(self, self.scanned_to, "rank mismatch",
                                     f"records say rank {rank}, the file name says rank "
                                     f"{self.rank_from_name}: going by the file name")
            return self.rank_from_name
        if rank is not None and not self.rank_from_record:
            self.rank = rank  # a process that logged before init_process_group: no rank in its name
            self.rank_from_record = True
        return rank if rank is not None else self.rank


def loads_object(data: bytes) -> dict | None:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and value else None
