"""The verified-fixes corpus (fixtures/fixes/CLASS/CASE, made with torch 2.15 on CPU): for each
program with a problem, tlview's fix was applied and the program run again. For every pair:

- `tlview --compare before after` lists the problem as gone (or, where tlview's own fix says one
  recompile stays, the same problem with that one left) and nothing new;
- the fix tlview prints for the program is the one that was applied: its text names what the
  fixed program holds, and the fixed program differs from the first by it;
- the TORCH_LOGS text of the same run is read as the same problem.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import json_for, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

FIXES = Path(__file__).resolve().parent.parent / "fixtures" / "fixes"
CASES = sorted(p.parent for p in FIXES.glob("*/*/case.json"))


def _case(folder: Path) -> dict:
    return json.loads((folder / "case.json").read_text())


def _diagnoses(doc: dict, kind: str, cause: str) -> list[dict]:
    entries = doc["compiles"] + doc["outside_compiles"]  # (a failed export: its Export entry's)
    return [d for c in entries for d in c["diagnosis"] if d["kind"] == kind and d["cause"] == cause]


def test_the_corpus_covers_every_class_the_issue_names():
    classes = {(p.parent.name, p.name) for p in CASES}
    wanted = {("python_value", "module_attribute"), ("python_value", "global"),
              ("python_value", "dynamic_false"), ("python_value", "item_across_break"),
              ("print_or_logging", "print"), ("print_or_logging", "logging_warning"),
              ("skipped_or_c_function", "builtin"), ("skipped_or_c_function", "c_extension"),
              ("skipped_or_c_function", "disabled_function")}
    assert wanted <= classes
    assert {p.parent.name for p in CASES} >= {
        "python_value", "size_mismatch", "dtype_mismatch", "requires_grad_mismatch", "stride_mismatch",
        "global_state", "recompile_limit", "item_or_tolist", "print_or_logging", "data_dependent_branch",
        "skipped_or_c_function", "dynamic_output_shape", "missing_fake_kernel", "backward_in_compiled"}
    for folder in CASES:
        for name in ("program.py", "fixed.py", "torch_logs.txt", "fixed/torch_logs.txt"):
            assert (folder / name).is_file(), folder / name
        assert any((folder / "trace").glob("*.log")) and any((folder / "fixed" / "trace").glob("*.log"))


@pytest.mark.parametrize("folder", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_fix_tlview_prints_is_the_one_applied_and_it_works(folder):
    case = _case(folder)
    kind, cause = case["kind"], case["class"]
    before = json_for(folder / "trace")
    assert before["pytorch_version"].startswith("2.15")
    found = _diagnoses(before, kind, cause)
    assert found, f"no {kind} of class {cause} in the program's run"
    fix = found[0]["fix"]
    program, fixed = (folder / "program.py").read_text(), (folder / "fixed.py").read_text()
    for words in case["fix_says"]:
        assert words in fix, f"{words!r} not in tlview's fix: {fix}"
    for words in case["fixed_has"]:
        assert words in fixed and words not in program, words
    for words in case["fixed_lacks"]:
        assert words in program and words not in fixed, words

    code, out = run_cli("--compare", str(folder / "trace"), str(folder / "fixed" / "trace"), "--json")
    assert code == 0, out
    compared = json.loads(out)
    # (perf problems aside: these fixes are of compiles, and one may trade a graph break for a sync
    # in the graph, or a long compile of the graph that no longer breaks: tests/test_perf.py)
    assert [p for p in compared["new"] if p["kind"] != "perf"] == [], compared["new"]
    gone = [p for p in compared["gone"] if (p["kind"], p["cause"]) == (kind, cause)]
    same = [p for p in compared["same"] if (p["kind"], p["cause"]) == (kind, cause)]
    if case["left_after"] == 0:
        assert gone and not same, (gone, same)
    else:  # tlview's fix says it leaves this many (a value made dynamic at its first change)
        assert "one recompile" in fix
        assert [p["count_after"] for p in same] == [case["left_after"]]
        assert same[0]["count_before"] > case["left_after"]


@pytest.mark.parametrize("folder", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_text_of_the_same_run_tells_the_same_problem(folder):
    case = _case(folder)
    text = json_for(folder / "torch_logs.txt")
    assert _diagnoses(text, case["kind"], case["class"])
    word = {"failure": "errors", "frame_skipped": "skipped_frames"}.get(case["kind"], f"{case['kind']}s")
    assert text["totals"][word] == json_for(folder / "trace")["totals"][word]


# ---- each fix chosen from the compile's own context ------------------------------------------------

CONTEXT = Path(__file__).resolve().parent.parent / "fixtures" / "generated" / "fix_context"


def test_a_setting_the_compile_already_had_is_never_asked_for():
    """allow_unspec_int_on_nn_module was set (its metrics record it): the fix says so and what is
    left to do, and does not ask for it again."""
    fix = _diagnoses(json_for(CONTEXT / "setting_already_on" / "trace"), "recompile", "python_value")[0]["fix"]
    assert "allow_unspec_int_on_nn_module is already True (recorded)" in fix
    assert "allow_unspec_int_on_nn_module = True" not in fix and "register_buffer" in fix


def test_what_is_set_that_causes_the_problem_is_named_and_text_claims_nothing():
    """The trace records dynamic=False (automatic_dynamic_shapes False): the fix names it. Its
    TORCH_LOGS text records no settings: the fix does not claim any, nor asks for specialize_int
    (already False in torch 2.15)."""
    folder = FIXES / "python_value" / "dynamic_false"
    traced = _diagnoses(json_for(folder / "trace"), "recompile", "python_value")[0]["fix"]
    assert "compiled with dynamic=False" in traced and "specialize_int" not in traced
    text = _diagnoses(json_for(folder / "torch_logs.txt"), "recompile", "python_value")[0]["fix"]
    assert "dynamic=False" not in text and "specialize_int" not in text


def test_settings_are_named_as_the_compile_s_torch_names_them(monkeypatch):
    """A torch that calls the limit cache_size_limit (its recorded config has no recompile_limit)
    gets that name; one before ignore_logging_functions (2.11) is not told to use it."""
    from tlview.diagnose import classify
    from tlview.domain.settings import CompileSettings
    from tlview.index.indexing import open_index

    old = CompileSettings((2, 6), {"cache_size_limit": 8, "automatic_dynamic_shapes": False})
    monkeypatch.setattr(classify, "settings_of", lambda compile_: old)
    index = open_index(str(FIXES / "recompile_limit" / "lengths_under_dynamic_false" / "trace"))
    limit = next(p for n in index.nodes.values() for p in n.compile.verdict.problems
                 if p.cause == "recompile_limit")
    fix = classify.fix_for(limit)
    assert "torch._dynamo.config.cache_size_limit (now 8)" in fix and "recompile_limit" not in fix
    index = open_index(str(FIXES / "print_or_logging" / "logging_warning" / "trace"))
    call = next(p for n in index.nodes.values() for p in n.compile.verdict.problems
                if p.cause == "print_or_logging")
    assert "ignore_logging_functions" not in classify.fix_for(call)
    monkeypatch.setattr(classify, "settings_of", lambda compile_: CompileSettings((2, 15), None))
    assert "ignore_logging_functions.add(logging.warning)" in classify.fix_for(call)


@given(st.text(), st.text(alphabet='\\\\", {}abc', max_size=30))
@settings(max_examples=300, deadline=None)
def test_a_string_field_is_read_from_its_line_as_a_json_parser_reads_it(value, other):
    """The config and version of a compile are read out of its metrics line without parsing the
    rest: any string, with escaped quotes and backslashes, reads as json.loads reads it."""
    from tlview.source.trace_records import _string_field

    line = json.dumps({"compilation_metrics": {"other": other, "dynamo_config": value, "next": other}}).encode()
    assert _string_field(line, "dynamo_config") == value


def test_autograd_ops_traced_already_is_never_asked_for_again(monkeypatch):
    """A break of autograd.grad in a compile whose recorded config has trace_autograd_ops on: the
    fix is the returned tensor detached (gb4927's), never the setting again."""
    from tlview.diagnose import classify
    from tlview.domain.settings import CompileSettings
    from tlview.index.indexing import open_index

    index = open_index(str(FIXES / "backward_in_compiled" / "gradient_penalty" / "trace"))
    grad = next(p for n in index.nodes.values() for p in n.compile.verdict.problems
                if p.cause == "backward_in_compiled")
    assert "trace_autograd_ops = True" in classify.fix_for(grad)  # (recorded off)
    traced = CompileSettings((2, 15), {"trace_autograd_ops": True})
    monkeypatch.setattr(classify, "settings_of", lambda compile_: traced)
    fix = classify.fix_for(grad)
    assert "trace_autograd_ops" not in fix and fix.startswith("return loss.detach(), not loss")


def test_a_restart_before_a_break_is_that_break_s():
    """gb4927: Dynamo restarts (AutogradGradRestartAnalysis) to break the graph at autograd.grad,
    the next attempt breaks it and restarts again: two restarts, one break, both restarts that
    break's (the only problem to act on)."""
    from tlview.domain.verdict import Kind
    from tlview.index.indexing import open_index

    index = open_index(str(FIXES / "backward_in_compiled" / "grad_step_returns_loss" / "trace"))
    problems = [p for c in {id(n.compile): n.compile for n in index.nodes.values()}.values()
                for p in c.verdict.problems]
    breaks = [p for p in problems if p.kind is Kind.GRAPH_BREAK]
    restarts = [p for p in problems if p.kind is Kind.RESTART]
    assert len(breaks) == 1 and len(restarts) == 2 and all(r.follows is breaks[0] for r in restarts)
    assert [p for p in problems if p.primary] == breaks
