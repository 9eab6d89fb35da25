"""A record's verified md5 (trace_records.verified_md5, what makes payloads of many ranks equal
without reading them) is what its envelope line says, whether the scan kept it or the line is
read again; a file with a wrong payload gives none."""

from __future__ import annotations

import hashlib
import re

import pytest
from conftest import CORPUS

from tlview.index import indexing
from tlview.index.indexing import open_index

REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))
NAME = "dedicated_log_torch_trace_x.log"
EMPTY_MD5 = hashlib.md5(b"").hexdigest().encode()


def _said_by_the_line(source, rec: int) -> str | None:
    """The md5 as read from the record's envelope line on disk (the way with no scan's help)."""
    line, _, _ = source.records.envelope(rec)
    at = line.rfind(b'"has_payload": "')
    return line[at + 16:at + 48].decode("ascii", "replace") if at >= 0 and line[at + 48:at + 49] == b'"' else None


def _records(data: bytes) -> list[bytes]:
    return [r for r in re.split(rb"(?m)^(?=V\d{4} )", data) if r]


def _check_every_record(index) -> int:
    kept = 0
    for source in index.sources:
        kept += len(source.payload_md5s)
        for rec in range(len(source.offsets)):
            assert source.verified_md5(rec) == _said_by_the_line(source, rec), (source.path, rec)
    return kept


@pytest.mark.parametrize("run", ["recompiles", "model", "distributed", "dynamic_shapes"])
def test_the_md5_the_scan_keeps_is_the_one_its_line_says(run):
    index = open_index(str(CORPUS / run / "trace"), verify_md5=True, parallel_ok=False)
    assert _check_every_record(index) > 0  # the scan kept some (no read of their lines)


def test_records_glued_on_one_line_each_say_their_own_md5(tmp_path):
    """Two records on one line (a writer lost a newline), the first of an empty payload: each
    one's md5, kept or read back, is what its own envelope (cut where the next begins) says."""
    records = _records(REAL.read_bytes())
    at = next(i for i, r in enumerate(records) if b'"artifact"' in r[:300] and b"has_payload" in r[:400])
    first = re.sub(rb'"has_payload": "[0-9a-f]{32}"', b'"has_payload": "' + EMPTY_MD5 + b'"',
                   records[at].split(b"\n", 1)[0])
    (tmp_path / NAME).write_bytes(b"".join(records[:at]) + first + b"".join(records[at:]))
    index = open_index(str(tmp_path), verify_md5=True, parallel_ok=False)
    assert any(p.kind == "glued records" for p in index.problems)
    assert index.sources[0].md5_bad == 0
    _check_every_record(index)


def test_a_wrong_payload_makes_every_md5_unverified(tmp_path):
    """One payload edited: no md5 of the file is trusted (equal md5s no longer mean equal text)."""
    records = _records(REAL.read_bytes())
    at = next(i for i, r in enumerate(records) if b'"artifact"' in r[:300] and b"has_payload" in r[:400])
    head, payload = records[at].split(b"\n", 1)
    records[at] = head + b"\n" + payload.replace(b"\t", b"\tZ", 1)
    (tmp_path / NAME).write_bytes(b"".join(records))
    index = open_index(str(tmp_path), verify_md5=True, parallel_ok=False)
    source = index.sources[0]
    assert source.md5_bad == 1
    assert source.payload_md5s  # kept, but not trusted
    assert all(source.verified_md5(rec) is None for rec in range(len(source.offsets)))


def test_md5s_kept_in_a_part_indexed_elsewhere_name_the_same_records(tmp_path, monkeypatch):
    """A file indexed in ranges by other processes: the md5s their scans kept are moved to this
    file's record numbers."""
    parts = [next((CORPUS / s / "trace").glob("*.log")).read_bytes()
             for s in ("graph_breaks", "recompiles", "dynamic_shapes", "model")]
    path = tmp_path / "dedicated_log_torch_trace_big.log"
    path.write_bytes(b"".join(parts * 2))
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 1 << 20)
    monkeypatch.setenv("TLVIEW_PROCESSES", "3")
    single = open_index(str(path), verify_md5=True, parallel_ok=False)
    split = open_index(str(path), verify_md5=True, parallel_ok=True)
    assert not split.notes  # the children did their parts
    assert split.sources[0].payload_md5s == single.sources[0].payload_md5s
    assert _check_every_record(split) > 0


def test_an_md5_not_kept_is_read_from_its_line(tmp_path):
    """A CRLF file's lines end in CR: the scan keeps none of its md5s; each is read from disk."""
    data = REAL.read_bytes().replace(b"\n", b"\r\n")
    (tmp_path / NAME).write_bytes(data)
    index = open_index(str(tmp_path), verify_md5=True, parallel_ok=False)
    source = index.sources[0]
    assert source.md5_bad == 0
    assert _check_every_record(index) == 0
    assert any(source.verified_md5(rec) for rec in range(len(source.offsets)))
