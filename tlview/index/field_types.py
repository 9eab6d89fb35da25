"""The types of the record fields the model keeps, checked once, when a record is indexed.

torch writes these fields itself, but files get edited, cut, merged by other tools and written by
other torch versions. A field of the wrong type is a problem of its record (said, with its file
and line) and never reaches a pane, a filter or the report: text fields keep their value as text
(a failure stays a failure), numbers of the wrong type are dropped (shown as unknown).
"""

from __future__ import annotations

import math
from enum import Enum

import orjson

from tlview.source.trace_records import CONFIG_DIGEST


class Type(Enum):
    """A field's type: how a message names it, and the exact JSON types that fit it with no
    further look (a float's finiteness, a list's items, a bool, which isinstance takes for an
    int, go to _fits). Most fields are those: _fits alone was 8% of indexing 10,000 compile ids."""

    TEXT = ("text", (str,))
    COUNT = ("a whole number", (int,))
    SECONDS = ("a number of seconds", (int,))
    TEXTS = ("a list of text", ())
    FILE = ("a file name or a string-table id", (str, int))

    def __init__(self, said: str, fits_at_once: tuple) -> None:
        self.said = said
        self.fits_at_once = fits_at_once


def _fits(kind: Type, value) -> bool:
    if kind is Type.TEXT:
        return isinstance(value, str)
    if kind is Type.COUNT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is Type.SECONDS:
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value))
    if kind is Type.TEXTS:
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _as_text(value) -> str:
    """A value of the wrong type, kept as the JSON that was written."""
    try:
        return orjson.dumps(value, default=str).decode()
    except (TypeError, orjson.JSONEncodeError):
        return str(value)


def _described(value) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # nan, inf
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    kind = {dict: "an object", list: "a list", bool: "true/false", type(None): "null"}.get(type(value))
    return kind or f"the number {value}"


METRICS = {
    "co_name": Type.TEXT, "co_filename": Type.TEXT, "co_firstlineno": Type.COUNT,
    "compile_id": Type.TEXT, "cache_size": Type.COUNT, "guard_count": Type.COUNT,
    "shape_env_guard_count": Type.COUNT, "graph_op_count": Type.COUNT,
    "graph_node_count": Type.COUNT, "entire_frame_compile_time_s": Type.SECONDS,
    "backend_compile_time_s": Type.SECONDS, "inductor_compile_time_s": Type.SECONDS,
    "code_gen_time_s": Type.SECONDS, "dynamo_time_before_restart_s": Type.SECONDS,
    "fail_type": Type.TEXT, "fail_reason": Type.TEXT, "fail_user_frame_filename": Type.TEXT,
    "fail_user_frame_lineno": Type.COUNT, "restart_reasons": Type.TEXTS,
    "recompile_reason": Type.TEXT, "num_graph_breaks": Type.COUNT, "start_time": Type.SECONDS,
    "elapsed_time": Type.SECONDS,
    # where a long compile's time went, and a whole graph run without CUDA graphs (domain/perf.py)
    "compile_time_autotune_time_us": Type.COUNT, "triton_compile_time_us": Type.COUNT,
    "inductor_fx_local_cache_miss_count": Type.COUNT, "cudagraph_skip_reason": Type.TEXT,
    CONFIG_DIGEST: Type.TEXT,  # (put there by the scan: source/trace_records.py)
}
STACK_FRAME = {"filename": Type.FILE, "line": Type.COUNT, "name": Type.TEXT}


def checked(event: dict, schema: dict[str, Type], what: str) -> tuple[dict, list[str]]:
    """The schema's fields present in `event` (null ones left out), each of its type, and what
    was wrong (`compilation_metrics: fail_type is an object, not text`)."""
    kept: dict = {}
    wrong: list[str] = []
    get = event.get
    for name, kind in schema.items():
        value = get(name)
        if value is None:
            continue
        if type(value) in kind.fits_at_once or _fits(kind, value):
            kept[name] = value
            continue
        if kind is Type.TEXT:
            kept[name] = _as_text(value)
            outcome = "kept as text"
        elif kind is Type.TEXTS and isinstance(value, list):
            kept[name] = [item if isinstance(item, str) else _as_text(item) for item in value]
            outcome = "its items kept as text"
        else:
            outcome = "ignored"
        wrong.append(f"{what}: {name} is {_described(value)}, not {kind.said} ({outcome})")
    return kept, wrong
