"""Damaged input: every case finishes, says what was wrong and where, and keeps every good record."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import CORPUS, json_for, run_cli

REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))


def _records(data: bytes) -> list[bytes]:
    """Split a trace into records (envelope line + payload lines)."""
    parts = re.split(rb"(?m)^(?=V\d{4} )", data)
    return [p for p in parts if p]


@pytest.fixture(scope="module")
def original() -> dict:
    return json_for(REAL)


def _write(tmp_path: Path, data: bytes, name="dedicated_log_torch_trace_x.log") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _ids(doc):
    return [c["id"] for c in doc["compiles"]]


def test_truncated_last_record(tmp_path, original):
    data = REAL.read_bytes()
    records = _records(data)
    # cut the last record with a payload in the middle of its payload
    last = max(i for i, r in enumerate(records) if b"has_payload" in r.split(b"\n", 1)[0])
    cut = b"".join(records[:last]) + records[last][: len(records[last].split(b"\n", 1)[0]) + 20]
    doc = json_for(_write(tmp_path, cut))
    assert doc["totals"]["records"] == last + 1  # every record, the torn one included
    problems = doc["problems"]
    assert [p["kind"] for p in problems] == ["md5 mismatch"]
    assert problems[0]["line"] == cut.count(b"\n", 0, len(b"".join(records[:last]))) + 1
    assert _ids(doc) == _ids(original)[: len(_ids(doc))]


def test_garbage_and_nul_bytes_between_records(tmp_path, original, monkeypatch):
    records = _records(REAL.read_bytes())
    data = (b"".join(records[:10]) + b"garbage that is not a record\n" + b"\x00\x00\x00\x00\n"
            + b"".join(records[10:20]) + b"Vgarbage starting with V\n" + b"".join(records[20:]))
    path = _write(tmp_path, data)
    doc = json_for(path)
    assert doc["totals"]["records"] == original["totals"]["records"]
    assert _ids(doc) == _ids(original)
    bad = sorted((p["line"], p["message"]) for p in doc["problems"])
    lines = data.split(b"\n")
    assert len(bad) == 3
    assert lines[bad[0][0] - 1] == b"garbage that is not a record"
    assert lines[bad[1][0] - 1] == b"\x00\x00\x00\x00" and "NUL" in bad[1][1]
    assert lines[bad[2][0] - 1] == b"Vgarbage starting with V"
    monkeypatch.setenv("COLUMNS", "300")
    code, report = run_cli("--report", str(path))
    assert code == 0 and f"{path}:{bad[0][0]}: bad line" in report


def test_a_trace_after_a_hole_of_nul_bytes_is_read(tmp_path, original, monkeypatch):
    """A trace whose first MiB is a hole (NUL bytes: a file cut and written on, a crash before
    the data reached the disk), then its records: alone it was "not a trace" (exit 2) as its
    first 64 KiB showed no record, and next to another trace it was dropped without a word. Its
    records are read, and the hole said; a hole written as NULs (not sparse) as well."""
    data = REAL.read_bytes()
    alone = tmp_path / "alone" / "dedicated_log_torch_trace_hole.log"
    alone.parent.mkdir()
    with open(alone, "wb") as f:
        f.seek(1 << 20)  # (a real hole: nothing written there)
        f.write(data)
    doc = json_for(alone)
    assert doc["totals"]["records"] == original["totals"]["records"] and _ids(doc) == _ids(original)
    assert [p["message"] for p in doc["problems"] if "NUL" in p["message"]] == [
        "1 MiB of NUL bytes where records belong (a hole: the file was cut short or written out of order)"]
    both = tmp_path / "both"
    both.mkdir()
    _write(both, b"\0" * (1 << 20) + data, name="dedicated_log_torch_trace_rank_1_hole.log")
    _write(both, data, name="dedicated_log_torch_trace_rank_0_ok.log")
    doc = json_for(both)
    assert len(doc["sources"]) == 2
    assert doc["totals"]["records"] == 2 * original["totals"]["records"]
    assert sorted({c["rank"] for c in doc["compiles"]}) == [0, 1]
    # More NULs than are looked past: torch's own name still says it is a trace; another not.
    from tlview.source import discover

    monkeypatch.setattr(discover, "NUL_SCAN_MAX", 0)
    other = _write(both, b"\0" * (1 << 20) + data, name="other.log")
    assert discover.sniff_file(str(both / "dedicated_log_torch_trace_rank_1_hole.log"))[0] == discover.TRACE
    assert discover.sniff_file(str(other))[0] is None


def test_broken_json_metadata(tmp_path, original):
    records = _records(REAL.read_bytes())
    victim = next(i for i, r in enumerate(records) if b'"dynamo_start"' in r)
    broken = records[victim].replace(b'"dynamo_start": {', b'"dynamo_start": {{', 1)
    data = b"".join(records[:victim]) + broken + b"".join(records[victim + 1:])
    doc = json_for(_write(tmp_path, data))
    assert doc["totals"]["records"] == original["totals"]["records"] - 1
    assert [p["kind"] for p in doc["problems"]] == ["bad json"]
    assert doc["problems"][0]["line"] == data.count(b"\n", 0, len(b"".join(records[:victim]))) + 1
    assert _ids(doc) == _ids(original)
    first = doc["compiles"][0]
    assert first["location"] is not None  # the compile keeps its metrics' location


def test_md5_mismatch_is_counted_not_fatal(tmp_path, original):
    data = REAL.read_bytes()
    edited = data.replace(b"def forward(self", b"def f0rward(self", 1)
    assert edited != data
    doc = json_for(_write(tmp_path, edited))
    assert doc["totals"]["md5_bad"] == 1
    assert [p["kind"] for p in doc["problems"]] == ["md5 mismatch"]
    assert doc["totals"]["records"] == original["totals"]["records"]
    strip = lambda doc: [{k: v for k, v in c.items() if k not in ("problems", "source")} for c in doc["compiles"]]
    assert strip(doc) == strip(original)  # nothing else changed
    assert [p["kind"] for c in doc["compiles"] for p in c["problems"]] == ["md5 mismatch"]


def test_string_table_id_never_defined(tmp_path):
    records = _records(REAL.read_bytes())
    kept = [r for r in records if not r.startswith(b"V") or b'{"str": ["/home/user/job/' not in r]
    assert len(kept) == len(records) - 1
    doc = json_for(_write(tmp_path, b"".join(kept)))
    unknown = [p for p in doc["problems"] if p["kind"] == "unknown string"]
    assert len(unknown) == 1 and "string-table id 1" in unknown[0]["message"]
    assert doc["compiles"][0]["location"] == "(unknown string 1):17"


def test_text_log_with_garbage_keeps_records(tmp_path):
    text = (CORPUS / "recompiles" / "torch_logs.txt").read_bytes()
    lines = text.split(b"\n")
    damaged = b"\n".join(lines[:100] + [b"\x00\xff\xfe not utf-8", b"[rank"] + lines[100:])
    doc = json_for(_write(tmp_path, damaged, "torch_logs.txt"))
    assert len(doc["compiles"]) == 12
    assert doc["sources"][0]["lines"] == text.count(b"\n") + 2


@pytest.mark.parametrize("make, message", [
    (lambda p: (p / "empty.log").write_bytes(b"") and p / "empty.log" or p / "empty.log", "the file is empty"),
    (lambda p: p, "the folder is empty"),
    (lambda p: ((p / "notes.txt").write_text("hello\nworld\n"), p)[1], "no TORCH_TRACE file or TORCH_LOGS text"),
    (lambda p: p / "nope", "no such file or folder"),
    (lambda p: ((p / "x.bin").write_bytes(b"\x00" * 100), p / "x.bin")[1], "not a TORCH_TRACE file"),
])
@pytest.mark.parametrize("mode", ["--json", "--report"])
def test_nothing_to_read_is_one_line_and_exit_2(tmp_path, capsys, make, message, mode):
    from tlview.cli import main

    path = make(tmp_path)
    assert main([mode, str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_writer_died_in_the_middle_of_an_envelope(tmp_path, original):
    records = _records(REAL.read_bytes())
    last = records[-1].split(b"\n", 1)[0]
    data = b"".join(records[:-1]) + last[: len(last) - 20]  # cut inside has_payload's md5
    doc = json_for(_write(tmp_path, data))
    assert doc["totals"]["records"] == original["totals"]["records"] - 1
    assert [p["kind"] for p in doc["problems"]] == ["bad json"]
    assert doc["problems"][0]["line"] == data.count(b"\n") + 1
