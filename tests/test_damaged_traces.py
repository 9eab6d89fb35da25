"""Damaged and outsized traces, each class made from a real trace at test time: nothing lost
against a clean copy, no traceback, memory bounded by what is shown, never by a line or a payload.

(The terminal, signals and pipes: test_terminal_session.py and test_discover.py.)
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from conftest import CORPUS, json_for, ready, run_cli, until, without_paths
from hypothesis import given, settings
from hypothesis import strategies as st

from tlview.index import indexing, parallel
from tlview.index.index import Index
from tlview.index.indexing import open_index
from tlview.report.summary import build_summary
from tlview.source.discover import TRACE, FoundLog
from tlview.source.payload import SHOWN_BYTES

REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))
NAME = "dedicated_log_torch_trace_x.log"


def records(data: bytes) -> list[bytes]:
    return [r for r in re.split(rb"(?m)^(?=V\d{4} )", data) if r]


RECORDS = records(REAL.read_bytes())


def write(folder: Path, data: bytes, name: str = NAME) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    return folder


@pytest.fixture(scope="module")
def clean() -> dict:
    return without_paths(json_for(REAL))


def same_records(doc: dict, clean: dict) -> None:
    """Nothing lost against the clean copy: every record, every compile id and what it says."""
    assert doc["totals"]["records"] == clean["totals"]["records"]
    assert [c["id"] for c in doc["compiles"]] == [c["id"] for c in clean["compiles"]]
    assert [c["status"] for c in doc["compiles"]] == [c["status"] for c in clean["compiles"]]


def metrics_at() -> int:
    return next(i for i, r in enumerate(RECORDS) if r.startswith(b"V") and b'] {"compilation_metrics"' in r[:200])


# ---- records glued to damage ----------------------------------------------------------------------

GLUES = {
    "torn envelope": lambda at: RECORDS[at].split(b"\n")[0][:45],
    "NUL run": lambda at: b"\x00" * 300,
    "torn header": lambda at: RECORDS[at][:13],
    "garbage": lambda at: b"Traceback (most recent call last): ",
}


@pytest.mark.parametrize("glue", GLUES)
@pytest.mark.parametrize("where", ["after an envelope", "after payload lines", "first line"])
def test_a_record_glued_after_damage_is_read(tmp_path, clean, glue, where):
    if where == "first line":
        at = 0
    else:
        has_payload = where == "after payload lines"
        at = next(i for i in range(5, len(RECORDS))
                  if (b"\n\t" in RECORDS[i - 1]) == has_payload and RECORDS[i - 1].startswith(b"V"))
    bad = GLUES[glue](at)
    data = b"".join(RECORDS[:at]) + bad + b"".join(RECORDS[at:])
    doc = json_for(write(tmp_path, data))
    same_records(doc, clean)
    problems = [p for p in doc["problems"] if p["kind"] not in ("md5 mismatch",)]
    assert len(problems) == 1, problems
    assert problems[0]["line"] == b"".join(RECORDS[:at]).count(b"\n") + 1
    assert "glued after them is read" in problems[0]["message"] or \
        "neither payload" in problems[0]["message"]


def test_two_records_on_one_line_are_both_read(tmp_path, clean):
    at = next(i for i in range(5, len(RECORDS)) if b"\n\t" not in RECORDS[i] and b"\n\t" not in RECORDS[i + 1])
    data = b"".join(RECORDS[:at]) + RECORDS[at].rstrip(b"\n") + b"".join(RECORDS[at + 1:])
    doc = json_for(write(tmp_path, data))
    same_records(doc, clean)
    assert [p["kind"] for p in doc["problems"]] == ["glued records"]


@settings(max_examples=40, deadline=None)
@given(picks=st.lists(st.tuples(st.integers(0, len(RECORDS) - 1), st.integers(0, 120),
                                st.sampled_from([b"\x00", b"#", b""])), min_size=1, max_size=12))
def test_fuzz_glued_records_are_never_lost(tmp_path_factory, picks):
    """A torn prefix of any record (or NULs) before any record: every whole record is found."""
    data = b""
    starts = []
    for at, cut, filler in picks:
        line = RECORDS[at].split(b"\n")[0]
        torn = line[:min(cut, len(line) - 1)] if not filler else filler * cut  # (a whole line is a record)
        data += torn
        starts.append(len(data))
        data += RECORDS[at]
    path = write(tmp_path_factory.mktemp("g"), data) / NAME
    index = Index(verify_md5=True)
    index.add_log(FoundLog(str(path), TRACE, None))
    index.refresh()
    index.finish()
    assert list(index.sources[0].offsets) == starts


# ---- what editors and other writers do ----------------------------------------------------------

def test_a_byte_order_mark_loses_nothing(tmp_path, clean):
    doc = json_for(write(tmp_path, b"\xef\xbb\xbf" + REAL.read_bytes()))
    same_records(doc, clean)
    assert doc["problems"] == []


def test_nan_and_infinity_in_metadata_are_read(tmp_path, clean):
    at = metrics_at()
    torn = re.sub(rb'"entire_frame_compile_time_s": [0-9.e-]+', b'"entire_frame_compile_time_s": NaN',
                  RECORDS[at], count=1)
    torn = re.sub(rb'"backend_compile_time_s": [0-9.e-]+', b'"backend_compile_time_s": -Infinity', torn, count=1)
    assert torn != RECORDS[at]
    doc = json_for(write(tmp_path, b"".join(RECORDS[:at]) + torn + b"".join(RECORDS[at + 1:])))
    same_records(doc, clean)
    assert [p["kind"] for p in doc["problems"]] == ["wrong type", "wrong type"]  # said, not fatal
    assert all("not a number of seconds" in p["message"] for p in doc["problems"])


def test_a_metadata_line_over_a_block_is_read_whole(tmp_path, clean):
    at = next(i for i, r in enumerate(RECORDS) if b'] {"dynamo_start"' in r[:200])
    head, rest = RECORDS[at].split(b"\n", 1)
    frames = b", ".join(b'{"line": %d, "name": "deep_%d", "filename": 1, "loc": "x = f(x)"}' % (n, n)
                        for n in range(30_000))
    deep = head.replace(b'"stack": [', b'"stack": [' + frames + b", ", 1)
    assert len(deep) > 2 << 20
    doc = json_for(write(tmp_path, b"".join(RECORDS[:at]) + deep + b"\n" + rest + b"".join(RECORDS[at + 1:])))
    same_records(doc, clean)
    assert doc["problems"] == []


LONG_LINES = {
    "NUL hole": (b"\x00" * (3 << 20) + b"\n", "3 MiB of NUL bytes"),
    "NUL hole, record glued": (b"\x00" * (3 << 20), "3 MiB of NUL bytes"),
    "garbage": (b"x" * (2 << 20) + b"\n", "a line of 2 MiB that is not a trace record"),
    "CR line ends": (b"\r".join([b"garbage"] * 400_000) + b"\n", "3.1 MiB of lines that end in CR only"),
}


@pytest.mark.parametrize("case", LONG_LINES)
def test_long_lines_are_told_by_what_and_size(tmp_path, clean, case):
    hole, says = LONG_LINES[case]
    data = b"".join(RECORDS[:50]) + hole + b"".join(RECORDS[50:])
    doc = json_for(write(tmp_path, data))
    same_records(doc, clean)
    assert [p["message"][:len(says)] for p in doc["problems"]] == [says]
    assert doc["problems"][0]["line"] == b"".join(RECORDS[:50]).count(b"\n") + 1


@pytest.mark.parametrize("parallel_ok", [False, True])
def test_a_hole_with_no_newline_at_the_end(tmp_path, clean, monkeypatch, parallel_ok):
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 1 << 20)
    folder = write(tmp_path, REAL.read_bytes() + b"\x00" * (5 << 20))
    index = open_index(str(folder), parallel_ok=parallel_ok, verify_md5=True)
    assert not index.notes
    doc = without_paths(build_summary(index))
    same_records(doc, clean)
    assert [p.message[:17] for p in index.problems] == ["5 MiB of NUL byte"]


# ---- fields of the wrong type -----------------------------------------------------------------------

MISTYPED = {
    "fail_reason": b"42", "fail_type": b'{"a": 1}', "co_name": b"[1, 2]",
    "entire_frame_compile_time_s": b'"slow"', "start_time": b'"NaN"', "guard_count": b"NaN",
    "restart_reasons": b'[1, "x"]', "graph_op_count": b"true",
}


def mistyped_trace(folder: Path) -> Path:
    out = []
    for rec in RECORDS:
        if b'] {"compilation_metrics"' in rec[:200]:
            for name, value in MISTYPED.items():
                rec, n = re.subn(rb'"%s": (null|true|false|"[^"]*"|[-0-9.e]+|\[[^\]]*\])' % name.encode(),
                                 lambda m: b'"%s": %s' % (name.encode(), value), rec, count=1)
                assert n == 1, name
        out.append(rec)
    return write(folder, b"".join(out))


def test_mistyped_fields_are_problems_of_their_record(tmp_path, clean):
    folder = mistyped_trace(tmp_path)
    doc = json_for(folder)
    assert doc["totals"]["records"] == clean["totals"]["records"]
    wrong = [p for p in doc["problems"] if p["kind"] == "wrong type"]
    assert {m.split(":")[1].split()[0] for m in (p["message"] for p in wrong)} == set(MISTYPED)
    assert all(c["status"] == "error" for c in doc["compiles"] if c["fail_type"])  # kept as text
    code, out = run_cli("--report", str(folder))
    assert code == 0 and "wrong type" in out


async def test_mistyped_fields_in_every_pane(tmp_path):
    from tlview.ui.app import TlviewApp
    from tlview.ui.detail import TABS

    app = TlviewApp(str(mistyped_trace(tmp_path)))
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(app, pilot)
        for _ in range(4):
            for tab_id, *_ in TABS:
                app.detail.active = tab_id
                await pilot.pause()
                await app.workers.wait_for_complete()
            await pilot.press("down")
        await app.workers.wait_for_complete()
        assert app.return_code is None  # still running: nothing raised


def test_escape_codes_in_a_failure_never_reach_the_terminal(tmp_path):
    evil = b'"fail_type": "\\u001b]0;PWNED\\u0007\\u001b]52;c;aGk=\\u0007\\u001b[2J"'
    data = b"".join(re.sub(rb'"fail_type": null', lambda m: evil, r, count=1) for r in RECORDS)
    code, out = run_cli("--report", str(write(tmp_path, data)))
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;PWNED" in out  # shown, escaped


@pytest.mark.slow  # a big input: seconds
def test_too_many_record_kinds(tmp_path):
    lines = b"".join(b'V1121 23:27:10.004000 1 torch/x.py:1] {"kind_%d": {}, "frame_id": 0, '
                     b'"frame_compile_id": 0, "attempt": 0}\n' % i for i in range(70_000))
    doc = json_for(write(tmp_path, lines))
    assert doc["totals"]["records"] == 70_000
    assert [p["kind"] for p in doc["problems"]] == ["too many kinds"]
    assert doc["problems"][0]["line"] == 10_001


# ---- the parallel paths -------------------------------------------------------------------------

def damaged_big(tmp_path: Path) -> tuple[Path, Path]:
    """A few MB made of the corpus, with damage in its second half; and its clean twin."""
    parts = [next((CORPUS / s / "trace").glob("*.log")).read_bytes()
             for s in ("graph_breaks", "recompiles", "dynamic_shapes", "model")]
    data = b"".join(parts * 2)
    recs = records(data)
    at = len(recs) * 3 // 4
    damaged = b"".join(recs[:at]) + b"garbage\n" + b"\x00" * 64 + b"".join(recs[at:])
    return write(tmp_path / "damaged", damaged), write(tmp_path / "clean", data)


def test_damage_in_the_forked_half(tmp_path, monkeypatch):
    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 1 << 20)
    damaged, clean_copy = damaged_big(tmp_path)
    index = open_index(str(damaged), verify_md5=True)
    assert not index.notes  # the child's part came back (problems pickle)
    assert [p.kind for p in index.problems] == ["bad line", "bad line"]
    clean_doc = without_paths(build_summary(open_index(str(clean_copy), parallel_ok=False)))
    same_records(without_paths(build_summary(index)), clean_doc)


async def test_damage_in_the_pool_path_of_the_explorer(tmp_path, monkeypatch):
    from tlview.ui.app import TlviewApp

    monkeypatch.setattr(indexing, "PARALLEL_BYTES", 1 << 20)
    monkeypatch.setattr(parallel, "index_with_pool",
                        functools.partial(parallel.index_with_pool, first=1 << 20, step=2 << 20))
    damaged, clean_copy = damaged_big(tmp_path)
    app = TlviewApp(str(damaged))
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.facts.finished, timeout=60, what="indexing to finish")
        assert not app.index.notes
        assert len(app.index.problems) == 1  # the NULs glued to a record (the garbage line is
        # inside a payload region: reported when that payload is read, as without the pool)
        doc = without_paths(build_summary(app.index))
    same_records(doc, without_paths(build_summary(open_index(str(clean_copy), parallel_ok=False))))


# ---- memory follows what is shown ------------------------------------------------------------------

def huge_payload_trace(folder: Path, size: int, one_line: bool) -> Path:
    at = next(i for i, r in enumerate(RECORDS) if b'"inductor_output_code"' in r[:300])
    head = RECORDS[at].split(b"\n", 1)[0]
    unit = b"buf0 = empty_strided((4, 8), (8, 1))  # " + b"x" * 40
    text = unit * (size // len(unit)) if one_line else b"\n".join([unit] * (size // (len(unit) + 1)))
    head = re.sub(rb'"has_payload": "[0-9a-f]{32}"',
                  b'"has_payload": "' + hashlib.md5(text).hexdigest().encode() + b'"', head)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / NAME, "wb") as f:
        f.write(b"".join(RECORDS[:at]) + head + b"\n\t")
        f.write(text.replace(b"\n", b"\n\t") + b"\n")
        f.write(b"".join(RECORDS[at + 1:]))
    return folder


@pytest.mark.slow  # a big input: seconds
@pytest.mark.parametrize("one_line", [False, True])
def test_a_huge_payload_is_hashed_and_shown_in_bounded_memory(tmp_path, clean, one_line):
    folder = huge_payload_trace(tmp_path, 96 << 20, one_line)
    tracemalloc.start()
    try:
        index = open_index(str(folder), verify_md5=True, parallel_ok=False)
        scan_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        node_art = next(a for n in index.iter_nodes() for a in n.artifacts if a.name == "inductor_output_code")
        shown = node_art.load()
        show_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert index.sources[0].md5_bad == 0 and index.problems == []  # hashed whole, and right
    assert scan_peak < 24 << 20  # a few read steps, never the 96 MiB payload
    assert show_peak < 4 * SHOWN_BYTES
    assert len(shown.text) <= SHOWN_BYTES
    assert shown.text.startswith("buf0 = empty_strided")
    assert "only its first 8 MiB are shown" in shown.problems[0]
    same_records(without_paths(build_summary(index)), clean)


@pytest.mark.slow  # a big input: seconds
def test_a_huge_run_of_prints_in_a_text_log_is_shown_by_its_start(tmp_path):
    log = (CORPUS / "recompiles" / "torch_logs.txt").read_bytes()
    prints = b"step 1 loss 0.5 " * 4 + b"\n"
    path = tmp_path / "torch_logs.txt"
    path.write_bytes(log + prints * ((24 << 20) // len(prints)))
    tracemalloc.start()
    try:
        index = open_index(str(path))
        record = index.untagged[-1]
        text = record.load_text()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(index.nodes) == len(json_for(CORPUS / "recompiles" / "torch_logs.txt")["compiles"])
    assert text.startswith("step 1 loss") and text.endswith("more of this record not shown")
    assert len(text) < SHOWN_BYTES + 100
    assert peak < 48 << 20


# ---- many files -----------------------------------------------------------------------------------

@pytest.mark.slow  # a big input: seconds
def test_more_files_than_the_open_file_limit(tmp_path):
    """2,000 rank files under a limit of 256 open files: every record of every rank is read."""
    small = b"".join(RECORDS[:40])
    folder = tmp_path / "ranks"
    folder.mkdir()
    for rank in range(2000):
        (folder / f"dedicated_log_torch_trace_rank_{rank}_x.log").write_bytes(small)
    script = ("import resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256));"
              "from tlview.cli import main; sys.exit(main(['--json', sys.argv[1]]))")
    done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    doc = json.loads(done.stdout)
    assert doc["totals"]["records"] == 2000 * 40
    assert doc["problems"] == []
    assert len({c["rank"] for c in doc["compiles"]}) == 2000




def test_a_trace_whose_first_line_is_damaged_is_still_found(tmp_path):
    """Discovery goes by content: NULs before the first record do not hide a one-record trace."""
    doc = json_for(write(tmp_path, b"\x00" * 64 + RECORDS[0]))
    assert doc["totals"]["records"] == 1
    assert [p["kind"] for p in doc["problems"]] == ["bad line"]



@pytest.mark.parametrize("count", [2, 1_500])
def test_records_glued_on_one_line_are_each_read_once_reported(tmp_path, count):
    envelopes = [line for line in REAL.read_bytes().split(b"\n")
                 if line.startswith(b"V") and b"has_payload" not in line]
    glued = list(itertools.islice(itertools.cycle(envelopes), count))
    (tmp_path / NAME).write_bytes(b"".join(glued) + b"\n")
    doc = json_for(tmp_path)
    assert doc["sources"][0]["records"] == count
    glue = [p for p in doc["problems"] if "glued" in json.dumps(p)]
    assert len(glue) == 1, glue


_HEADER = b"V1121 23:26:41.383000 17404 torch/_logging/structured.py:28] {"


@given(st.lists(st.sampled_from([b"V", b"V1121 ", _HEADER, _HEADER[:30], b"]", b"] {", b" ", b"1", b'"x": 1',
                                 b"Variable", b"\n", b"{"]), max_size=40),
       st.integers(0, 5), st.integers(0, 5))
@settings(max_examples=400, deadline=None)
def test_an_envelope_inside_a_line_is_found_where_the_regular_expression_finds_it(pieces, start, cut):
    """The scanner's memchr-and-match for an envelope inside a line (a record glued on) finds what
    the regular expression's search finds, in any line of "V"s, brackets and headers."""
    from tlview.source.damaged_lines import ENVELOPE_START, glued_envelope

    data = b"".join(pieces)
    end = max(start, len(data) - cut)
    found, expected = glued_envelope(data, start, end), ENVELOPE_START.search(data, start, end)
    assert (found and found.span()) == (expected and expected.span())


@pytest.mark.parametrize("torn_after", [b"{", b'{"', b'{"artifact": {"na'])
def test_a_record_glued_inside_a_torn_envelope_is_read(tmp_path, torn_after):
    """A writer that died right after an envelope's `{` (or inside its kind's name), then another
    process's whole record on the same line: the whole record is read, the torn one reported."""
    envelopes = [line for line in REAL.read_bytes().split(b"\n")
                 if line.startswith(b"V") and b"has_payload" not in line]
    torn = envelopes[0][:envelopes[0].index(b"] {") + 2] + torn_after
    (tmp_path / NAME).write_bytes(b"\n".join([envelopes[0], torn + envelopes[1], envelopes[2]]) + b"\n")
    doc = json_for(tmp_path)
    assert doc["sources"][0]["records"] == 3
    assert [p for p in doc["problems"] if p["line"] == 2], doc["problems"]
