"""tlparse's own test inputs: every file opens, with tlparse's compile ids and md5 findings."""

from __future__ import annotations

import json

import pytest
from conftest import PEER, json_for

EXPECTED = json.loads((PEER / "expected.json").read_text())
# Where the words of docs/concepts.md count otherwise than the truth's (which counts break artifacts): an
# older torch restarted twice after `graph_break()` and logged no break artifact; each restart
# after a graph break is a graph break (docs/concepts.md: "Verdict: five kinds of problem").
WORDS_DIFFER = {"inputs/comp_metrics.log": {"graph_breaks": 2}}


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_peer_file_reads_like_tlparse(rel):
    expected = EXPECTED[rel]
    doc = json_for(PEER / rel)
    ids = sorted(c["id"] for c in doc["compiles"])
    assert ids == sorted(i for i in expected["tlparse_compile_ids"] if i != "-/-")
    truth = {**expected["truth_totals"], **WORDS_DIFFER.get(rel, {})}
    for key in ("compile_ids", "frames", "compiles", "recompiles", "graph_breaks", "errors",
                "restarts", "records"):
        assert doc["totals"][key] == truth[key], key
    assert doc["totals"]["md5_bad"] == truth["payload_md5_bad"]
    mismatches = [p for p in doc["problems"] if p["kind"] == "md5 mismatch"]
    assert len(mismatches) == truth["payload_md5_bad"]
    for problem in mismatches:  # each says where: file and line of the record's envelope
        assert problem["file"].endswith(rel.rsplit("/", 1)[-1]) and problem["line"] > 0
        line = (PEER / rel).read_bytes().split(b"\n")[problem["line"] - 1]
        assert line.startswith(b"V") and b"has_payload" in line


def test_blank_lines_inside_payloads_are_reported():
    doc = json_for(PEER / "inputs" / "export.log")
    blank = [p for p in doc["problems"] if p["kind"] == "blank line"]
    assert blank and blank[0]["line"] == 66  # the first empty line of the hand-edited payload
    assert (PEER / "inputs" / "export.log").read_bytes().split(b"\n")[65] == b""


def test_windows_line_endings_verify():
    doc = json_for(PEER / "inputs" / "multi_rank_logs" / "dedicated_log_torch_trace_rank_1.log")
    assert doc["totals"]["md5_bad"] == 0
    assert doc["sources"][0]["md5_ok"] > 700


def test_multi_rank_folders_read_every_rank():
    doc = json_for(PEER / "inputs" / "multi_rank_logs")
    assert doc["ranks"] == [0, 1, 2, 3]
    per_rank = {r: sum(1 for c in doc["compiles"] if c["rank"] == r) for r in doc["ranks"]}
    assert per_rank == {0: 1, 1: 15, 2: 1, 3: 7}
    messy = json_for(PEER / "inputs" / "multi_rank_messy_input")
    assert [s["path"].rsplit("/", 1)[-1] for s in messy["sources"]] == [
        "dedicated_log_torch_trace_rank_0.log", "dedicated_log_torch_trace_rank_1.log"]
    assert any("another.log: empty file" in n for n in messy["notes"])


def test_trace_files_named_txt_are_found_by_content():
    doc = json_for(PEER / "inputs" / "inductor_provenance_jit_log.txt")
    assert doc["sources"][0]["kind"] == "trace"
    assert [c["id"] for c in doc["compiles"]] == ["0/0"]
