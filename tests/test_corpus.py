"""`tlview --json` on every shared-corpus scenario matches its truth.json (traces and text logs)."""

from __future__ import annotations

import pytest
from conftest import CORPUS, SCENARIOS, counted_as_truth, json_for, tlview_status

TOTAL_KEYS = ("compile_ids", "frames", "compiles", "recompiles", "graph_breaks", "errors", "restarts")


def _by_id(doc: dict) -> dict[tuple, dict]:
    return {(c["rank"], c["id"]): c for c in doc["compiles"]}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_trace_totals_match_truth(scenario, truths):
    doc = json_for(CORPUS / scenario / "trace")
    truth = truths[scenario]
    for key in TOTAL_KEYS:
        assert counted_as_truth(doc["totals"], key) == truth["totals"][key], key
    assert doc["ranks"] == truth["ranks"]
    assert doc["totals"]["md5_bad"] == 0
    assert sum(s["md5_ok"] for s in doc["sources"]) == truth["totals"]["payload_md5_ok"]
    assert doc["pytorch_version"] == truth["pytorch_version"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_trace_every_compile_id_matches_truth(scenario, truths):
    doc = json_for(CORPUS / scenario / "trace")
    compiles = _by_id(doc)
    for per_rank in truths[scenario]["per_rank"]:
        rank = per_rank["rank"]
        mine = [c["id"] for c in doc["compiles"] if c["rank"] == rank]
        assert mine == per_rank["compile_ids"]  # same ids, same order of first appearance
        for cid, status in per_rank["tlparse_like_status"].items():
            broke = bool(per_rank["per_compile_id"][cid]["graph_break_reasons"])
            assert compiles[(rank, cid)]["status"] == tlview_status(status, broke), cid
        for cid, expected in per_rank["per_compile_id"].items():
            entry = compiles[(rank, cid)]
            assert entry["recompile_reasons"] == expected["recompile_reasons"], cid
            assert [(g["location"], g["reason"], g["detail"]) for g in entry["graph_breaks"]] == [
                (g["location"], g["reason"], g["detail"]) for g in expected["graph_break_reasons"]
            ], cid
            assert entry["fail_type"] == expected["fail_type"], cid
            assert entry["fail_reason"] == expected["fail_reason"], cid
            assert entry["restart_reasons"] == expected["restart_reasons"], cid
            assert set(expected["artifacts"]) <= set(entry["artifacts"]), cid
            assert entry["guard_count"] == expected["guard_count"], cid


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_text_log_matches_truth(scenario, truths):
    """TORCH_LOGS text alone gives the same compile ids, statuses, reasons and break counts."""
    truth = truths[scenario]
    doc = json_for(CORPUS / scenario / "torch_logs.txt")
    ids = list(dict.fromkeys(c["id"] for c in doc["compiles"]))
    assert sorted(ids) == sorted(truth["text_log"]["compile_id_tags"])
    for key in TOTAL_KEYS:
        assert counted_as_truth(doc["totals"], key) == truth["totals"][key], key
    compiles = _by_id(doc)
    for per_rank in truth["per_rank"]:
        rank = per_rank["rank"]
        for cid, status in per_rank["tlparse_like_status"].items():
            broke = bool(per_rank["per_compile_id"][cid]["graph_break_reasons"])
            assert compiles[(rank, cid)]["status"] == tlview_status(status, broke), cid
        for cid, expected in per_rank["per_compile_id"].items():
            entry = compiles[(rank, cid)]
            assert len(entry["graph_breaks"]) == len(expected["graph_break_reasons"]), cid
            if expected["attempt"] == 0:
                # the text log has each reason once, at the compile (attempt 0)
                first_lines = [r.split("\n")[0] for r in expected["recompile_reasons"]]
                assert [r.split("\n")[0] for r in entry["recompile_reasons"]] == first_lines, cid
    assert doc["sources"][0]["lines"] == truth["text_log"]["lines"]
    assert doc["sources"][0]["glog_lines"] == truth["text_log"]["glog_lines"]


def test_scenario_folder_reads_trace_and_text_together(truths):
    """The folder holds trace/ and torch_logs.txt: both are read; counts come from the trace."""
    doc = json_for(CORPUS / "graph_breaks")
    kinds = sorted(s["kind"] for s in doc["sources"])
    assert kinds == ["text", "trace"]
    for key in TOTAL_KEYS:
        assert counted_as_truth(doc["totals"], key) == truths["graph_breaks"]["totals"][key], key
    by_id = _by_id(doc)
    assert by_id[(None, "0/0_1")]["perf_hints"]  # perf hints exist only in the text log


def test_filter_and_rank_narrow_the_output(truths):
    doc = json_for(CORPUS / "graph_breaks" / "trace", "--filter", "graph_breaks")
    ids = {c["id"] for c in doc["compiles"]}
    with_breaks = {cid for cid, d in truths["graph_breaks"]["per_rank"][0]["per_compile_id"].items()
                   if d["graph_break"]}
    assert ids == with_breaks
    doc = json_for(CORPUS / "recompiles" / "trace", "--filter", "recompiles")
    assert [c["id"] for c in doc["compiles"]] == ["0/1", "1/1", "2/1", "2/2", "3/1", "3/2", "3/3", "3/4"]
    doc = json_for(CORPUS / "distributed" / "trace", "--rank", "1", "--filter", "recompiles")
    assert [c["id"] for c in doc["compiles"]] == ["0/1", "0/1_1", "4/1"]
    assert {c["rank"] for c in doc["compiles"]} == {1}
    doc = json_for(CORPUS / "distributed" / "trace", "--rank", "0")
    assert doc["totals"]["compile_ids"] == truths["distributed"]["per_rank"][0]["totals"]["compile_ids"]


def test_recompile_reasons_link_to_the_failed_compile():
    doc = json_for(CORPUS / "recompiles" / "trace")
    by_id = _by_id(doc)
    assert by_id[(None, "0/1")]["recompile_of"] == ["0/0"]
    assert by_id[(None, "2/2")]["recompile_of"] == ["2/0", "2/1"]
    assert by_id[(None, "3/4")]["status"] == "error"
    assert by_id[(None, "3/4")]["fail_type"] == "Unsupported"


def test_the_index_keeps_metrics_without_their_config_strings_which_are_read_from_disk():
    """The config strings are 40 KB of a 45 KB compilation_metrics line: the index keeps none
    (10,000 compile ids would hold 400 MB of them); the compile's settings read them back from
    the record. The line is parsed whole, and only they are dropped."""
    import orjson

    from tlview.domain.settings import settings_of
    from tlview.index.indexing import open_index
    from tlview.source.trace_records import CONFIG_DIGEST, config_digest, loads_metadata

    path = next((CORPUS / "model" / "trace").glob("*.log"))
    lines = [line[line.index(b"] {") + 2:] for line in path.read_bytes().splitlines()
             if b'] {"compilation_metrics"' in line]
    configs = ("inductor_config", "dynamo_config", "functorch_config")
    for line in lines:
        whole = orjson.loads(line)
        assert all(isinstance(whole["compilation_metrics"][c], str) for c in configs)  # (what it is about)
        meta, error = loads_metadata(line, cut_configs=True)
        assert not error
        event = whole["compilation_metrics"]
        digest = config_digest(event["dynamo_config"], event["pytorch_version"])
        whole["compilation_metrics"] = {k: v for k, v in event.items() if k not in configs} | {CONFIG_DIGEST: digest}
        assert meta == whole and list(meta["compilation_metrics"]) == list(whole["compilation_metrics"])
    index = open_index(str(path))
    nodes = [n for n in index.nodes.values() if n.metrics is not None]
    assert len(nodes) == len(lines)
    assert not [n for n in nodes if set(n.metrics) & set(configs)]
    assert all(settings_of(n.compile).config for n in nodes)


def test_a_compile_s_settings_are_read_from_disk_once_per_distinct_config(monkeypatch):
    """Compiles that ran with the same config (their metrics keep its md5) read it once: --report
    of 10,000 compile ids read a 40 KB line 5,336 times. Each compile's settings are those a
    read of its own record gives."""
    from tlview.domain import settings
    from tlview.index.indexing import open_index
    from tlview.source.trace_records import TraceRecords, config_digest

    reads = []
    event_strings = TraceRecords.event_strings
    monkeypatch.setattr(TraceRecords, "event_strings", lambda self, rec, names: reads.append(rec) or
                        event_strings(self, rec, names))
    monkeypatch.setattr(settings, "_BY_DIGEST", {})
    compiles = [n.compile for n in open_index(str(CORPUS / "recompiles" / "trace")).nodes.values()
                if n.metrics is not None]
    assert len({id(c) for c in compiles}) > 3
    told = [settings.settings_of(c) for c in compiles]
    assert len(reads) == 1 and all(s is told[0] and s.config for s in told)
    for compile_ in compiles:  # each as a read of its own record tells it
        compile_.settings_read = None
        monkeypatch.setattr(settings, "_BY_DIGEST", {})
        assert settings.settings_of(compile_) == told[0]
    assert len(reads) == 1 + len(compiles)
    # another torch version with the same config text is another digest
    assert config_digest("{}", "2.15.0") != config_digest("{}", "2.13.0") != config_digest("{ }", "2.13.0")
