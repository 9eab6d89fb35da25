"""The fixes (diagnose/classify.py), rule by rule: each is chosen from the problem's own context (what
the guard read, PyTorch's registry entry and hints, the compile's recorded settings), and each test
here fails on a one-line change of its rule. The fixes were applied and re-run on torch 2.15
(fixtures/fixes, tests/test_fixes.py); these pin the choice between them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import CORPUS, GENERATED, diagnoses_by_kind, json_for

from tlview.diagnose import classify
from tlview.diagnose.classify import fix_for
from tlview.domain.break_registry import entry
from tlview.domain.causes import LoggingCall, guarded
from tlview.domain.reasons import Failure, GraphBreak
from tlview.domain.settings import NOT_RECORDED, CompileSettings
from tlview.domain.verdict import CompileProblem, Kind

ANSWERS = GENERATED / "answers"
NODE = SimpleNamespace(is_outside=False, compile=None, id="0/1")
EXPORT = SimpleNamespace(is_outside=True, compile=None, id="-/-")


def _problem(kind: Kind, cause: str, message: str = "", facts=None, registry=None, evidence=None,
             node=NODE, location="/job/train.py:20") -> CompileProblem:
    return CompileProblem(kind, cause, "why", node, "step", None, location, evidence=evidence,
                          facts=facts, registry=registry, message=message)


def _recompile(guard: str, cause: str) -> CompileProblem:
    return _problem(Kind.RECOMPILE, cause, guard, facts=guarded(guard))


def _settings(**config) -> CompileSettings:
    return CompileSettings((2, 15), config)


# ---- recompiles -------------------------------------------------------------------------------

def test_a_float_value_is_told_by_specialize_float_not_specialize_int():
    float_guard = _recompile("s == 0.5", "python_value")
    int_guard = _recompile("n == 2", "python_value")
    assert "specialize_float is True" in classify._python_value_fix(float_guard, _settings(specialize_float=True))
    assert "specialize_int" not in classify._python_value_fix(float_guard, _settings(specialize_int=True))
    assert "specialize_int is True" in classify._python_value_fix(int_guard, _settings(specialize_int=True))
    assert "specialize" not in classify._python_value_fix(int_guard, _settings(specialize_float=True))


def test_a_value_tested_in_an_if_is_decided_outside_not_made_a_tensor():
    fix = classify._python_value_fix(_recompile("step == 0", "python_value"), NOT_RECORDED)
    assert "outside the compiled function" in fix and "pass it as a tensor" not in fix


def test_an_optimizer_hyperparameter_is_a_tensor_lr():
    fix = fix_for(_recompile("self.param_groups[0]['lr'] == 0.001", "python_value"))
    assert "lr=torch.tensor(" in fix
    assert "lr=torch.tensor(" not in fix_for(_recompile("self.lr == 0.001", "python_value"))


def test_the_optimizer_state_filled_at_the_first_step_is_expected_once():
    guard = "len(self.state[list(dict.keys(self.state))[0]]) != 0"
    in_torch = _problem(Kind.RECOMPILE, "length_changed", guard, facts=guarded(guard),
                        location="/venv/lib/python3.11/site-packages/torch/optim/sgd.py:106")
    assert "expected" in fix_for(in_torch)
    assert "expected" not in fix_for(_recompile(guard, "length_changed"))  # a user's own `self.state`
    assert "pad" in fix_for(_recompile("len(feats) == 3", "length_changed"))


def test_a_list_carried_over_a_break_is_kept_a_tensor():
    assert "across the break" in fix_for(_recompile("len(___stack2) == 3", "length_changed"))
    assert "across the break" in fix_for(_recompile("___stack0[0] == 0", "python_value"))
    assert "capture_scalar_outputs" in fix_for(_recompile("___stack0 == 1.5", "python_value"))


def test_sizes_zero_and_one_are_not_covered_by_mark_dynamic():
    small = fix_for(_recompile("tensor 'cache' size mismatch at index 1. expected 1, actual 2", "size_mismatch"))
    big = fix_for(_recompile("tensor 'x' size mismatch at index 0. expected 8, actual 16", "size_mismatch"))
    shrunk = fix_for(_recompile("tensor 'x' size mismatch at index 0. expected 4, actual 1", "size_mismatch"))
    assert "0/1 specialization" in small and "0/1 specialization" in shrunk and "0/1" not in big
    assert "mark_dynamic(x, 0)" in big


def test_dynamic_false_is_named_where_it_was_set():
    problem = _recompile("tensor 'x' size mismatch at index 0. expected 8, actual 16", "size_mismatch")
    assert "dynamic=False" in classify._size_fix(problem, _settings(automatic_dynamic_shapes=False))
    assert "dynamic=False" not in classify._size_fix(problem, _settings(automatic_dynamic_shapes=True))


@pytest.mark.parametrize("guard, cause, words", [
    ("___check_obj_id(act.__code__, 1), type=<class 'code'>", "function_changed",
     "compile the caller that chooses act"),
    ("___check_type_id(p, 9), type=<class '__main__.A'>", "type_changed", "it was __main__.A"),
    ("expected type of 'batch.mask' to be <class 'torch.Tensor'>, but found <class 'NoneType'>",
     "value_became_none", "batch.mask is None in some calls"),
    ("list(dict.keys(cfg))[1] == 'b'", "dict_keys_changed", "the dict cfg"),
    ("h is h_prev", "tensor_aliasing", ".clone()"),
    ("tensor 'x' rank mismatch. expected 2, actual 3", "ndim_mismatch", "number of dims of x"),
    ("not self._modules['lin']._forward_hooks", "hooks_changed", "hooks before"),
    ("(step % 4) != 0", "shape_guard", "compute the test outside"),
    ("2 <= x.size()[0] <= 16", "shape_guard", "pins the size range"),
])
def test_each_guard_kind_has_its_own_fix(guard, cause, words):
    assert words in fix_for(_recompile(guard, cause))


# ---- graph breaks -----------------------------------------------------------------------------

def _break(cause: str, gb_id: str | None = None, hints=(), facts=None) -> CompileProblem:
    gb = GraphBreak("/job/train.py:20", "reason", hints=list(hints))
    return _problem(Kind.GRAPH_BREAK, cause, registry=entry(gb_id), evidence=gb, facts=facts)


def test_a_hint_names_a_setting_only_where_that_torch_has_it():
    hints = ["Remove the `torch._dynamo.graph_break()` call.", "Set torch._dynamo.config.trace_numpy=True."]
    with_it = classify._agreeing_with("fix", hints, _settings(trace_numpy=False))
    without = classify._agreeing_with("fix", hints, _settings())
    assert "trace_numpy" in with_it and "trace_numpy" not in without
    assert "Remove the `torch._dynamo.graph_break()` call" in without  # an API a hint names is no setting
    assert "config.graph_break" not in with_it + without


def test_generic_hints_are_left_out_and_at_most_two_kept():
    hints = ["This is likely to be a Dynamo bug. Please report an issue to PyTorch.", "Avoid a.", "Avoid b.",
             "Avoid c."]
    fix = classify._agreeing_with("fix", hints)
    assert "Dynamo bug" not in fix and fix.count("PyTorch's hint") == 2


def test_tolist_of_a_float_tensor_is_not_a_setting():
    assert "capture_scalar_outputs" not in fix_for(_break("item_or_tolist", "gb0109"))
    item = fix_for(_break("item_or_tolist", "gb0124"))
    assert item.startswith("keep the value a tensor") and "capture_scalar_outputs = True" in item


def test_a_deliberate_break_asks_nothing_of_the_user():
    fix = fix_for(_break("by_design", "gb0025"))
    assert fix.startswith("nothing to change") and "counted apart" in fix
    hint = "Apply `@torch._dynamo.dont_skip_tracing` to the function `X` to force tracing into the function."
    skipped = fix_for(_break("by_design", "gb0007", hints=[hint]))
    assert "dont_skip_tracing" in skipped


def test_a_logging_call_is_reordered_only_with_reorderable_arguments():
    call = LoggingCall("print", ("str", "tuple"), False)
    fix = fix_for(_break("print_or_logging", facts=call))
    assert "does not hold here" in fix and "a tuple" in fix
    fine = fix_for(_break("print_or_logging", facts=LoggingCall("print", ("str", "Tensor"), False)))
    assert "does not hold" not in fine and "reorderable_logging_functions.add(print)" in fine


def test_an_explicit_break_and_a_user_exception():
    assert "remove the torch._dynamo.graph_break() call" in fix_for(_break("explicit_graph_break", "gb0025"))
    assert "would raise without torch.compile" in fix_for(_break("user_exception", "gb0088"))


# ---- failures ---------------------------------------------------------------------------------

def _failure(cause: str, reason: str = "", gb_id: str | None = None, node=NODE) -> CompileProblem:
    return _problem(Kind.FAILURE if cause != "frame_skipped" else Kind.FRAME_SKIPPED, cause,
                    registry=entry(gb_id), evidence=Failure("Unsupported", reason), node=node)


def test_a_frame_skipped_is_fixed_by_the_break_that_caused_it():
    fix = fix_for(_failure("frame_skipped", "Tensor.tolist() with non-integer tensor\n  Hint: Ensure ...",
                           "gb0109"))
    assert "line 20" in fix and "keep the values a tensor" in fix and "compiles whole" in fix


def test_fullgraph_is_named_only_as_what_made_a_break_an_error():
    compiled = fix_for(_failure("unsupported", "Data-dependent branching", "gb0170"))
    exported = fix_for(_failure("unsupported", "Data-dependent branching", "gb0170", node=EXPORT))
    assert "fullgraph=True" in compiled and "torch.where" in compiled
    assert "fullgraph" not in exported and exported.startswith("torch.export allows no graph break")
    assert "drop fullgraph" not in compiled


@pytest.mark.parametrize("cause, words", [
    ("user_exception", "would raise without torch.compile"),
    ("torch_runtime_error", "fails in eager too"),
    ("data_dependent_guard", "torch._check("),
    ("control_flow_op", "same number of tensors of the same dtype"),
    ("missing_fake_kernel", "register_fake"),
    ("backend_compiler_failed", "TORCHDYNAMO_REPRO_AFTER"),
])
def test_failure_fixes(cause, words):
    assert words in fix_for(_failure(cause))


def test_a_setting_the_compile_torch_lacks_is_said_missing():
    # (trace_autograd_ops: a setting of 2.15 that a recorded config of an older torch lacks)
    fix = classify._settings_that_exist("set torch._dynamo.config.trace_autograd_ops = True",
                                        CompileSettings((2, 5), {"specialize_int": False}))
    assert "torch 2.5 has no torch._dynamo.config.trace_autograd_ops" in fix
    kept = classify._settings_that_exist("set torch._dynamo.config.trace_autograd_ops = True",
                                         CompileSettings((2, 15), {"trace_autograd_ops": False}))
    assert kept == "set torch._dynamo.config.trace_autograd_ops = True"
    assert classify._settings_that_exist("torch._dynamo.config.x = 1", NOT_RECORDED) == "torch._dynamo.config.x = 1"


@pytest.mark.parametrize("log", ["trace", "torch_logs.txt"])
def test_fixes_agree_with_pytorch_and_apply_to_their_class(log):
    found = diagnoses_by_kind(json_for(ANSWERS / log))
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
    found = diagnoses_by_kind(json_for(CORPUS / "graph_breaks" / "trace"))
    assert "reorderable_logging_functions.add(print)" in found[("0/0", "graph_break")]["fix"]


def test_a_custom_op_without_a_fake_kernel_is_told_to_register_one():
    found = diagnoses_by_kind(json_for(GENERATED / "text_failures" / "trace"))
    failure = found[("2/0", "failure")]
    assert failure["cause"] == "missing_fake_kernel" and "tlv::mysin" in failure["why"]
    assert "register_fake" in failure["fix"] and "VERBOSE" not in failure["fix"]
