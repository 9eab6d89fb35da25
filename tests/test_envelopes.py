"""Envelopes and record ends (issue #26, items 7 and 8): a record keeps its own lines whatever follows
them, and the surprises of an envelope (an odd compile id or rank, a compile id started again, a
string id defined again, bytes that are not UTF-8) are problems of their record, with file and
line, never silent. Each condition is made here from a real trace by a generator, and checked in
--json, --report, --perfetto, and on the parallel paths (forked children, the explorer's pool)."""

from __future__ import annotations

import functools
import io
import json
import re
from pathlib import Path

import pytest
from conftest import CORPUS, GENERATED, json_for, run_cli

from tlview.index import indexing, parallel
from tlview.index.index import Index
from tlview.index.indexing import Indexer, open_index
from tlview.report.perfetto import write_perfetto
from tlview.report.summary import build_summary
from tlview.source.discover import TRACE, FoundLog

REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))
NAME = "dedicated_log_torch_trace_x.log"


def records(data: bytes) -> list[bytes]:
    return [r for r in re.split(rb"(?m)^(?=V\d{4} )", data) if r]


RECORDS = records(REAL.read_bytes())


def kind(rec: bytes) -> str:
    return re.match(rb'V[^\]\n]*\] \{"(\w+)"', rec).group(1).decode()


def write(folder: Path, recs: list[bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / NAME).write_bytes(b"".join(recs))
    return folder


def line_of(recs: list[bytes], i: int) -> int:
    """The line where recs[i] starts (1-based)."""
    return sum(r.count(b"\n") for r in recs[:i]) + 1


def told(doc: dict) -> list[tuple[str, int]]:
    return [(p["kind"], p["line"]) for p in doc["problems"]]


def in_report(folder: Path, doc: dict, monkeypatch) -> str:
    """--report, which must list every problem of --json with its file and line."""
    monkeypatch.setenv("COLUMNS", "400")
    code, out = run_cli("--report", str(folder))
    assert code == 0
    for p in doc["problems"]:
        assert f"{p['file']}:{p['line']}: {p['kind']}: " in out, p
    return out


def exported(folder: Path, tmp_path: Path, *args: str) -> list[dict]:
    """The chromium events --perfetto writes."""
    out = tmp_path / "perfetto.json"
    code, _ = run_cli("--perfetto", str(out), str(folder), *args)
    assert code == 0
    return [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] != "M"]


def verified(folder: Path) -> Index:
    return open_index(str(folder), verify_md5=True, parallel_ok=False)


@pytest.fixture(scope="module")
def clean() -> dict:
    return json_for(REAL)


CHROMIUM = [i for i, r in enumerate(RECORDS) if kind(r) == "chromium_event"]
ALL_EVENTS = len(CHROMIUM)


# ---- 7. a record keeps its own lines ----------------------------------------------------------------

AT = CHROMIUM[5]  # an intact event of the first compile
ENVELOPE = RECORDS[AT].split(b"\n")[0]
BAD_JSON = ENVELOPE[:len(ENVELOPE) // 2] + b"\n"  # an envelope torn in its tail: not JSON, dropped
AFTER_AN_EVENT = {  # what follows the event: (bytes, the problem's kind, words of its message)
    "garbage": (b"Traceback (most recent call last):\n", "bad line", "neither payload"),
    "a byte-order mark line": (b"\xef\xbb\xbf\n", "bad line", "neither payload"),
    "a byte-order mark glued to the next record": (b"\xef\xbb\xbf", "bad line", "byte-order mark"),
    "a line that is not JSON": (BAD_JSON, "bad json", "not valid JSON"),
}


@pytest.mark.parametrize("damage", AFTER_AN_EVENT)
def test_an_event_keeps_its_own_lines_whatever_follows(tmp_path, clean, monkeypatch, damage):
    bad, problem, words = AFTER_AN_EVENT[damage]
    recs = RECORDS[:AT + 1] + [bad] + RECORDS[AT + 1:]
    folder = write(tmp_path / "run", recs)
    doc = json_for(folder)
    assert told(doc) == [(problem, line_of(recs, AT + 1))]  # its own problem, where it is
    assert words in doc["problems"][0]["message"]
    assert doc["totals"]["records"] == clean["totals"]["records"] and doc["totals"]["md5_bad"] == 0
    in_report(folder, doc, monkeypatch)
    # the event is exported, as every other one, headless with md5s checked or not
    event = json.loads(RECORDS[AT].split(b"\n", 1)[1])
    for args in ((), ("--no-verify",)):
        events = exported(folder, tmp_path, *args)
        assert len(events) == ALL_EVENTS
        assert any(e["ts"] == event["ts"] and e["name"] == event["name"] for e in events)
    # its span ends at its last payload line: read back, it is whole and nothing follows it
    source = verified(folder).sources[0]
    assert source.record_span(AT)[1] == len(b"".join(RECORDS[:AT + 1]))
    loaded = source.load_payload(AT)
    assert loaded.md5_ok is True and loaded.problems == []


def payload_kinds() -> dict[str, int]:
    """The first record of each kind that has a payload (an artifact by its name)."""
    first: dict[str, int] = {}
    for i, rec in enumerate(RECORDS):
        if b"\n\t" in rec:
            name = re.search(rb'"name": "(\w+)"', rec[:300]) if kind(rec) == "artifact" else None
            first.setdefault(name.group(1).decode() if name else kind(rec), i)
    return first


def test_every_kind_with_a_payload_keeps_its_own_lines(tmp_path, clean, monkeypatch):
    chosen = sorted(payload_kinds().values())
    assert len(chosen) >= 8  # chromium events, graphs, code, guards, artifacts
    recs, where = [], {}
    for i, rec in enumerate(RECORDS):
        recs.append(rec)
        if i in chosen:
            where[i] = (len(recs), sum(map(len, recs)))  # the garbage's record slot and offset
            recs.append(b"garbage after a %s\n" % kind(rec).encode())
    folder = write(tmp_path / "run", recs)
    doc = json_for(folder)
    assert told(doc) == [("bad line", line_of(recs, slot)) for slot, _ in where.values()]
    assert doc["totals"]["records"] == clean["totals"]["records"] and doc["totals"]["md5_bad"] == 0
    in_report(folder, doc, monkeypatch)
    assert len(exported(folder, tmp_path)) == ALL_EVENTS
    source = verified(folder).sources[0]
    for rec, (_, offset) in where.items():
        assert source.record_span(rec)[1] == offset, kind(RECORDS[rec])
        loaded = source.load_payload(rec)
        assert loaded.md5_ok is True and loaded.problems == [], kind(RECORDS[rec])


# ---- 8. silent surprises are problems of their record -----------------------------------------------

START_1_0 = next(i for i, r in enumerate(RECORDS)
                 if kind(r) == "dynamo_start" and b'"frame_id": 1, "frame_compile_id": 0,' in r)
ODD = {  # field, as written, as said
    "frame_id past 64 bits": ("frame_id", b"18446744073709551616", "frame_id is 18446744073709551616"),
    "frame_id a float": ("frame_id", b"1.5", "frame_id is 1.5"),
    "frame_id null": ("frame_id", b"null", "frame_id is null"),
    "frame_id true": ("frame_id", b"true", "frame_id is true"),
    "frame_id a list": ("frame_id", b"[1]", "frame_id is [1]"),
    "frame_compile_id a float": ("frame_compile_id", b"0.5", "frame_compile_id is 0.5"),
    "attempt null": ("attempt", b"null", "attempt is null"),
    "rank past 64 bits": ("rank", b"18446744073709551616", "rank is 18446744073709551616"),
}


def with_field(rec: bytes, field: str, value: bytes) -> bytes:
    if field == "rank":
        out = rec.replace(b'"attempt": 0}', b'"attempt": 0, "rank": %s}' % value, 1)
    else:
        out = re.sub(rb'"%s": \d+' % field.encode(), b'"%s": %s' % (field.encode(), value), rec, count=1)
    assert out != rec
    return out


@pytest.mark.parametrize("case", ODD)
def test_an_odd_compile_id_is_a_problem_of_its_record(tmp_path, clean, monkeypatch, case):
    field, value, says = ODD[case]
    recs = list(RECORDS)
    recs[START_1_0] = with_field(RECORDS[START_1_0], field, value)
    folder = write(tmp_path / "run", recs)
    doc = json_for(folder)
    assert told(doc) == [("odd rank" if field == "rank" else "odd compile id", line_of(recs, START_1_0))]
    assert says in doc["problems"][0]["message"]
    assert doc["totals"]["records"] == clean["totals"]["records"]
    # no compile id made up from what is left of it (`-/0`), no compile lost
    assert [c["id"] for c in doc["compiles"]] == [c["id"] for c in clean["compiles"]]
    assert doc["ranks"] == []
    # an odd attempt or rank: the record stays with its compile (its frame and compile ids are
    # good); else it has no compile id, and is never guessed into one
    kept_with_its_compile = field in ("attempt", "rank")
    assert doc["problems"][0]["compile_id"] == ("1/0" if kept_with_its_compile else None)
    if kept_with_its_compile:
        assert doc["compiles"][2]["id"] == "1/0"
        assert doc["compiles"][2]["location"] == clean["compiles"][2]["location"]  # its start
    in_report(folder, doc, monkeypatch)


def test_an_odd_id_on_many_records_is_one_problem_and_takes_no_other_compile(tmp_path, clean):
    """frame_id true on every record of frame 0: one problem; frame 1's records stay frame 1's
    (true == 1 to Python: a cache keyed by the values would give them frame 0's place)."""
    recs = [re.sub(rb'(?m)^(V[^\n]*)"frame_id": 0,', rb'\1"frame_id": true,', r, count=1) for r in RECORDS]
    doc = json_for(write(tmp_path / "run", recs))
    assert [p["kind"] for p in doc["problems"]] == ["odd compile id"]
    assert doc["problems"][0]["line"] == next(line_of(recs, i) for i, r in enumerate(recs) if b'"frame_id": true' in r)
    assert [c["id"] for c in doc["compiles"]] == [c["id"] for c in clean["compiles"] if not c["id"].startswith("0/")]
    assert doc["totals"]["records"] == clean["totals"]["records"]


START_0_0 = next(i for i, r in enumerate(RECORDS) if kind(r) == "dynamo_start")
METRICS_0_0 = next(i for i, r in enumerate(RECORDS) if kind(r) == "compilation_metrics")


def started_again(rec: bytes) -> bytes:
    """The same record written later, by the same process, saying something else."""
    return re.sub(rb"^V1121 23:27:\d\d", b"V1121 23:59:59", rec, count=1).replace(b'"line": 17,', b'"line": 99,', 1)


def test_a_compile_id_started_again_is_a_problem_and_keeps_its_first_start(tmp_path, clean, monkeypatch):
    again = started_again(RECORDS[START_0_0])
    failed = started_again(RECORDS[METRICS_0_0]).replace(b'"fail_type": null',
                                                         b'"fail_type": "BackendCompilerFailed"', 1)
    assert again != RECORDS[START_0_0] and b"BackendCompilerFailed" in failed
    recs = RECORDS + [again, failed]
    folder = write(tmp_path / "run", recs)
    doc = json_for(folder)
    assert told(doc) == [("repeated compile id", line_of(recs, len(RECORDS)))]
    assert doc["problems"][0]["compile_id"] == "0/0" and "started again" in doc["problems"][0]["message"]
    first, before = doc["compiles"][0], clean["compiles"][0]
    # nothing told earlier is lost: the first start (line 17) and the first metrics (no failure)
    assert (first["id"], first["location"], first["status"]) == ("0/0", before["location"], before["status"])
    assert doc["totals"]["errors"] == clean["totals"]["errors"]
    in_report(folder, doc, monkeypatch)


def test_a_file_appended_to_itself_loses_nothing_and_says_nothing(tmp_path, clean):
    doc = json_for(write(tmp_path / "run", RECORDS * 2))
    assert doc["problems"] == []  # every start again is the same line: nothing differs
    assert [c["location"] for c in doc["compiles"]] == [c["location"] for c in clean["compiles"]]


STRING_1 = next(i for i, r in enumerate(RECORDS) if r.startswith(b"V") and b'{"str": ["/home/user/job/' in r)


def test_a_string_id_defined_again_is_a_problem_and_the_first_is_kept(tmp_path, clean, monkeypatch):
    again = RECORDS[STRING_1].replace(b"/home/user/job/", b"/elsewhere/", 1)
    recs = RECORDS[:STRING_1 + 1] + [again] + RECORDS[STRING_1 + 1:]
    folder = write(tmp_path / "run", recs)
    doc = json_for(folder)
    assert told(doc) == [("string id redefined", line_of(recs, STRING_1 + 1))]
    assert "string-table id 1 " in doc["problems"][0]["message"]
    assert "/elsewhere/recompiles.py" in doc["problems"][0]["message"]
    assert [c["location"] for c in doc["compiles"]] == [c["location"] for c in clean["compiles"]]
    in_report(folder, doc, monkeypatch)


@pytest.mark.parametrize("json_too", [False, True])
def test_an_envelope_that_is_not_utf8_says_where(tmp_path, clean, monkeypatch, json_too):
    rec = RECORDS[START_0_0].replace(b'"name": "scale_by_int"', b'"name": "scale_\xff_by_int"', 1)
    if json_too:
        rec = rec.replace(b'"stack": [', b'"stack": [,', 1)
    recs = RECORDS[:START_0_0] + [rec] + RECORDS[START_0_0 + 1:]
    folder = write(tmp_path / "run", recs)
    doc = json_for(folder)
    at = rec.index(b"\xff") + 1
    assert told(doc) == [("bad json" if json_too else "not UTF-8", line_of(recs, START_0_0))]
    message = doc["problems"][0]["message"]
    assert f"the envelope line is not valid UTF-8 at byte {at}" in message and "surrogates" not in message
    if json_too:
        assert "nor valid JSON" in message
        assert doc["totals"]["records"] == clean["totals"]["records"] - 1
    else:  # read, with U+FFFD for the byte that is not UTF-8
        assert doc["totals"]["records"] == clean["totals"]["records"]
        assert doc["compiles"][0]["function"] == "scale_\ufffd_by_int"
    in_report(folder, doc, monkeypatch)


# ---- the parallel paths agree with one process ----------------------------------------------------

def renumbered(copy: int) -> bytes:
    """The real trace with its frame ids moved by 4 a copy (a long job: distinct compile ids)."""
    return re.sub(rb'(?m)^(V[^\n]*?"frame_id": )(\d+)',
                  lambda m: m.group(1) + str(int(m.group(2)) + 4 * copy).encode(), REAL.read_bytes())


def damaged_big() -> tuple[list[bytes], int]:
    """Four renumbered copies of the real trace (15 MB, one process) with every condition of this
    file, most in the last third (another process's range), some whose first half is in the
    first third (an odd id told once a file; a start and a string id the first range gave)."""
    recs = records(b"".join(renumbered(copy) for copy in range(4)))
    events = [i for i, r in enumerate(recs) if kind(r) == "chromium_event"]
    near = lambda f, of=events: next(i for i in of if i >= int(len(recs) * f))
    starts = [i for i, r in enumerate(recs) if kind(r) == "dynamo_start"]
    odd_id = lambda rec: [with_field(rec, "frame_id", b"1.5")]
    damage = {  # record -> what is written instead of it
        near(0.2): odd_id, near(0.85): odd_id,
        near(0.6, starts): lambda rec: [rec.replace(b'"name": "<module>"', b'"name": "<mod\xffule>"', 1)],
        near(0.7): lambda rec: [rec, b"garbage after an event\n"],
        near(0.75): lambda rec: [rec, b"\xef\xbb\xbf"],
        near(0.8): lambda rec: [rec, BAD_JSON],
        near(0.9): lambda rec: [rec, started_again(recs[START_0_0])],
        near(0.95): lambda rec: [rec, recs[STRING_1].replace(b"/home/user/job/", b"/elsewhere/", 1)],
    }
    out = [part for i, rec in enumerate(recs) for part in (damage[i](rec) if i in damage else [rec])]
    return out, len(events)


def problems_of(index: Index) -> list[tuple[str, int, str]]:
    return [(p.kind, p.line, p.message) for p in index.problems]


@pytest.mark.slow  # a big input, forked children and a process pool: seconds
def test_the_parallel_paths_agree_with_one_process(tmp_path, monkeypatch):
    recs, events = damaged_big()
    folder = write(tmp_path / "run", recs)
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 1 << 20)
    monkeypatch.setenv("TLVIEW_PROCESSES", "3")
    monkeypatch.setattr(parallel, "index_with_pool",
                        functools.partial(parallel.index_with_pool, first=1 << 20, step=2 << 20))
    one = open_index(str(folder), verify_md5=True, parallel_ok=False)
    forked = open_index(str(folder), verify_md5=True, parallel_ok=True)
    pooled = Index(verify_md5=True)
    pooled.add_log(FoundLog(str(folder / NAME), TRACE, None))
    Indexer(pooled, use_fork=False, use_pool=True).run()
    expected = problems_of(one)
    assert sorted(k for k, _, _ in expected) == sorted(
        ["odd compile id", "not UTF-8", "bad line", "bad line", "bad json", "repeated compile id",
         "string id redefined"])
    for index in (forked, pooled):
        assert not index.notes  # the parts came back
        assert problems_of(index) == expected
        a, b = one.sources[0], index.sources[0]
        assert list(a.offsets) == list(b.offsets)
        assert [a.record_span(i) for i in range(len(a.offsets))] == [b.record_span(i) for i in range(len(b.offsets))]
        assert build_summary(index) == build_summary(one)
    for index in (one, forked, pooled):
        written = write_perfetto(index, io.BytesIO())
        assert (written.total, written.skipped) == (events, 0)


def test_repeated_records_payloads_are_checked_as_any_other(tmp_path, monkeypatch):
    """Records that repeat their envelope but for the time and md5 (chromium events) are read by
    a fast path, which checks a payload followed by the next envelope where it is. Whatever is
    odd in one of them is told as for any record: a wrong md5, a line after the payload that is
    neither payload nor envelope (the record ends above it); a TAB inside a line is kept, its
    md5 right (the exact decoder's); the rest count as checked."""
    import hashlib

    rank0 = next((GENERATED / "dist215" / "diverge4" / "trace").glob("*rank_0_*.log")).read_bytes()
    record = re.search(rb'(?m)^V[^\n]*\{"chromium_event": \{\}[^\n]*\n(?:\t[^\n]*\n)+', rank0).group(0)
    envelope, payload = record.split(b"\n", 1)

    def event(body: bytes, md5: bytes | None = None) -> bytes:
        text = b"\n".join(line[1:] for line in body[:-1].split(b"\n"))  # as torch writes it
        return envelope[:-34] + (md5 or hashlib.md5(text).hexdigest().encode()) + b'"}\n' + body

    good = event(payload)
    wrong_md5 = event(payload, hashlib.md5(b"something else").hexdigest().encode())
    garbage_after = event(payload) + b"not a record line\n"
    tab_inside = event(payload.replace(b'"name"', b'"na\tme"', 1))
    records = [good] * 3 + [wrong_md5, good, garbage_after, good, tab_inside] + [good] * 2
    path = tmp_path / "dedicated_log_torch_trace_rank_0_fast.log"
    path.write_bytes(b"".join(records))
    from tlview.source import record_ends

    closed_after = []  # records checked as open records closed by the next envelope
    whole_payload = record_ends.whole_payload
    monkeypatch.setattr(record_ends, "whole_payload",
                        lambda *a: closed_after.append(1) or whole_payload(*a))
    index = open_index(str(path), verify_md5=True, parallel_ok=False)
    source = index.sources[0]
    assert len(closed_after) == 4  # the first (the fast path learns from it) and the three odd ones
    starts = [sum(map(len, records[:i])) for i in range(len(records))]
    assert list(source.offsets) == starts
    assert [(p.kind, p.offset) for p in index.problems] == [
        ("md5 mismatch", starts[3]), ("bad line", starts[5] + len(good))]
    assert (source.md5_ok, source.md5_bad) == (9, 1)
    assert b"na\tme" in source.load_payload(7).text.encode()
