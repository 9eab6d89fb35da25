"""Runs made by our own programs (fixtures/generated/**/program.py: torch 2.13.0 and torch 2.15.0,
CPU) read as their expected.json says (made by an independent parser, checked with tlparse)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import GENERATED, counted_as_truth, json_for

# (verdict/ has its own format and tests: test_verdict.py)
EXPECTED = {p.parent.relative_to(GENERATED).as_posix(): json.loads(p.read_text())
            for p in sorted(GENERATED.rglob("expected.json")) if "verdict" not in p.parts}
SCENARIOS = [name for name, e in EXPECTED.items() if "trace_file" in e]  # one trace each
RANKED = [name for name, e in EXPECTED.items() if "per_rank" in e]  # one trace per rank
TOTALS = ("compile_ids", "frames", "compiles", "recompiles", "graph_breaks", "errors", "restarts")


def _idless_metrics_fail_types(trace: Path) -> list:
    """The fail_type of each compilation_metrics record of no compile id (torch.export's own
    metrics), read from the trace with the standard library: an oracle of its own."""
    found = []
    for line in trace.read_text(errors="replace").splitlines():
        head, sep, body = line.partition("] {")
        if not sep or not head[:1].isalpha():
            continue
        try:
            record = json.loads("{" + body)
        except ValueError:
            continue
        if "compilation_metrics" in record and "frame_id" not in record:
            found.append(record["compilation_metrics"].get("fail_type"))
    return found


def expected_status(scenario: str, cid: str) -> str:
    """tlview's status of compile id `cid`, from expected.json's facts alone (tlparse-style, per
    attempt) and docs/concepts.md's rules: one status for a compile and all its attempts. A failure
    wins; then a graph break in any attempt (`break`); then a restart with no graph break
    (`restart`; tlparse's `break` means restarted). A compile id of torch.export's (tlparse:
    missing, with the export's own metrics in the trace) has its export's outcome."""
    expected = EXPECTED[scenario]
    per = expected["per_compile_id"]
    attempts = [facts for other, facts in per.items() if other.split("_")[0] == cid.split("_")[0]]
    statuses = {facts["status"] for facts in attempts}
    if "error" in statuses:
        return "error"
    if statuses == {"missing"} and not cid.startswith("!"):
        export = _idless_metrics_fail_types(GENERATED / scenario / expected["trace_file"])
        if export:
            return "error" if any(export) else "ok"
    if any(facts["graph_breaks"] for facts in attempts):
        return "break"
    if "break" in statuses:
        return "restart"
    return per[cid]["status"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_generated_trace_matches_expected(scenario):
    expected = EXPECTED[scenario]
    doc = json_for(GENERATED / scenario / expected["trace_file"])
    assert [c["id"] for c in doc["compiles"]] == expected["compile_ids"]

    by_id = {c["id"]: c for c in doc["compiles"]}
    for cid, exp in expected["per_compile_id"].items():
        entry = by_id[cid]
        assert entry["status"] == expected_status(scenario, cid), cid
        if entry["recompile_reasons"] and not exp["recompile_reasons"]:
            # expected.json reads only the artifact; tlview falls back to the metrics' reason
            assert cid.count("_") == 1, cid
        else:
            assert entry["recompile_reasons"] == exp["recompile_reasons"], cid
        assert len(entry["graph_breaks"]) == exp["graph_breaks"], cid
        fail_type = entry["fail_type"] or (by_id[cid.split("_")[0]]["fail_type"])
        assert fail_type == exp["fail_type"], cid
    for key in TOTALS:
        assert counted_as_truth(doc["totals"], key) == expected["totals"][key], key


@pytest.mark.parametrize("scenario", RANKED)
def test_generated_ranks_match_expected(scenario):
    expected = EXPECTED[scenario]
    doc = json_for(GENERATED / scenario / "trace")
    by_key = {(c["rank"], c["id"]): c for c in doc["compiles"]}
    for per_rank in expected["per_rank"]:
        rank = per_rank["rank"]
        assert [c["id"] for c in doc["compiles"] if c["rank"] == rank] == per_rank["compile_ids"]
        statuses = per_rank.get("tlparse_like_status") or {
            cid: entry["status"] for cid, entry in per_rank["per_compile_id"].items()}
        for cid, status in statuses.items():
            assert by_key[(rank, cid)]["status"] == status, (rank, cid)
    for key in ("compile_ids", "recompiles", "graph_breaks", "errors"):
        assert counted_as_truth(doc["totals"], key) == expected["totals"][key], key


def test_compiled_autograd_ids():
    doc = json_for(GENERATED / "compiled_autograd" / "trace")
    ids = [c["id"] for c in doc["compiles"]]
    assert "!0/-/-" in ids and "!0/1/0" in ids and "!1/3/0" in ids
    by_id = {c["id"]: c for c in doc["compiles"]}
    assert "compiled_autograd_graph" in by_id["!0/-/-"]["artifacts"]


def test_recompile_causes_reasons():
    doc = json_for(GENERATED / "recompile_causes" / "trace")
    by_id = {c["id"]: c for c in doc["compiles"]}
    assert "GLOBAL_STATE changed: grad_mode" in by_id["0/1"]["recompile_reasons"][0]
    assert "stride mismatch at index 0" in by_id["1/1"]["recompile_reasons"][0]
    assert "___check_obj_id" in by_id["2/1"]["recompile_reasons"][0]
    assert "___check_type_id" in by_id["3/1"]["recompile_reasons"][0]
