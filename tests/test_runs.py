"""Runs of classes tlview had not seen (each made by a program under fixtures/generated): export,
a job re-run into one folder, compiled autograd, four gloo ranks, and the answers it gives."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import CORPUS, GENERATED, json_for, run_cli

from tlview.index.indexing import open_index

EXPORT = GENERATED / "export"
RERUN = GENERATED / "rerun"
ANSWERS = GENERATED / "answers"


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

def test_recompile_cost_is_its_own_and_ranks_the_frames():
    run = json_for(CORPUS / "recompiles" / "trace")["run_summary"]
    frames = run["recompiling_frames"]
    assert [f["recompile_seconds"] for f in frames] == sorted((f["recompile_seconds"] for f in frames), reverse=True)
    for frame in frames:
        assert 0 < frame["recompile_seconds"] < frame["seconds"]  # the first compile is not a recompile's cost


def _diagnoses(doc) -> dict:
    return {(c["id"], d["kind"]): d for c in doc["compiles"] for d in c["diagnosis"]}


@pytest.mark.parametrize("log", ["trace", "torch_logs.txt"])
def test_fixes_agree_with_pytorch_and_apply_to_their_class(log):
    found = _diagnoses(json_for(ANSWERS / log))
    logging_call = found[("0/0", "graph_break")]  # logging.warning: the break is inside the stdlib
    assert logging_call["cause"] == "print_or_logging" and "answers.py:36" in logging_call["why"]
    assert "ignore_logging_functions.add(logging.warning)" in logging_call["fix"]
    logger = found[("2/0", "graph_break")]  # log.warning: PyTorch's hint names ignore_logging_functions
    assert "ignore_logging_functions.add(log.warning)" in logger["fix"] and "reorderable" not in logger["fix"]
    backward = found[("4/0", "graph_break")]
    assert backward["cause"] == "backward_in_compiled" and "generators" not in backward["fix"]
    assert "torch._dynamo.config.trace_autograd_ops = True" in backward["fix"]
    flag = found[("6/1", "recompile")]  # `self.use_bias == True`
    assert flag["cause"] == "python_flag" and "specialize" not in flag["fix"]
    assert found[("8/2", "recompile")]["why"] == "input 'x' changed dtype: Float -> Double"


def test_print_keeps_the_print_fix():
    found = _diagnoses(json_for(CORPUS / "graph_breaks" / "trace"))
    assert "reorderable_logging_functions.add(print)" in found[("0/0", "graph_break")]["fix"]


def test_a_custom_op_without_a_fake_kernel_is_told_to_register_one():
    found = _diagnoses(json_for(GENERATED / "text_failures" / "trace"))
    failure = found[("2/0", "failure")]
    assert failure["cause"] == "missing_fake_kernel" and "tlv::mysin" in failure["why"]
    assert "register_fake" in failure["fix"] and "VERBOSE" not in failure["fix"]


def test_the_cause_of_a_recompile_is_its_failure_against_the_latest_compile():
    """8/2 lists a failure against 8/1 (the dynamic entry: the cause) and one against 8/0."""
    index = open_index(str(ANSWERS / "trace"))
    node = index.node(None, "8/2")
    assert [str(r.failed_id) for r in node.reasons] == ["8/1", "8/0"]
    assert str(node.recompile_cause.failed_id) == "8/1"
    doc = json_for(ANSWERS / "trace")
    assert [d["kind"] for c in doc["compiles"] if c["id"] == "8/2" for d in c["diagnosis"]] == ["recompile"]


@pytest.mark.parametrize("log", ["trace", "torch_logs.txt"])
def test_a_restart_that_is_no_graph_break_has_a_status_of_its_own(log):
    doc = json_for(ANSWERS / log)
    by_id = {c["id"]: c for c in doc["compiles"]}
    assert by_id["7/1"]["status"] == "restart"
    # the restart is the attempt that replaced the one thrown away, from the trace and the text alike
    assert _diagnoses(doc)[("7/1_1", "restart")]["cause"] == "tensorify_scalar"
    assert doc["totals"]["graph_breaks"] == 3 and doc["totals"]["compiles_with_graph_break"] == 3


def test_every_line_naming_a_compile_id_names_its_rank(monkeypatch):
    for run in (CORPUS / "distributed" / "trace", GENERATED / "multi_rank4" / "trace", RERUN / "trace"):
        code, report = run_cli("--report", str(run))
        assert code == 0
        named = [line for line in report.split("\n") if re.search(r"\[\d+/\d+", line)]
        assert named and all("rank" in line or "process" in line for line in named), run


def test_divergence_tells_one_compile_id_of_different_code():
    div = json_for(GENERATED / "multi_rank4" / "trace")["divergence"]
    entry = next(e for e in div["functions"] if e["id"] == "2/0")
    assert {g["value"]: g["ranks"] for g in entry["groups"]} == {
        "torch_dynamo_resume_in_report_at_32": [2], "extra_stats": [3]}


def test_report_in_a_pipe_keeps_lines_and_reasons_whole():
    code, report = run_cli("--report", str(GENERATED / "text_failures" / "trace"))
    assert code == 0
    assert max(len(line) for line in report.split("\n")) > 120  # not wrapped at 80 columns
    failures = report[report.index("\nFailures"):]
    assert "Explanation: Dynamo failed to run FX node with fake tensors" in failures  # not its first line only
    assert "/tmp/job/text_failures.py" in report  # paths whole


# ---- driving ----------------------------------------------------------------------------------

def test_run_takes_everything_after_it_as_the_command():
    from tlview.cli import split_command

    assert split_command(["--run", "--", "python", "train.py", "--lr", "3"]) == (["--run"], ["python", "train.py", "--lr", "3"])
    assert split_command(["--poll", "--run", "python", "x.py"]) == (["--poll", "--run"], ["python", "x.py"])


def test_run_of_a_missing_program_is_one_line(capsys):
    from tlview.cli import main

    assert main(["--run", "--", "/nonexistent/tool", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot run /nonexistent/tool" in err



def test_a_wrapped_job_ends_whole(tmp_path):
    """`--run -- sh -c 'python job.py'`: after `q` the python under the shell ran on; the job is
    a process group of its own, ended whole."""
    import sys
    import time

    from tlview.source.job import Job

    pid_file = tmp_path / "child.pid"
    child = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    job = Job(["sh", "-c", f"{sys.executable} -c \"{child}\"; echo after"], "")
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        job.process.poll()  # (a condition, not a sleep: the child writes its pid once it runs)
    pid = int(pid_file.read_text())
    job.stop()
    try:
        os.kill(pid, 0)
        alive = not Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (ProcessLookupError, FileNotFoundError):
        alive = False
    assert not alive, "the job's python outlived the job"
    shutil.rmtree(job.folder, ignore_errors=True)
