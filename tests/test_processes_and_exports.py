"""Whose records these are, on runs made by programs under fixtures/generated: torch.export's
records of no compile id (an Export entry), a job re-run into one folder (two processes), a rank
file with its rank, compiled autograd, and the report naming each compile id's rank or process.
(Their fixes, causes and statuses: test_classify.py, test_causes.py, test_verdict.py.)"""

from __future__ import annotations

import json
import re

from conftest import (
    CORPUS,
    GENERATED,
    SIZE,
    json_for,
    plain,
    press,
    ready,
    run_cli,
    until,
)

from tlview.index.indexing import open_index
from tlview.ui.app import TlviewApp

EXPORT = GENERATED / "export"
RERUN = GENERATED / "rerun"


# ---- reading -------------------------------------------------------------------------------------

def test_metrics_with_a_null_compile_id_are_a_valid_record():
    """`"compile_id": null` in compilation_metrics: valid JSON, so a record, never "bad json"."""
    doc = json_for(EXPORT / "trace")
    expected = json.loads((EXPORT / "expected.json").read_text())["files"]
    assert doc["totals"]["records"] == expected["trace/dedicated_log_torch_trace_85xs55cw.log"]["records"] == 68
    assert doc["problems"] == []
    outside = doc["outside_compiles"][0]
    assert outside["records"]["compilation_metrics"] == 1 and outside["records"]["guard_added_fast"] == 2


def test_stacks_resolve_through_the_string_table_of_their_process():
    """draft_export writes its own file, whose stacks use string ids of the main file."""
    index = open_index(str(EXPORT / "dtrace"))
    events = [d for n in index.outside.values() for d in n.dynamic]
    assert events and {e.source.path for e in events} == {s.path for s in index.sources}  # both files
    stacks = [frame for event in events for frame in event.user_stack()]
    assert stacks and not [f for f in stacks if "unknown string" in f]
    assert any(f.startswith("/tmp/job/export.py:") for f in stacks)


def test_two_runs_in_one_folder_are_two_processes():
    """A job run twice into one TORCH_TRACE folder: two files with no rank, two processes (newest
    first), each with its own compile ids; each run's text joins its process (one pid)."""
    doc = json_for(RERUN)
    expected = json.loads((RERUN / "expected.json").read_text())["files"]
    by_file = {path.rsplit("/", 1)[-1]: info for path, info in expected.items()}
    processes = [s for s in doc["sources"] if s["kind"] == "trace"]
    for source in processes:
        info = by_file[source["path"].rsplit("/", 1)[-1]]
        assert source["pid"] == info["pid"]
        mine = [c["id"] for c in doc["compiles"] if c["source"] == source["path"]]
        assert mine == info["compile_ids"] and {c["process"] for c in doc["compiles"]
                                                 if c["source"] == source["path"]} == {info["pid"]}
    assert doc["totals"]["compile_ids"] == sum(len(i["compile_ids"]) for i in by_file.values())
    assert {s["path"].rsplit("/", 1)[-1]: s["pids"] for s in doc["sources"] if s["kind"] == "text"} == {
        "torch_logs_run1.txt": [min(i["pid"] for i in by_file.values())],
        "torch_logs_run2.txt": [max(i["pid"] for i in by_file.values())]}
    index = open_index(str(RERUN))
    newest = max(by_file.values(), key=lambda i: i["first_record_timestamp"])
    assert [g.pid for g in index.groups()] == [newest["pid"], min(by_file.values(), key=lambda i: i[
        "first_record_timestamp"])["pid"]]
    assert all("process" in index.group_label(g) and ".log" in index.group_label(g) for g in index.groups())


def test_a_rank_file_still_joins_its_rank():
    doc = json_for(CORPUS / "distributed" / "trace")
    assert {(c["rank"], c["process"]) for c in doc["compiles"]} == {(0, None), (1, None)}


def test_a_compiled_autograd_capture_is_not_a_compile():
    doc = json_for(GENERATED / "compiled_autograd" / "trace")
    ids = [c["id"] for c in doc["compiles"]]
    assert "!0/-/-" in ids and "!1/-/-" in ids
    assert doc["totals"]["compiles"] == len({i.split("_")[0] for i in ids if not i.endswith("/-/-")}) == 5


def test_export_records_are_an_entry_of_their_own():
    doc = json_for(EXPORT / "dtrace")
    assert doc["unknown_record_kinds"] == {}
    outside = doc["outside_compiles"]
    assert len(outside) == 1 and outside[0]["records"]["exported_program"] == 4
    assert {"export", "exported_program", "guard_added"} <= set(outside[0]["artifacts"])
    assert doc["totals"]["compile_ids"] == 1  # the records of no compile id are not a compile


# ---- answers -----------------------------------------------------------------------------------


def test_every_line_naming_a_compile_id_names_its_rank(monkeypatch):
    for run in (CORPUS / "distributed" / "trace", GENERATED / "multi_rank4" / "trace", RERUN / "trace"):
        code, report = run_cli("--report", str(run))
        assert code == 0
        named = [line for line in report.split("\n") if re.search(r"\[\d+/\d+", line)]
        assert named and all("rank" in line or "process" in line for line in named), run


def test_report_in_a_pipe_keeps_lines_and_reasons_whole():
    code, report = run_cli("--report", str(GENERATED / "text_failures" / "trace"))
    assert code == 0
    assert max(len(line) for line in report.split("\n")) > 120  # not wrapped at 80 columns
    failures = report[report.index("\nFailures"):]
    assert "Explanation: Dynamo failed to run FX node with fake tensors" in failures  # not its first line only
    assert "/tmp/job/text_failures.py" in report  # paths whole


async def test_the_export_entry_shows_programs_and_guards():
    from tlview.ui.payload_view import PayloadView

    app = TlviewApp(str(GENERATED / "export" / "dtrace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        entry = app.model.roots[0]
        assert entry.kind == "outside" and entry.title.startswith("export")
        app.tree.select_key(entry.key)
        await press(pilot, "1")
        await until(pilot, lambda: "exported_program" in plain(app.query_one("#summary-body")))
        await press(pilot, "2")
        view = app.query_one("#graph-view", PayloadView)
        await until(pilot, lambda: view.text.startswith("ExportedProgram:"))
        await press(pilot, "3")
        guards = app.query_one("#guards-pane").query_one(PayloadView)
        await until(pilot, lambda: "Eq(s77, 6)" in guards.text)
        assert "/tmp/job/export.py:37 in forward" in guards.text and "unknown string" not in guards.text
