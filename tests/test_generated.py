"""Traces made by our own programs (fixtures/generated/*/program.py, torch 2.13.0, CPU)."""

from __future__ import annotations

import json

import pytest

from conftest import GENERATED, json_for

SCENARIOS = ["compiled_autograd", "failures", "recompile_causes"]  # single-process runs with one trace


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_generated_trace_matches_expected(scenario):
    expected = json.loads((GENERATED / scenario / "expected.json").read_text())
    doc = json_for(GENERATED / scenario / "trace")
    assert [c["id"] for c in doc["compiles"]] == expected["compile_ids"]
    by_id = {c["id"]: c for c in doc["compiles"]}
    for cid, exp in expected["per_compile_id"].items():
        entry = by_id[cid]
        assert entry["status"] == exp["status"], cid
        if entry["recompile_reasons"] and not exp["recompile_reasons"]:
            # expected.json reads only the artifact; tlview falls back to the metrics' reason
            assert cid.count("_") == 1, cid
        else:
            assert entry["recompile_reasons"] == exp["recompile_reasons"], cid
        assert len(entry["graph_breaks"]) == exp["graph_breaks"], cid
        fail_type = entry["fail_type"] or (by_id[cid.split("_")[0]]["fail_type"])
        assert fail_type == exp["fail_type"], cid
    for key, value in expected["totals"].items():
        assert doc["totals"][key] == value, key


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_generated_text_log_finds_the_same_compile_ids(scenario):
    expected = json.loads((GENERATED / scenario / "expected.json").read_text())
    doc = json_for(GENERATED / scenario / "torch_logs.txt")
    ids = {c["id"] for c in doc["compiles"]}
    assert ids == set(expected["compile_ids"])


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
