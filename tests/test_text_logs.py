"""TORCH_LOGS text alone tells what the trace of the same run tells: failures, graphs, guards,
output code, functions; on every real run with both a trace and its text, and on a text log a
typical user sets (`recompiles,graph_breaks,guards,output_code,graph_code`, no trace)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import CORPUS, GENERATED, json_for, run_cli, without_paths

TEXT_FAILURES = GENERATED / "text_failures"
TAG = re.compile(r"^(?:\[rank(\d+)\]:)?[VIWEC]\d{4} \S+ \d+ \S+\] \[([!0-9/_]+)\] "
                 r"\[__(graph_code|guards|output_code)\]")
RUNS = sorted({p.parent for p in Path(CORPUS).glob("*/torch_logs.txt")} |
              {p.parent for p in GENERATED.rglob("torch_logs.txt") if (p.parent / "trace").is_dir()
               and "verdict" not in p.parts})  # (torch.export's failures are never in the text)
# every text log of ours that logs graphs, guards or output code
TEXTS = sorted(p for p in CORPUS.parent.rglob("torch_logs*.txt") if "peer" not in p.parts
               and any(TAG.match(line) for line in p.read_text(errors="replace").split("\n")))


def _by_id(doc) -> dict:
    return {(c["rank"], c["id"]): c for c in doc["compiles"]}


@pytest.mark.parametrize("run", RUNS, ids=lambda p: str(p.relative_to(CORPUS.parent)))
def test_text_tells_the_failures_and_recompiles_of_its_trace(run):
    text, trace = json_for(run / "torch_logs.txt"), json_for(run / "trace")
    assert text["totals"]["errors"] == trace["totals"]["errors"]
    assert text["totals"]["recompiles"] == trace["totals"]["recompiles"]
    shown = _by_id(text)
    for key, compile_ in _by_id(trace).items():
        if not compile_["fail_type"]:
            continue
        assert shown[key]["status"] == "error", key
        if shown[key]["fail_type"] is None:  # raised to the program, never logged (fullgraph=True)
            assert "its exception went to the program" in shown[key]["fail_reason"], key
        else:
            assert shown[key]["fail_type"] == compile_["fail_type"], key
            assert shown[key]["fail_reason"].split("\n")[0] == compile_["fail_reason"].split("\n")[0], key


@pytest.mark.parametrize("text", TEXTS, ids=lambda p: str(p.relative_to(CORPUS.parent)))
def test_tagged_graphs_guards_and_code_are_artifacts(text):
    tags: dict = {}
    for line in text.read_text(errors="replace").split("\n"):
        if m := TAG.match(line):
            cid = m.group(2) if not m.group(2).startswith("!") or "/" in m.group(2) else m.group(2) + "/-/-"
            tags.setdefault((int(m.group(1)) if m.group(1) else None, cid), set()).add(m.group(3))
    artifacts = {key: set(c["artifacts"]) for key, c in _by_id(json_for(text)).items()}
    assert {key: names - artifacts.get(key, set()) for key, names in tags.items()
            if names - artifacts.get(key, set())} == {}


@pytest.mark.parametrize("name", ["torch_logs.txt", "torch_logs_typical.txt"])
def test_failures_only_the_text_shows(name):
    """Four compiles fail under suppress_errors: WON'T CONVERT with no compile id tells each. In
    the typical log two of them have no line with their id at all: the next frame ids are taken."""
    doc = json_for(TEXT_FAILURES / name)
    expected = json.loads((TEXT_FAILURES / "expected.json").read_text())
    by_id = {c["id"]: c for c in doc["compiles"]}
    if name == "torch_logs.txt":  # fullgraph=True: raised to the program, only +dynamo lines show it
        assert (by_id["4/0"]["status"], by_id["4/0"]["fail_type"]) == ("error", None)
    else:
        assert "4/0" not in by_id  # the typical log has no line of it
    for cid in ("0/0", "1/0", "2/0", "3/0"):
        truth = expected["per_compile_id"][cid]
        assert by_id[cid]["status"] == "error"
        assert by_id[cid]["fail_type"] == truth["fail_type"]
        assert by_id[cid]["fail_reason"].split("\n")[0] == truth["fail_reason_first_line"]
    functions = {c["id"]: (c["function"], c["location"]) for c in doc["compiles"]}
    for gave_up in expected["wont_convert"]:  # the function and place WON'T CONVERT names
        assert gave_up["function"] in {f for f, _ in functions.values()}
    assert functions["5/1"][0] == "scale_by" and functions["7/0"][0] == "torch_dynamo_resume_in_with_print_at_71"
    assert by_id["5/1"]["recompile_reasons"][0].startswith("5/0: n == 2")
    assert by_id["6/0"]["status"] == "break" and by_id["7/0"]["status"] == "ok"
    failure = next(d for d in by_id["0/0"]["diagnosis"] if d["kind"] == "failure")
    assert failure["cause"] == "backend_compiler_failed"


def test_an_uncaught_compile_exception_fails_the_compile_under_way():
    """The job died: its traceback (no log prefix) ends the text."""
    doc = json_for(GENERATED / "crash" / "torch_logs_typical.txt")
    by_id = {c["id"]: c for c in doc["compiles"]}
    assert by_id["3/0"]["status"] == "error" and by_id["3/0"]["fail_type"] == "BackendCompilerFailed"
    assert [c["id"] for c in doc["compiles"] if c["status"] == "error"] == ["3/0"]
    assert by_id["3/0"]["function"] == "doomed"


def test_generator_frames_refused_inside_a_compile_are_not_its_failures():
    """`WON'T CONVERT <genexpr>` lines carry the tag of the compile under way: not its failure."""
    doc = json_for(GENERATED / "compiled_autograd" / "torch_logs.txt")
    assert doc["totals"]["errors"] == 0
    assert all(c["status"] != "error" for c in doc["compiles"])


def test_costs_are_unknown_not_zero_in_text(monkeypatch, tmp_path):
    """A text with one record per compile id (TORCH_LOGS=recompiles) tells no compile's time."""
    path = tmp_path / "recompiles_only.txt"
    path.write_text("".join(line for line in (CORPUS / "recompiles" / "torch_logs.txt").read_text()
                            .splitlines(keepends=True) if "[__recompiles" in line))
    run = json_for(path)["run_summary"]
    assert run["recompiling_frames"] and run["total_compile_seconds"] is None
    assert all(f["seconds"] is None and f["recompile_seconds"] is None for f in run["recompiling_frames"])
    monkeypatch.setenv("COLUMNS", "200")
    code, report = run_cli("--report", str(path))
    assert code == 0 and "total compile time unknown" in report and "0.0 s" not in report


def _prefixed(text: str) -> str:
    """What a terminal and torchrun add: torchrun's tee prefix, colour at the start of lines and
    bold around the compile id."""
    out = []
    for i, line in enumerate(text.split("\n")):
        if not line:
            out.append(line)
            continue
        line = re.sub(r"\] (\[[!0-9/_]+\])", "] \x1b[1m\\1\x1b[0m", line, count=1)
        out.append(f"[default0]:\x1b[3{i % 7}m{line}\x1b[0m" if i % 3 else f"[default0]:{line}")
    return "\n".join(out)


def test_ansi_colour_and_torchrun_prefixes_read_the_same(tmp_path):
    source = CORPUS / "graph_breaks" / "torch_logs.txt"
    path = tmp_path / "torch_logs.txt"
    path.write_text(_prefixed(source.read_text()))
    plain, coloured = json_for(source), json_for(path)
    assert coloured["sources"][0]["glog_lines"] == plain["sources"][0]["glog_lines"]
    assert without_paths(coloured)["compiles"] == without_paths(plain)["compiles"]
    assert coloured["totals"] == plain["totals"]


def test_four_ranks_through_torchrun_tee(tmp_path):
    """`torchrun --tee 3`: `[default2]:[rank2]:V1122 ...` lines of four ranks, interleaved."""
    doc = json_for(GENERATED / "multi_rank4" / "torch_logs.txt")
    expected = json.loads((GENERATED / "multi_rank4" / "expected.json").read_text())
    assert doc["ranks"] == [0, 1, 2, 3]
    for per_rank in expected["per_rank"]:
        ids = [c["id"] for c in doc["compiles"] if c["rank"] == per_rank["rank"]]
        shown = {cid for cid in per_rank["compile_ids"]}
        assert set(ids) <= shown and ids, per_rank["rank"]  # the text logs a subset (no graph lines)


def test_prints_and_warnings_inside_a_record_are_kept_apart(tmp_path):
    """A user's print and a Python warning land in the middle of a multi-line record: the record
    reads the same, and the stray lines stay readable in the run's own log."""
    lines = (CORPUS / "recompiles" / "torch_logs.txt").read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if "[__recompiles_verbose] Recompiling function" in line)
    stray = ["step 3 loss 0.25", "/home/user/job/x.py:3: UserWarning: something", "  warnings.warn(x)"]
    path = tmp_path / "torch_logs.txt"
    path.write_text("\n".join(lines[:at + 2] + stray + lines[at + 2:]))
    plain = without_paths(json_for(CORPUS / "recompiles" / "torch_logs.txt"))
    mixed = without_paths(json_for(path))
    assert mixed["compiles"] == plain["compiles"]
    from tlview.index.indexing import open_index

    index = open_index(str(path))
    untagged = "\n".join(r.load_text() for r in index.untagged)
    assert all(line in untagged for line in stray)


def test_errors_a_backend_logged_and_caught_are_no_failure(gpu_perf_runs):
    """max-autotune on an H200 (torch 2.11): Inductor logged two ERROR tracebacks under [0/0]
    ("No valid triton configs. OutOfMemoryError: out of resource: triton_mm", a choice that did
    not fit) and went on: "Step 2: done compiler function inductor". The text read them as the
    compile's failure; the trace of the same run says it compiled."""
    from tlview.index.indexing import open_index

    for mode in ("bug", "warm"):
        run = gpu_perf_runs / "gpu_perf" / f"autotune.{mode}"
        text, trace = open_index(str(run / "torch_logs.txt")), open_index(str(run / "trace"))
        for index in (text, trace):
            (compile_,) = [c for f in index.frames.values() for c in f.compiles]
            assert compile_.failure is None and compile_.status.word == "ok", (mode, compile_.status)
        (node,) = [n for f in text.frames.values() for c in f.compiles for n in c.attempts]
        assert len(node.errors) == 2  # still told (the Log pane), not as a failure


def test_a_frame_torch_skips_for_no_ops_in_its_own_words_is_no_failure(gpu_perf_runs):
    """torch 2.11 says "[3/0] Received signal to skip frame (without graph break): No ops traced
    for the FX graph" (the optimizer's resume function): nothing to compile, no failure (the
    text said "failure [3/0]: the compile stopped while tracing and logged no reason")."""
    from tlview.index.indexing import open_index

    index = open_index(str(gpu_perf_runs / "gpu_perf" / "opt_step.bug" / "torch_logs.txt"))
    compiles = {c.head.id: c for f in index.frames.values() for c in f.compiles}
    assert compiles["3/0"].failure is None
    assert not any(c.failure for c in compiles.values())
