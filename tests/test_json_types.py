"""The records --json writes have exactly the keys json_types declares (what mypy checks the report
against), on the real fixture traces: most are dict literals mypy checks, but a diagnosis and the
user's lines are made in lower layers (Diagnosis.as_dict, Excerpt.as_dict) and only declared here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tlview.index.indexing import open_index
from tlview.report import json_types
from tlview.report.summary import build_summary
from tlview.source.user_source import SourceFiles

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def keys_of(declared) -> set[str]:
    """The keys a record of `declared` has in --json (rank_fold's are added for --report alone)."""
    return set(declared.__required_keys__ | declared.__optional_keys__) - set(json_types.RankFolded.__optional_keys__)


@pytest.fixture(scope="module")
def summaries() -> list[json_types.Summary]:
    runs = ("fixes/control_flow_op", "generated/export", "corpus/graph_breaks", "generated/multi_rank4",
            "corpus/distributed",  # (a DDP split)
            "peer/tlparse-tests/inputs/simple_corrupted_json.log")
    out = []
    for run in runs:
        index = open_index(str(FIXTURES / run), parallel_ok=False, verify_md5=True)  # (as the cli)
        try:
            out.append(build_summary(index, sources=SourceFiles([])))
        finally:
            index.close()
    return out


def test_the_summary_has_the_declared_keys_in_order(summaries):
    for summary in summaries:
        assert list(summary) == list(json_types.Summary.__annotations__)


def test_each_record_has_the_declared_keys(summaries):
    seen: dict[str, int] = {}

    def check(record: dict, declared, some_have: frozenset[str] = frozenset()) -> None:
        """`some_have`: keys only some records have (a compile's ddp_split)."""
        assert set(record) - some_have == keys_of(declared) - some_have, declared.__name__
        seen[declared.__name__] = seen.get(declared.__name__, 0) + 1

    def check_problems(entry) -> None:
        for problem in entry["verdict"]:
            check(problem, json_types.CompileProblemEntry, frozenset(keys_of(json_types._PerfFields)))
            assert ("severity" in problem) == (problem["kind"] == "perf")
            if problem["source"] is not None:
                check(problem["source"], json_types.SourceExcerptEntry)
        for diagnosis in entry["diagnosis"]:
            check(diagnosis, json_types.DiagnosisEntry)

    for summary in summaries:
        for source in summary["sources"]:
            kind_keys = {"trace": {"rank", "rank_group", "pid", "started", "md5_ok", "md5_bad", "record_kinds"},
                         "text": {"lines", "glog_lines", "ranks", "pids"}}[source["kind"]]
            assert set(source) == set(json_types._SourceFileFields.__required_keys__) | kind_keys
            assert kind_keys <= keys_of(json_types.SourceFileEntry)
        for entry in summary["compiles"]:
            check(entry, json_types.CompileEntry, frozenset(keys_of(json_types._CompileExtras)))
            if "ddp_split" in entry:
                check(entry["ddp_split"], json_types.DdpSplitEntry)
                for bucket in entry["ddp_split"]["buckets"]:
                    check(bucket, json_types.DdpBucketEntry)
            check_problems(entry)
            for gb in entry["graph_breaks"]:
                check(gb, json_types.GraphBreakEntry)
            for problem in entry["problems"]:
                check(problem, json_types.InputProblemEntry)
        for outside in summary["outside_compiles"]:
            check(outside, json_types.OutsideEntry)
            check_problems(outside)
        for group in summary["graph_break_summary"]:
            check(group, json_types.GraphBreakGroup)
        for problem in summary["problems"]:
            check(problem, json_types.InputProblemEntry)
    # every kind of record was seen (the fixtures have each)
    assert set(seen) == {"CompileEntry", "CompileProblemEntry", "SourceExcerptEntry", "DiagnosisEntry",
                         "GraphBreakEntry", "InputProblemEntry", "OutsideEntry", "GraphBreakGroup",
                         "DdpSplitEntry", "DdpBucketEntry"}, seen
