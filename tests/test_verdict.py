"""One verdict per compile: every view, count and exit code says the same thing, on every fixture
and on variants made from them (traces cut at record boundaries, right after every failure record;
TORCH_LOGS text with each category taken out). Then each case of issue #20 on a run of our own
(fixtures/generated/verdict/, made with torch 2.15 and 2.13: see its README)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from conftest import (
    CORPUS,
    GENERATED,
    PEER,
    SIZE,
    compile_entries,
    diagnoses_by_kind,
    json_for,
    plain,
    press,
    ready,
    run_cli,
    type_in,
    until,
)
from rich.console import Console

from tlview.index.indexing import open_index
from tlview.index.registry import KINDS
from tlview.report.rich_text import counted
from tlview.report.summary import build_summary
from tlview.report.text_report import render_report
from tlview.ui.app import TlviewApp
from tlview.ui.status_line import StatusLine

ANSWERS = GENERATED / "answers"
VERDICT = GENERATED / "verdict"
WORDS = {"recompiles": "recompile", "graph_breaks": "graph_break", "restarts": "restart", "errors": "failure"}
FAILURE_RECORD = re.compile(rb'"dynamo_error"|"make_fx_fail_partial"|"fail_type": "')


def _inputs() -> list[Path]:
    """Every trace folder and TORCH_LOGS text of the fixtures (peer: a few of tlparse's)."""
    roots = [CORPUS, GENERATED]
    found = {p.parent for root in roots for p in root.rglob("*.log") if p.parent.name == "trace"}
    found |= {p for root in roots for p in root.rglob("*.txt")
              if p.name.startswith(("torch_logs", "no_", "only_")) and ".stdout" not in p.name}
    found |= {PEER / "inputs" / name for name in ("comp_metrics.log", "cache_hit_miss.log", "export.log")}
    return sorted(found)


def _cut_variants(tmp: Path) -> list[Path]:
    """Traces cut at record boundaries: right after every failure record, and at a third and two
    thirds of their records (a job that died, a trace still being written)."""
    out = []
    sources = [*CORPUS.glob("recompiles/trace/*.log"), *CORPUS.glob("graph_breaks/trace/*.log"),
               *GENERATED.glob("failures/trace/*.log"), *GENERATED.glob("crash/trace/*.log"),
               *VERDICT.glob("export_*/trace/*.log")]
    for source in sources:
        data = source.read_bytes()
        starts = [m.start() for m in re.finditer(rb"^V\d{4} ", data, re.MULTILINE)]
        cuts = {starts[len(starts) // 3], starts[2 * len(starts) // 3]}
        for i, start in enumerate(starts):
            line_end = data.find(b"\n", start)
            if FAILURE_RECORD.search(data[start:line_end]):
                cuts.add(starts[i + 1] if i + 1 < len(starts) else len(data))  # its payload whole
        for cut in sorted(cuts):
            path = tmp / f"{source.parent.parent.name}_{cut}" / source.name
            path.parent.mkdir(parents=True)
            path.write_bytes(data[:cut])
            out.append(path.parent)
    return out


def _without_category(text: Path, tmp: Path) -> list[Path]:
    """The text with each TORCH_LOGS category taken out: each `[__artifact]` tag, and `+dynamo`
    (the untagged DEBUG/INFO lines of torch/_dynamo)."""
    lines = text.read_bytes().splitlines(keepends=True)
    tags = sorted({m for line in lines for m in re.findall(rb"\] (?:\[[^\]]*\] )?\[__(\w+)\]", line)})
    out = []
    for tag in [*tags, b"+dynamo"]:
        if tag == b"+dynamo":
            kept = [ln for ln in lines if not (re.match(rb"^(?:\[rank\d+\]:)?[VI]\d{4} .*torch/_dynamo/", ln)
                                              and b"[__" not in ln)]
        else:
            kept = [ln for ln in lines if b"[__" + tag + b"]" not in ln]
        path = tmp / f"{text.parent.name}_{text.stem}_without_{tag.decode().lstrip('+')}.txt"
        path.write_bytes(b"".join(kept))
        out.append(path)
    return out


@pytest.fixture(scope="session")
def variants(tmp_path_factory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("verdict_variants")
    texts = [CORPUS / "graph_breaks" / "torch_logs.txt", CORPUS / "recompiles" / "torch_logs.txt",
             GENERATED / "text_failures" / "torch_logs.txt"]
    return _cut_variants(tmp) + [v for text in texts for v in _without_category(text, tmp)]


def _check_agreement(path: Path) -> dict:
    """--json's totals, the compiles it lists, the --report Totals line and --fail-on's exit code
    for each word say the same thing."""
    index = open_index(str(path), verify_md5=True)
    try:
        doc = build_summary(index)
    finally:
        index.close()
    totals = doc["totals"]
    entries = doc["compiles"] + doc["outside_compiles"]
    listed = [p for e in entries for p in e["verdict"]  # an export's failure: once; PyTorch's own
              if (e.get("id") is None or p["compile_id"] == e["id"]) and p["cause"] != "by_design"]  # breaks apart
    for word, kind in WORDS.items():
        assert totals[word] == sum(p["kind"] == kind for p in listed), (path, word)
    assert totals["compile_ids"] == len(doc["compiles"]), path
    heads = {}
    for entry in doc["compiles"]:
        heads.setdefault((entry["rank"], entry["process"], entry["id"].split("_")[0]), []).append(entry)
    for attempts in heads.values():
        kinds = {p["kind"] for e in attempts for p in e["verdict"]}
        status = attempts[0]["status"]
        assert all(e["status"] == status for e in attempts)
        if attempts[0]["function"] == "torch.export":  # its failure is its Export entry's, when its own
            export_failed = any(p["kind"] == "failure" for e in doc["outside_compiles"] for p in e["verdict"])
            assert status in ("ok", "error") and (status != "error" or export_failed), (path, attempts[0]["id"])
            continue
        assert (status == "error") == bool({"failure", "frame_skipped"} & kinds), (path, attempts[0]["id"])
        if status == "break":
            assert "graph_break" in kinds, (path, attempts[0]["id"])
    assert totals["compiles_with_graph_break"] == sum(
        any(p["kind"] == "graph_break" for e in a for p in e["verdict"]) for a in heads.values())
    console = Console(file=io.StringIO(), width=100_000, color_system=None)
    render_report(doc, console)
    line = next(ln for ln in console.file.getvalue().splitlines() if ln.startswith("Totals"))
    for word, noun in (("recompiles", "recompile"), ("graph_breaks", "graph break"),
                       ("restarts", "restart"), ("errors", "failure")):
        assert re.search(rf"\b{totals[word]} {noun}s?\b", line), (path, line, word)
    for word, noun in WORDS.items():
        code, out = run_cli("--fail-on", word, "--no-verify", str(path))
        assert code == (1 if totals[word] else 0), (path, word, out)
        lines = out.splitlines()
        assert all(line.startswith(f"found {noun} (") for line in lines), (path, word, out)
        ids = [i for line in lines for i in line.rsplit(" [", 1)[1].rstrip("]").split(", ")]
        assert len(ids) == totals[word], (path, word, out)  # each problem once, by its compile id
    return doc


@pytest.mark.parametrize("path", _inputs(), ids=lambda p: str(p.relative_to(CORPUS.parent)))
def test_every_view_agrees_on_every_fixture(path):
    _check_agreement(path)


@pytest.mark.slow  # a big input: seconds
def test_every_view_agrees_on_cut_traces_and_texts_without_a_category(variants):
    assert len(variants) > 30
    for path in variants:
        _check_agreement(path)


# ---- the app: status line, filter words and jumps count the same compiles ------------------------

APP_INPUTS = [CORPUS / "recompiles" / "trace", VERDICT / "text_without" / "recompiles" / "no_recompiles.txt",
              VERDICT / "export_strict_fail" / "trace", GENERATED / "failures" / "trace"]


@pytest.mark.parametrize("path", APP_INPUTS, ids=lambda p: p.parent.name + "/" + p.name)
async def test_status_line_filters_and_jumps_agree_with_the_json(path):
    doc = json_for(path)
    totals = doc["totals"]
    app = TlviewApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        status = app.query_one(StatusLine)
        await until(pilot, lambda: counted(totals["compile_ids"], "compile id") in status.text)
        for word, noun in (("recompiles", "recompile"), ("graph_breaks", "graph break"), ("errors", "failure")):
            assert re.search(rf"\b{totals[word]} {noun}s?\b", status.text), (word, status.text)
        for word in ("recompiles", "graph_breaks", "errors"):
            kind = WORDS[word]
            expected = {e["id"] for e in doc["compiles"] if any(p["kind"] == kind for p in e["verdict"])}
            expected = {cid.split("_")[0] for cid in expected}
            if any(p["kind"] == kind for e in doc["outside_compiles"] for p in e["verdict"]):
                # the export failed: its Export entry, and its compile ids, which are part of it
                expected |= {"-/-", *(c["id"] for c in doc["compiles"] if c["function"] == "torch.export")}
            await press(pilot, "slash")
            await type_in(pilot, word)
            await press(pilot, "enter")
            await until(pilot, lambda: f"filter: {word}" in status.text)
            shown = {e.node.id for e in compile_entries(app) if e.kind in ("compile", "outside")}
            assert shown == expected, word
            stops = app.model.matching(lambda e, k=kind: e.shows(_KIND[k]))
            assert {e.node.id for e in stops} == expected, word
            await press(pilot, "escape")
            await until(pilot, lambda: "filter:" not in status.text)



from conftest import CORPUS, GENERATED

from tlview.domain.verdict import Kind

_KIND = {k.key: k for k in Kind}


# ---- the cases of issue #20, each on a run of our own -------------------------------------------

def _cut_after_first(trace_dir: Path, needle: bytes, tmp: Path) -> Path:
    """The trace as a job that died right after the record holding `needle` left it."""
    source = next(trace_dir.glob("*.log"))
    data = source.read_bytes()
    at = data.index(needle)
    nxt = re.compile(rb"^V\d{4} ", re.MULTILINE).search(data, data.index(b"\n", at) + 1)
    path = tmp / "trace" / source.name
    path.parent.mkdir(parents=True)
    path.write_bytes(data[:nxt.start()])
    return path.parent


def test_a_job_that_died_after_a_failed_compile_fails_the_gate(tmp_path):
    cut = _cut_after_first(GENERATED / "failures" / "trace", b'"dynamo_error"', tmp_path)
    doc = json_for(cut)
    failed = [c for c in doc["compiles"] if c["status"] == "error"]
    assert failed and doc["totals"]["errors"] == len(failed) == 1
    assert failed[0]["fail_type"] == "BackendCompilerFailed"  # read from the dynamo_error's traceback
    code, out = run_cli("--fail-on", "errors", str(cut))
    assert code == 1 and f"[{failed[0]['id']}]" in out and "backend_compiler_failed" in out


def test_text_without_recompiles_counts_the_recompiles_it_implies():
    base = VERDICT / "text_without" / "recompiles"
    expected = json.loads((VERDICT / "text_without" / "expected.json").read_text())["recompiles"]["no_recompiles"]
    recompile_ids = expected["summary"]["recompile_ids"]
    doc = json_for(base / "no_recompiles.txt")
    assert doc["totals"]["recompiles"] == len(recompile_ids) == 8
    found = {c["id"]: c for c in doc["compiles"]}
    for cid in recompile_ids:
        causes = [(p["kind"], p["cause"]) for p in found[cid]["verdict"]]
        assert ("recompile", "not_logged") in causes, cid
    assert "TORCH_LOGS=recompiles" in found["0/1"]["verdict"][0]["why"]
    code, out = run_cli("--fail-on", "recompiles", str(base / "no_recompiles.txt"))
    assert code == 1 and "not_logged" in out
    trace = json_for(base / "trace" / "no_recompiles")
    assert trace["totals"]["recompiles"] == doc["totals"]["recompiles"]


def test_text_without_graph_breaks_counts_the_breaks_its_restarts_imply(tmp_path):
    text = CORPUS / "graph_breaks" / "torch_logs.txt"
    cut = tmp_path / "no_breaks.txt"
    cut.write_bytes(b"".join(ln for ln in text.read_bytes().splitlines(keepends=True)
                             if b"[__graph_breaks]" not in ln))
    doc = json_for(cut)
    broke = [c for c in doc["compiles"] if c["status"] == "break"]
    assert broke and doc["totals"]["graph_breaks"] == sum(len(c["graph_breaks"]) for c in doc["compiles"]) > 0
    assert {c["id"].split("_")[0] for c in broke} == {
        c["id"].split("_")[0] for c in doc["compiles"] if c["graph_breaks"]}
    assert doc["totals"]["restarts"] == sum(len(c["restart_reasons"]) for c in doc["compiles"]) == 6
    assert run_cli("--fail-on", "graph_breaks", str(cut))[0] == 1


def test_strict_export_that_failed_is_a_failure_of_its_export_entry():
    doc = json_for(VERDICT / "export_strict_fail" / "trace")
    assert doc["totals"]["errors"] == 1
    [export] = doc["outside_compiles"]
    assert export["status"] == "error"
    assert [(p["kind"], p["cause"], p["exception"]) for p in export["verdict"]] == [
        ("failure", "unsupported", "Unsupported")]
    assert all(c["function"] == "torch.export" and c["status"] == "error" for c in doc["compiles"])
    code, out = run_cli("--fail-on", "errors", str(VERDICT / "export_strict_fail" / "trace"))
    assert code == 1 and out.count("\n") == 1 and "export" in out


def test_nonstrict_export_that_failed_is_a_failure_not_a_missing_compile():
    doc = json_for(VERDICT / "export_nonstrict_fail" / "trace")
    assert doc["totals"]["errors"] == 1
    assert [p["cause"] for p in doc["outside_compiles"][0]["verdict"]] == ["export_trace_failed"]
    assert {c["status"] for c in doc["compiles"]} == {"error"}  # never "missing"
    report = run_cli("--report", str(VERDICT / "export_nonstrict_fail" / "trace"))[1]
    assert "make_fx" in report and "1 failure" in report


def test_exports_that_worked_are_export_entries_not_missing_compiles():
    doc = json_for(VERDICT / "export_ok" / "trace")
    assert [c["status"] for c in doc["compiles"]] == ["ok", "ok"]
    assert doc["totals"]["errors"] == 0 and doc["outside_compiles"][0]["status"] == "ok"


def test_the_refused_compile_names_its_function_and_place_everywhere():
    path = CORPUS / "recompiles" / "trace"
    doc = json_for(path)
    refused = next(c for c in doc["compiles"] if c["id"] == "3/4")
    assert refused["function"] == "pooled" and refused["location"].endswith("recompiles.py:37") or \
        refused["location"] is not None
    assert all(p["function"] == "pooled" for p in refused["verdict"])
    code, out = run_cli("--fail-on", "errors", str(path))
    assert code == 1 and "in pooled at" in out and " at ?" not in out


def test_a_compile_that_broke_without_a_restart_shows_it_with_its_own_count():
    doc = json_for(CORPUS / "graph_breaks" / "trace")
    branch = next(c for c in doc["compiles"] if c["id"] == "1/0")
    assert branch["status"] == "break" and not branch["restart_reasons"]
    assert [p["cause"] for p in branch["verdict"]] == ["data_dependent_branch"]


async def test_summary_shows_the_compiles_own_graph_breaks_not_the_process_total():
    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        entry = next(e for e in compile_entries(app) if e.node.id == "6/0")  # no break of its own
        app.tree.select_key(entry.key)
        await until(pilot, lambda: "[6/0]" in plain(app.query_one("#summary-body")))
        text = plain(app.query_one("#summary-body"))
        assert "graph break" not in text and "problems" in text  # (num_graph_breaks there says 5)
        entry = next(e for e in compile_entries(app) if e.node.id == "1/0")  # broke, no restart
        app.tree.select_key(entry.key)
        await until(pilot, lambda: "[1/0]" in plain(app.query_one("#summary-body")))
        assert "1 graph break" in plain(app.query_one("#summary-body"))


async def test_the_compile_whose_guard_failed_is_one_compile_in_every_view():
    path = CORPUS / "recompiles" / "trace"
    doc = json_for(path)
    by_id = {c["id"]: c for c in doc["compiles"]}
    assert by_id["2/2"]["recompile_of"] == ["2/0", "2/1"] and by_id["2/2"]["against"] == "2/1"
    report = run_cli("--report", str(path))[1]
    row = next(ln for ln in report.splitlines() if ln.lstrip("│ ").startswith("[2/2]"))
    assert "[2/1]" in row
    from tlview.diagnose.diff import recompile_diff

    index = open_index(str(path))
    assert recompile_diff(index, index.node(None, "2/2")).against.id == "2/1"
    app = TlviewApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        entry = next(e for e in compile_entries(app) if e.node.id == "2/2")
        app.tree.select_key(entry.key)
        await pilot.pause()
        app.open_entry(entry)
        await until(pilot, lambda: app.tree.entry is not None and app.tree.entry.node.id == "2/1")


def test_fail_on_and_compare_honour_rank_filter_and_latest():
    ranked = CORPUS / "distributed" / "trace"
    doc = json_for(ranked, "--rank", "1")
    code, out = run_cli("--fail-on", "graph_breaks", "--rank", "1", str(ranked))
    assert code == (1 if doc["totals"]["graph_breaks"] else 0)
    assert out and all(line.count("rank 1 ") or "rank" not in line for line in out.splitlines())
    recompiles = CORPUS / "recompiles" / "trace"
    code, out = run_cli("--fail-on", "errors", "--filter", "graph_breaks", str(recompiles))
    assert code == 0 and out == ""  # the failure is not in a compile with a graph break
    assert run_cli("--fail-on", "errors", "--filter", "recompiles", str(recompiles))[0] == 1
    compare = json.loads(run_cli("--compare", str(recompiles), str(recompiles), "--json", "--filter",
                                 "graph_breaks")[1])
    assert compare["same"] == [] and compare["before"]["recompiles"] == 0
    assert run_cli("--compare", str(ranked), str(ranked), "--json", "--rank", "7")[0] == 2


def test_compare_matches_a_program_edited_and_renamed():
    edited = VERDICT / "edited"
    doc = json.loads(run_cli("--compare", str(edited / "before" / "trace"), str(edited / "after" / "trace"),
                             "--json")[1])
    assert doc["gone"] == []
    same = {(p["kind"], p["function"], p["location_before"].rsplit(":", 1)[1],
             p["location_after"].rsplit(":", 1)[1]) for p in doc["same"]}
    # the graph_break() stayed on its line (+4: 3 lines at the top, a print above it) though it is
    # now in a resume function; the resume function's recompile (its guard, `k == 2`, read on the
    # line after the break) moved with it, not crosswise
    assert same == {("graph_break", "select", "7", "11"), ("recompile", "select", "8", "12"),
                    ("recompile", "scale", "13", "17")}
    assert {(p["kind"], p["cause"]) for p in doc["new"]} == {("graph_break", "print_or_logging"),
                                                          ("recompile", "python_value")}
    pair = next(p for p in doc["same"] if p["kind"] == "graph_break")
    assert pair["compile_ids_before"] == ["0/0"] and pair["compile_ids_after"] == ["1/0"]
    renamed = json.loads(run_cli("--compare", str(edited / "before" / "trace"),
                                 str(edited / "renamed" / "trace"), "--json")[1])
    assert renamed["gone"] == renamed["new"] == [] and len(renamed["same"]) == 3
    assert all(p["file_renamed"] for p in renamed["same"])
    assert run_cli("--compare", str(edited / "before" / "trace"), str(edited / "renamed" / "trace"),
                   "--fail-on", "new")[0] == 0


def test_markdown_keeps_the_exception_type():
    markdown = run_cli("--report", "--markdown", str(GENERATED / "failures" / "trace"))[1]
    assert "**Exception:** `BackendCompilerFailed`" in markdown


def test_a_handler_that_raises_is_a_problem_of_its_record_and_indexing_goes_on():
    def broken(index, record):
        raise ValueError("a record this handler did not expect")

    kind = KINDS.artifact("dynamo_graph_break_reason")
    handler = kind.handler
    object.__setattr__(kind, "handler", broken)  # (a frozen dataclass: one kind, one handler)
    try:
        doc = json_for(CORPUS / "graph_breaks" / "trace")
    finally:
        object.__setattr__(kind, "handler", handler)
    raised = [p for p in doc["problems"] if p["kind"] == "unreadable record"]
    assert len(raised) == 7 and "ValueError" in raised[0]["message"] and raised[0]["line"] > 0
    assert doc["totals"]["compile_ids"] == 15 and doc["totals"]["problems"] == 7


def test_each_export_has_its_own_outcome():
    """Two strict exports (one fails, both reuse compile id 0/0) and two non-strict ones (one
    fails) in one process (fixtures/generated/verdict/exports215, torch 2.15)."""
    run = VERDICT / "exports215" / "trace"
    doc = json_for(run)
    assert {c["id"]: c["status"] for c in doc["compiles"]} == {"0/0": "ok", "1/0": "error", "2/0": "ok"}
    assert doc["totals"]["errors"] == 2
    causes = [d["cause"] for e in doc["outside_compiles"] for d in e["diagnosis"]]
    assert causes == ["unsupported", "export_trace_failed"]
    code, out = run_cli("--fail-on", "errors", str(run))
    assert code == 1 and len(out.splitlines()) == 2 and "program.py:9" in out


def test_a_compile_whose_guard_failed_later_is_known_without_a_scan(tmp_path):
    """TORCH_LOGS=recompiles alone: every compile but the frame's last had guards that failed
    later, so it compiled. The index keeps it as reasons come (a scan of the frame per compile
    took 57 s at 5,000 recompiles of one frame; 10.9 s now, linear)."""
    from tlview.index.indexing import open_index

    lines = []
    for i in range(1, 4):
        prefix = f"V1127 05:54:46.933000 1 torch/_dynamo/guards.py:6374] [0/{i}] [__recompiles]"
        lines += [f"{prefix} Recompiling function step in /job/train.py:10",
                  f"{prefix}     triggered by the following guard failure(s):",
                  f"{prefix}     - 0/{i - 1}: n == {i - 1}      # return x * n  # job/train.py:11 in step"]
    log = tmp_path / "torch_logs.txt"
    log.write_text("\n".join(lines) + "\n")
    index = open_index(str(log))
    try:
        flags = {n.id: n.compile.guards_failed_later for n in index.iter_nodes()}
        statuses = {n.id: n.compile.verdict.status.word for n in index.iter_nodes()}
    finally:
        index.close()
    assert flags == {"0/1": True, "0/2": True, "0/3": False}  # (0/0 is only named by a reason)
    assert [statuses[f"0/{i}"] for i in (1, 2, 3)] == ["ok", "ok", "unlogged"]


@pytest.mark.parametrize("log", ["trace", "torch_logs.txt"])
def test_a_restart_that_is_no_graph_break_has_a_status_of_its_own(log):
    doc = json_for(ANSWERS / log)
    by_id = {c["id"]: c for c in doc["compiles"]}
    assert by_id["7/1"]["status"] == "restart"
    # the restart is the attempt that replaced the one thrown away, from the trace and the text alike
    assert diagnoses_by_kind(doc)[("7/1_1", "restart")]["cause"] == "tensorify_scalar"
    assert doc["totals"]["graph_breaks"] == 3 and doc["totals"]["compiles_with_graph_break"] == 3
