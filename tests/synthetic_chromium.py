"""A small trace of hand-made chromium events, good and bad, written as torch writes records
(envelope, TAB-indented payload, its md5): for the tests of what bad events do."""

from __future__ import annotations

import hashlib
import json

HEAD = ('V1122 04:24:12.719000 14301 torch/_dynamo/utils.py:2350] {{"chromium_event": {{}}, "rank": 0, '
        '"frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "{md5}"}}\n')
T0 = 1795321452718921.0

# (what it is, its payload text, well formed for a timeline, well formed for a Chrome trace)
EVENTS = [
    ("dynamo begins", {"name": "dynamo", "ts": T0, "args": {"compile_id": "0/0"}, "ph": "B", "cat": "c",
                       "tid": 0, "pid": 0}, True, True),
    ("a time that is text", {"name": "a", "ts": "abc", "args": {}, "ph": "B", "cat": "c", "tid": 0,
                             "pid": 0}, False, False),
    ("a thread that is a list", {"name": "x", "ts": T0 + 1, "args": {}, "ph": "B", "cat": "c",
                                 "tid": [1], "pid": 0}, True, True),
    ("args that are a list", {"name": "i", "ts": T0 + 2, "args": [1, 2], "ph": "i", "cat": "c", "tid": 0,
                              "pid": 0, "s": "p"}, True, True),
    ("a complete event with no duration", {"name": "c", "ts": T0 + 3, "args": {}, "ph": "X", "cat": "c",
                                           "tid": 0, "pid": 0}, True, False),
    ("a list, not an event", [1, 2], False, False),
    ("a time that is NaN", {"name": "n", "ts": float("nan"), "args": {}, "ph": "i", "cat": "c",
                            "tid": 0, "pid": 0}, False, False),
    ("dynamo ends", {"name": "dynamo", "ts": T0 + 2e6, "args": {"compile_id": "0/0"}, "ph": "E",
                     "cat": "c", "tid": 0, "pid": 0}, True, True),
]


def record(event) -> bytes:
    text = json.dumps(event, indent=0)  # as torch writes a payload that is not a str
    md5 = hashlib.md5(text.encode()).hexdigest()
    return HEAD.format(md5=md5).encode() + b"".join(b"\t" + line.encode() + b"\n" for line in text.split("\n"))


def write_trace(folder) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "dedicated_log_torch_trace_rank_0_synthetic.log").write_bytes(
        b"".join(record(event) for _, event, _, _ in EVENTS))
