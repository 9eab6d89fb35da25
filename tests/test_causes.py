"""The cause classes (model/causes.py, model/break_registry.py), rule by rule, on what torch 2.15
itself printed: the guard catalog (fixtures/unseen/guard_catalog: one tiny program per kind of
guard, its recompile reason as torch wrote it), the failure and graph-break catalog
(fixtures/unseen/failure_catalog), and PyTorch's own graph-break registry. Each expected class
below was read off the program by hand; none comes from tlview's output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPUS, GENERATED, json_for

from tlview.domain.break_registry import FAMILIES, entry, family_of, gb_ids_in, registry
from tlview.domain.causes import break_cause, failure_cause, guarded, recompile_cause
from tlview.domain.reasons import (
    Failure,
    parse_graph_break,
    reason_with_id,
    user_place_in,
)
from tlview.domain.status import Status
from tlview.index.indexing import open_index

ANSWERS = GENERATED / "answers"
UNSEEN = Path(__file__).resolve().parent.parent / "fixtures" / "unseen"
GUARDS = {e["name"]: e for e in json.loads((UNSEEN / "guard_catalog" / "catalog.json").read_text())}
FAILURES = {e["name"]: e for e in json.loads((UNSEEN / "failure_catalog" / "catalog.json").read_text())}

# ---- PyTorch's graph-break registry -----------------------------------------------------------


def test_every_registry_entry_has_a_family():
    entries = registry()
    assert len(entries) >= 590  # torch 2.13's and 2.15's ids
    assert {e.family for e in entries.values()} <= set(FAMILIES)
    # most are constructs Dynamo does not support, in PyTorch's words; none is left unclassed
    assert all(e.type for e in entries.values())


@pytest.mark.parametrize("gb_id, family", [
    ("gb0170", "data_dependent_branch"),  # Data-dependent branching
    ("gb0025", "explicit_graph_break"),  # Call to torch._dynamo.graph_break()
    ("gb7000", "frame_skipped"),  # graph break in loop
    ("gb9741", "frame_skipped"),  # skip frame due to being in functorch mode
    ("gb0124", "item_or_tolist"),  # Tensor.item() with capture_scalar_outputs=False
    ("gb0109", "item_or_tolist"),  # Tensor.tolist() with non-integer tensor
    ("gb0033", "item_or_tolist"),  # Data dependent operator (_local_scalar_dense)
    ("gb0036", "dynamic_output_shape"),  # Dynamic shape operator
    ("gb0007", "skipped_or_c_function"),  # Attempted to call function marked as skipped
    ("gb0098", "skipped_or_c_function"),  # a torch.compiler.disable()d function
    ("gb0088", "user_exception"),  # Observed exception
    ("gb0123", "backward_in_compiled"),  # Unsupported Tensor.backward() call
    ("gb4841", "dynamo_bug"),  # Unsupported python_type() call: "likely a Dynamo bug"
    ("gb4347", "unsupported_construct"),  # Missing tp_iternext: next() on a generator
    ("gb0059", "unsupported_construct"),  # Failed to trace builtin operator
])
def test_registry_families(gb_id, family):
    assert entry(gb_id).family == family


def test_an_entry_whose_type_is_a_variable_keeps_pytorch_words():
    # gb0170's newest version passes `_gb_type`; the shipped words are an older version's
    assert entry("gb0170").type == "Data-dependent branching"
    assert "data-dependent branching" in entry("gb0170").explanation


def test_family_rules_read_type_and_standard_hints():
    assert family_of("Something new", "", ("dynamo_bug",)) == "dynamo_bug"
    assert family_of("Something new", "", ("dynamo_bug", "supportable")) == "unsupported_construct"
    assert family_of("Missing tp_iternext", "Dynamo does not support next() on generator", ()) == \
        "unsupported_construct"


def test_ids_in_a_message_in_order_once():
    text = "x gb/gb0109.html\n*** While handling ...\n gb/GB7000.html gb0109"
    assert gb_ids_in(text) == ["gb0109", "gb7000"]
    assert gb_ids_in(None) == [] and entry("gb9999") is None


# ---- recompiles: the kind of guard that failed ------------------------------------------------

GUARD_CLASSES = {
    "autocast": "global_state", "deterministic": "global_state", "grad_mode": "global_state",
    "default_device": "global_state", "torch_function_state": "global_state", "dual_level": "global_state",
    "bool_arg": "python_flag", "module_bool_attr": "python_flag", "module_training": "python_flag",
    "int_arg": "python_value", "float_arg": "python_value", "str_arg": "python_value",
    "closure_cell": "python_value", "global_int": "python_value", "module_int_attr": "python_value",
    "module_float_attr": "python_value", "module_str_attr": "python_value", "range_arg": "python_value",
    "optimizer_lr": "python_value",
    "class_arg": "object_identity",
    "function_code": "function_changed", "global_function": "function_changed",
    "id_match_torch_fn": "function_changed",
    "type_match": "type_changed", "parameter_vs_tensor": "type_changed",
    "dataclass_field_none": "value_became_none", "none_to_tensor": "value_became_none",
    "tensor_to_none": "value_became_none",
    "dict_contains": "dict_keys_changed", "dict_keys": "dict_keys_changed",
    "global_set_contains": "dict_keys_changed",
    "length_check": "length_changed", "tuple_length": "length_changed",
    "list_global_mutated": "length_changed", "optimizer_state": "length_changed",
    "hasattr": "attribute_changed", "module_hook_added": "hooks_changed",
    "duplicate_input": "tensor_aliasing", "tensor_aliasing": "tensor_aliasing",
    "shape_eq": "size_mismatch", "tensor_size": "size_mismatch", "tensor_attr_on_module": "size_mismatch",
    "shape_mod": "shape_guard", "shape_range": "shape_guard", "shape_zero_one": "shape_guard",
    "tensor_dtype": "dtype_mismatch", "tensor_stride": "stride_mismatch",
    "tensor_requires_grad": "requires_grad_mismatch", "tensor_rank": "ndim_mismatch",
    "tensor_dispatch_keys": "tensor_mismatch", "tensor_inference_mode": "tensor_mismatch",
    "tensor_device": "tensor_mismatch", "functorch_stack": "tensor_mismatch",
}


def test_the_catalog_is_covered():
    logged = {name for name, e in GUARDS.items() if e.get("reason_text")}
    assert logged == set(GUARD_CLASSES)


@pytest.mark.parametrize("name", sorted(GUARD_CLASSES))
def test_guard_kind(name):
    found = GUARDS[name]
    for text in (found["reason_text"], *_log_reasons(found)):
        cause = recompile_cause(reason_with_id(text))
        assert cause.cause == GUARD_CLASSES[name], (name, text)


def _log_reasons(found: dict) -> list[str]:
    """The same reason from TORCH_LOGS text: its `- 0/0: ...` lines."""
    lines = [ln.split("- ", 1)[1] for ln in (found.get("reason_text_log") or "").split("\n")
             if ln.strip().startswith("- ") and ": " in ln]
    return [ln for ln in lines if ln[:1].isdigit()][:1]


@pytest.mark.parametrize("name", sorted(n for n, e in GUARDS.items() if e.get("reason_text")))
def test_a_guard_that_names_its_line_is_placed_there(name):
    found = GUARDS[name]
    frame = reason_with_id(found["reason_text"]).user_frame()
    if frame is not None and not frame[0].startswith("optim/"):  # (optimizer_lr: torch's own line)
        assert frame[1] == found["user_line"], name


@pytest.mark.parametrize("guard, source, name, value_type", [
    ("x == 1e-05", "local", "x", "float"),
    ("s == 0.5", "local", "s", "float"),
    ("n == 2", "local", "n", "int"),
    ("n == -3", "local", "n", "int"),
    ("flag == True", "local", "flag", "bool"),
    ("mode == 'sum'", "local", "mode", "str"),
    ("bias is None", "local", "bias", "None"),
    ("self.k == 2", "module_attribute", "self.k", "int"),
    ("G['SCALE'] == 2", "global", "SCALE", "int"),
    ("___stack0 == 1.5", "stack_value", "___stack0", "float"),
    ("___check_obj_id(act.__code__, 1), type=<class 'code'>", "local", "act", "code"),
    ("len(xs) == 3", "local", "xs", None),
    ("list(dict.keys(cfg))[1] == 'b'", "local", "cfg", None),
    ("expected type of 'batch.mask' to be <class 'torch.Tensor'>, but found <class 'NoneType'>",
     "attribute", "batch.mask", "torch.Tensor"),
    ("tensor 'x' size mismatch at index 1. expected 8, actual 12", "input_tensor", "x", None),
])
def test_what_a_guard_read(guard, source, name, value_type):
    found = guarded(guard)
    assert (found.source, found.name, found.value_type) == (source, name, value_type)


def test_a_size_guard_names_its_dim():
    assert guarded("tensor 'x' size mismatch at index 1. expected 8, actual 12").dim == 1


# ---- graph breaks and failures ----------------------------------------------------------------

BREAK_CLASSES = {
    "autograd_function_break": "skipped_or_c_function", "c_function_getpid": "skipped_or_c_function",
    "compiled_optimizer_step": "by_design", "lr_scheduler_in_compile": "skipped_or_c_function",
    "deepcopy": "unsupported_construct", "unsupported_builtin": "unsupported_construct",
    "explicit_graph_break": "explicit_graph_break", "generator_argument": "dynamo_bug",
    "item_if_capture_scalar": "data_dependent_branch", "loop_layers_break": "print_or_logging",
    "user_raise": "user_exception", "zeros_item": "item_or_tolist",
}
FAILURE_CLASSES = {
    "autograd_function_fullgraph": "unsupported", "export_fail_then_second": "unsupported",
    "fullgraph_break": "unsupported", "generator_argument": "unsupported",
    "autograd_function_item_capture": "data_dependent_guard", "tolist_unbacked_length": "data_dependent_guard",
    "cond_dtype_mismatch": "control_flow_op", "fake_matmul_mismatch": "torch_runtime_error",
    "failing_backend": "backend_compiler_failed", "loop_layers_break": "frame_skipped",
    "user_raise": "user_exception", "user_raise_fullgraph": "user_exception",
}


def test_the_failure_catalog_is_covered():
    assert {n for n, e in FAILURES.items() if e.get("graph_break_reason")} == set(BREAK_CLASSES)
    assert {n for n, e in FAILURES.items() if e.get("fail_type")} == set(FAILURE_CLASSES)


@pytest.mark.parametrize("name", sorted(BREAK_CLASSES))
def test_break_class(name):
    gb = parse_graph_break(FAILURES[name]["graph_break_reason"])
    assert break_cause(gb).cause == BREAK_CLASSES[name]
    assert gb.where.endswith(f"program.py:{FAILURES[name]['user_line']}"), gb.where


@pytest.mark.parametrize("name", sorted(FAILURE_CLASSES))
def test_failure_class(name):
    found = FAILURES[name]
    assert failure_cause(found["fail_type"], found["fail_reason"]).cause == FAILURE_CLASSES[name]


def test_a_break_in_torch_own_code_is_by_design_and_says_where():
    cause = break_cause(parse_graph_break(FAILURES["compiled_optimizer_step"]["graph_break_reason"]))
    assert "torch/optim/optimizer.py" in cause.why and cause.registry.gb_id == "gb0025"
    user_made = break_cause(parse_graph_break(FAILURES["explicit_graph_break"]["graph_break_reason"]))
    assert user_made.cause == "explicit_graph_break"  # the same entry, in the user's own file
    text = FAILURES["explicit_graph_break"]["graph_break_reason"]
    place = parse_graph_break(text).location
    in_a_folder_named_torch = text.replace(place.rsplit(":", 1)[0], "/home/me/torch/train.py")
    assert break_cause(parse_graph_break(in_a_folder_named_torch)).cause == "explicit_graph_break"


def test_a_custom_autograd_function_is_not_a_missing_fake_kernel():
    for name in ("autograd_function_fullgraph", "autograd_function_item_capture"):
        found = FAILURES[name]
        assert failure_cause(found["fail_type"], found["fail_reason"]).cause != "missing_fake_kernel"
    custom = failure_cause("TorchRuntimeError", "no fake impl registered for CustomOpDef(mylib::scale)")
    assert (custom.cause, custom.subject) == ("missing_fake_kernel", "mylib::scale")
    aten = failure_cause("TorchRuntimeError", "Meta kernel missing for operator aten::foo")
    assert aten.cause != "missing_fake_kernel"


def test_a_frame_skipped_names_the_break_that_caused_it():
    found = FAILURES["loop_layers_break"]
    cause = failure_cause(found["fail_type"], found["fail_reason"])
    assert cause.registry.gb_id == "gb0059" and "in a loop" in cause.why


def test_a_user_raise_quotes_the_exception():
    found = FAILURES["user_raise"]
    why = failure_cause(found["fail_type"], found["fail_reason"]).why
    assert "ValueError" in why


# ---- places -----------------------------------------------------------------------------------

def test_a_failure_is_placed_at_the_user_frame_torch_recorded():
    assert Failure("Unsupported", "x", "/job/a.py:100").place == "/job/a.py:100"
    traceback = ('msg\n\nfrom user code:\n   File "/venv/lib/python3.11/site-packages/torch/_dynamo/'
                 'functional_export.py", line 243, in forward\n    res = f()\n  File "/job/p.py", line 17, '
                 'in forward\n    return g()\n  File "/job/p.py", line 12, in clip\n    if y:\n\nSet TORCH')
    assert user_place_in(traceback) == "/job/p.py:12"
    assert Failure("X", traceback).place == "/job/p.py:12"
    assert user_place_in("no stack") is None


def test_unfinished_statuses():
    assert Status.MISSING.unfinished and Status.UNLOGGED.unfinished
    assert not any(s.unfinished for s in Status if s not in (Status.MISSING, Status.UNLOGGED))


def test_the_cause_of_a_recompile_is_its_failure_against_the_latest_compile():
    """8/2 lists a failure against 8/1 (the dynamic entry: the cause) and one against 8/0."""
    index = open_index(str(ANSWERS / "trace"))
    node = index.node(None, "8/2")
    assert [str(r.failed_id) for r in node.reasons] == ["8/1", "8/0"]
    assert str(node.recompile_cause.failed_id) == "8/1"
    doc = json_for(ANSWERS / "trace")
    assert [d["kind"] for c in doc["compiles"] if c["id"] == "8/2" for d in c["diagnosis"]] == ["recompile"]


def test_a_skipped_function_of_torch_called_from_the_user_line_is_the_user_break(gpu_perf_runs):
    """torch.cuda.synchronize() in a compiled step (H200): PyTorch skips it on purpose, but the
    call is the user's to move; the same kind of skip reached through DDP's code is by design."""
    for source in ("torch_logs.txt", "trace"):
        index = open_index(str(gpu_perf_runs / "gpu_perf4" / "sync_inside.bug" / source))
        breaks = [gb for node in index.nodes.values() for gb in node.breaks]
        causes = {break_cause(gb).cause for gb in breaks}
        assert causes == {"skipped_or_c_function"}, (source, causes)
        cause = break_cause(breaks[0])
        assert "torch.cuda.synchronize" in cause.why and "program4.py:147" in cause.why
    ddp = open_index(str(CORPUS / "distributed"))
    ddp_causes = {break_cause(gb).cause for node in ddp.nodes.values() for gb in node.breaks
                  if "_inside_ddp_forward" in (gb.context or gb.explanation or "")}
    assert ddp_causes == {"by_design"}


@pytest.mark.parametrize(("reason", "after", "before", "cause"), [
    ("Graph break: print() ... see gb0001.html", True, False, "after_graph_break"),
    ("autograd.grad consumed grad_fns of returned tensors", False, True, "before_graph_break"),
    ("source-less requires_grad_() intermediate leaked as output", False, True, "before_graph_break"),
    ("<class 'torch._dynamo.exc.UnspecializeRestartAnalysis'>", False, False, "other_restart"),
    ("<class 'torch._dynamo.exc.CompileCollectiveRestartAnalysis'>", False, False, "other_restart"),
    ("<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>", False, False, "tensorify_scalar"),
])
def test_a_restart_is_told_by_pytorch_s_restart_kinds(reason, after, before, cause):
    """Held out (stop 57): an AutogradGradRestartAnalysis (a step that returns the loss its
    autograd.grad ran through) was read as a graph break not logged, a second break beside the
    one the next attempt logged. PyTorch's restarts other than a graph break's, by the reason
    convert_frame.py records (restart_reason, else the exception's class)."""
    from tlview.domain.causes import breaks_next_attempt, is_graph_break_restart, restart_cause

    assert (is_graph_break_restart(reason), breaks_next_attempt(reason)) == (after, before)
    assert restart_cause(reason, False).cause == cause
