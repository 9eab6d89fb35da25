"""The scan's fast path for chromium events (trace_file.py: their payloads hashed from the block
in hand): every payload is still checked, a wrong one still told, one the fast way cannot take
(a CR, a line that is not payload, a blank line, the end of a block) still goes the exact way."""

from __future__ import annotations

import hashlib
import re

import pytest
from conftest import CORPUS

from tlview.index.indexing import open_index
from tlview.source.payload import PayloadDecoder
from tlview.source.reader import IncrementalFile

REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))
NAME = "dedicated_log_torch_trace_x.log"
RECORDS = [r for r in re.split(rb"(?m)^(?=V\d{4} )", REAL.read_bytes()) if r]
EVENTS = [i for i, r in enumerate(RECORDS) if b'{"chromium_event": {}' in r[:200] and b"has_payload" in r[:300]]


def _decoded_md5(region: bytes) -> str:
    decoder = PayloadDecoder()
    decoder.feed(region)
    decoder.close()
    return decoder.md5


def _index(tmp_path, records):
    (tmp_path / NAME).write_bytes(b"".join(records))
    return open_index(str(tmp_path), verify_md5=True, parallel_ok=False)


# what is done to the payload of every fifth chromium event, and whether its md5 then holds
EDITS = {
    "a changed byte": (lambda region: region.replace(b'"', b"'", 1), False),
    "a CR ending each line": (lambda region: region.replace(b"\n", b"\r\n"), True),  # dropped, as tlparse
    "a line that is not payload": (lambda region: region.replace(b"\n", b"\nnot payload\n", 1), False),
    "a blank line": (lambda region: region.replace(b"\n", b"\n\n", 1), True),  # skipped, as tlparse
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_each_chromium_payload_is_checked_the_exact_way(tmp_path, edit):
    change, holds = EDITS[edit]
    records = list(RECORDS)
    edited = EVENTS[::5]
    for i in edited:
        head, region = records[i].split(b"\n", 1)
        records[i] = head + b"\n" + change(region)
        assert (_decoded_md5(change(region)) == hashlib.md5(b"").hexdigest()) is False  # (not empty)
    index = _index(tmp_path, records)
    source = index.sources[0]
    told = [p for p in index.problems if p.kind == "md5 mismatch"]
    payloads = sum(1 for r in records if b"has_payload" in r.split(b"\n", 1)[0])
    assert source.md5_ok + source.md5_bad == payloads  # every payload checked once
    assert source.md5_bad == len(told) == (0 if holds else len(edited))
    assert len(source.offsets) == len(records)


def test_chromium_records_that_span_blocks_are_whole(tmp_path, monkeypatch):
    """Blocks smaller than a record: each record's payload is checked whole where it ends."""
    monkeypatch.setattr(IncrementalFile, "block_size", 700)
    records = list(RECORDS)
    head, region = records[EVENTS[3]].split(b"\n", 1)
    records[EVENTS[3]] = head + b"\n" + region.replace(b'"', b"'", 1)  # one wrong, somewhere
    index = _index(tmp_path, records)
    source = index.sources[0]
    assert len(source.offsets) == len(records)
    assert source.md5_bad == 1 and [p.offset for p in index.problems if p.kind == "md5 mismatch"] == [
        len(b"".join(records[:EVENTS[3]]))]
    assert source.md5_ok == sum(1 for r in records if b"has_payload" in r.split(b"\n", 1)[0]) - 1
