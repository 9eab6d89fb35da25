"""Fuzzing the trace reader and the TORCH_LOGS parser (hypothesis).

Properties: no exception escapes; every good record written whole is indexed; every bad line is
counted, with its file and line.
"""

from __future__ import annotations

import re

import pytest
from conftest import CORPUS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlview.index.index import Index
from tlview.report.summary import build_summary
from tlview.source.discover import FoundLog

REAL = next((CORPUS / "graph_breaks" / "trace").glob("*.log")).read_bytes()
RECORDS = [r for r in re.split(rb"(?m)^(?=V\d{4} )", REAL) if r][:300]
TEXT = (CORPUS / "graph_breaks" / "torch_logs.txt").read_bytes().split(b"\n")[:400]
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# A garbage line: any bytes but a newline, not empty, not starting like a record or payload line.
garbage = st.binary(min_size=1, max_size=300).map(lambda b: b.replace(b"\n", b" ")).filter(
    lambda b: b[:1] not in (b"V", b"\t") and b.strip(b" \r"))


def _index(tmp_path, data: bytes, kind: str = "trace", name: str = "t.log") -> Index:
    path = tmp_path / name
    path.write_bytes(data)
    index = Index(verify_md5=True)
    index.add_log(FoundLog(str(path), kind, None))
    index.refresh()
    index.finish()
    build_summary(index)  # the outputs must not fail either
    return index


@FUZZ
@given(data=st.binary(max_size=4000))
def test_random_bytes(tmp_path_factory, data):
    _index(tmp_path_factory.mktemp("f"), data)
    _index(tmp_path_factory.mktemp("f"), data, kind="text")


@FUZZ
@given(picks=st.lists(st.tuples(st.integers(0, len(RECORDS) - 1), st.lists(garbage, max_size=2)),
                      min_size=1, max_size=40))
def test_good_records_interleaved_with_garbage(tmp_path_factory, picks):
    data = b""
    good_offsets = []
    garbage_lines = []
    for index, junk in picks:
        for line in junk:
            # A file that starts with a byte-order mark: the mark is skipped (an editor's), not garbage
            if data or not (line.startswith(b"\xef\xbb\xbf") and not line[3:].strip(b" \r")):
                garbage_lines.append(data.count(b"\n") + 1)
            data += line + b"\n"
        good_offsets.append(len(data))
        data += RECORDS[index]
    idx = _index(tmp_path_factory.mktemp("f"), data)
    source = idx.sources[0]
    assert list(source.offsets) == good_offsets  # every good record, nothing else
    bad = sorted(p.line for p in idx.problems if p.kind == "bad line")
    assert bad == garbage_lines  # every bad line, with its line number
    assert source.md5_bad == 0


@FUZZ
@given(cut=st.integers(0, len(REAL)), tail=st.binary(max_size=200))
def test_records_cut_anywhere(tmp_path_factory, cut, tail):
    data = REAL[:cut] + tail
    idx = _index(tmp_path_factory.mktemp("f"), data)
    whole = [i for i, r in enumerate(re.finditer(rb"(?m)^V\d{4} [^\n]*\n", REAL[:cut]))]
    assert len(idx.sources[0].offsets) >= len(whole) - 1  # all but a torn envelope are kept


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8)
KINDS = ["dynamo_start", "compilation_metrics", "artifact", "str", "dynamo_output_graph",
         "create_symbol", "guard_added_fast", "chromium_event", "describe_tensor", "link",
         "bwd_compilation_metrics", "whatever_new_kind"]


@FUZZ
@given(entries=st.lists(st.tuples(st.sampled_from(KINDS), json_values,
                                  st.dictionaries(st.sampled_from(["frame_id", "frame_compile_id", "attempt",
                                                                   "rank", "compiled_autograd_id", "has_payload"]),
                                                  json_values, max_size=4),
                                  st.text(max_size=50)), min_size=1, max_size=25))
@pytest.mark.slow  # a big input: seconds
def test_metadata_of_the_wrong_types(tmp_path_factory, entries):
    import orjson

    lines = []
    for kind, value, context, payload in entries:
        meta = {kind: value, **context}
        lines.append(b"V1121 23:26:41.460000 1 torch/x.py:1] " + orjson.dumps(meta))
        if payload:
            lines += [b"\t" + p.encode("utf-8", "surrogatepass") for p in payload.split("\n")]
    idx = _index(tmp_path_factory.mktemp("f"), b"\n".join(lines) + b"\n")
    assert len(idx.sources[0].offsets) == len(entries)


@FUZZ
@given(picks=st.lists(st.one_of(st.sampled_from(TEXT), garbage, st.binary(max_size=80).map(
    lambda b: b"[rank0]:V1121 23:26:41.460000 1 x.py:1] [0/0" + b.replace(b"\n", b""))), min_size=1,
    max_size=80))
def test_text_log_lines(tmp_path_factory, picks):
    idx = _index(tmp_path_factory.mktemp("f"), b"\n".join(picks) + b"\n", kind="text", name="log.txt")
    assert idx.sources[0].lines == len(picks)


def test_huge_lines_and_nul_bytes(tmp_path):
    data = (RECORDS[0] + b"x" * (3 << 20) + b"\n" + RECORDS[1] + b"\t" + b"y" * (3 << 20) + b"\n"
            + b"\x00" * 100 + b"\n" + RECORDS[2])
    idx = _index(tmp_path, data)
    assert len(idx.sources[0].offsets) == 3
    kinds = sorted(p.kind for p in idx.problems)
    assert "long line" in kinds and "bad line" in kinds
