"""What to do about each problem of the verdict (model/verdict.py), in the user's terms. The cause
and the why are the model's; only the advice is decided here, from the compile's own context:

- what the failed guard read (a module's int attribute, a global, a value carried over a graph
  break, an argument: causes.Guarded), the call that broke the graph (LoggingCall, SkippedCall);
- the settings the compile ran with (model/settings.py: its recorded dynamo_config and torch
  version): a fix never asks for a setting the compile already had, says what is set that causes
  the problem (dynamic=False), and names a setting only where that torch has it, by its name there;
- PyTorch's own hint: followed, unless it is known not to hold, and then said so.

Each fix here was applied to a real program and re-run on torch 2.15 (fixtures/fixes/, README's
table): where a fix leaves a recompile, the text says so; where no setting helps, it says that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tlview.model.causes import NOT_LOGGED, Guarded, LoggingCall, SkippedCall
from tlview.model.settings import NOT_RECORDED, UNKNOWN, CompileSettings, settings_of
from tlview.model.verdict import CompileProblem, Kind


@dataclass(frozen=True, slots=True)
class Diagnosis:
    kind: str  # recompile, graph_break, restart, failure
    cause: str  # the class
    why: str  # one line, in the user's terms
    fix: str
    place: tuple[str, int] | None = None  # the user's line it is about (its source is shown)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "cause": self.cause, "why": self.why, "fix": self.fix}


CONFIG = "torch._dynamo.config."

# ---- recompiles ---------------------------------------------------------------------------------

RECOMPILE_FIXES = {
    "dtype_mismatch": "cast inputs to one dtype before the compiled call (x.float()), or expect one "
                      "compiled version per dtype",
    "stride_mismatch": "pass inputs with the same layout each call (.contiguous() before the call), or "
                       "mark the dim dynamic if strides follow sizes",
    "device_mismatch": "keep inputs on one device for a compiled function (x.to(device) first)",
    "requires_grad_mismatch": "compile the evaluation path as a function of its own (eval_fn = "
                              "torch.compile(lambda x, w: f(x, w)), called only where requires_grad "
                              "differs), or call with requires_grad set the same way each time",
    "python_flag": "a Python flag (a bool or None attribute or argument) is part of the compiled code: "
                   "each value compiles once; keep it fixed between calls, or expect one compile per "
                   "value (compile each mode separately), or make it a tensor and use torch.where",
    "shape_guard": "a branch on a size (if x.shape[0] <= 9) pins the size range: remove the branch, "
                   "use torch.cond, or accept one compile per side of it",
    "object_identity": "pass the same module/function object each call (create it once, outside the "
                       "loop), or compile the module itself rather than a function that receives it",
    "other": "read the failed guard; TORCH_LOGS=recompiles_verbose shows every guard that failed",
    NOT_LOGGED: "run with TORCH_LOGS=recompiles (or TORCH_TRACE) to see the guard that failed",
}


def _size_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    guarded = problem.facts if isinstance(problem.facts, Guarded) else Guarded("input_tensor")
    mark = f"torch._dynamo.mark_dynamic({guarded.name or 'x'}, {guarded.dim if guarded.dim is not None else 'dim'})"
    if settings.static_by_request:
        return (f"{_static_why(settings)}, so every new size compiles again: drop dynamic=False (or that "
                f"setting: a size that changes then becomes dynamic at its first change: one recompile), or mark the dim "
                f"dynamic before the call: {mark}")
    return (f"mark the dim dynamic before the first call: {mark} (without it, Dynamo makes it dynamic "
            "at its first change: this recompile); if only a few sizes occur, pad or bucket the inputs")


def _static_why(settings: CompileSettings) -> str:
    return ("it is compiled with dynamic=False, or with automatic_dynamic_shapes=False set (its "
            "dynamo_config records automatic_dynamic_shapes=False)")


def _python_value_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    guarded = problem.facts if isinstance(problem.facts, Guarded) else Guarded("other")
    name = guarded.name or "the value"
    if guarded.source == "stack_value":
        return _scalar_across_break_fix(settings)
    if guarded.source == "module_attribute":
        return _module_attribute_fix(guarded, settings)
    if guarded.source in ("global", "closure"):
        where, held = ("global", name) if guarded.source == "global" else ("closure variable", "the variable")
        return (f"a {where} read inside the compiled function is a constant of its graph, and no setting "
                f"makes it dynamic (not dynamic=True either): keep it in a tensor updated in place "
                f"({held} = torch.tensor(...) once, then {held}.fill_(new_value)), which compiles once; "
                "or pass it as an argument")
    if settings.static_by_request:
        return (f"{_static_why(settings)}, so every value of {name} compiles again: drop dynamic=False "
                f"(or that setting: {name} then becomes dynamic at its first change: one recompile), or torch.compile("
                f"dynamic=True) to compile it dynamic from the first call")
    specialize = "specialize_float" if guarded.value_type == "float" else "specialize_int"
    if settings.value(specialize) is True:
        return (f"{CONFIG}{specialize} is True (recorded): every value compiles again; set it to "
                f"False, or pass a tensor instead of {name}")
    return (f"Dynamo makes {name} dynamic at its first change (this recompile, once); if it recompiles "
            f"again for {name}, its use needs a constant (range({name}), a shape, an `if` on it): "
            "pass it as a tensor instead")


def _module_attribute_fix(guarded: Guarded, settings: CompileSettings) -> str:
    attribute = guarded.name or "self.attr"
    short = attribute.rsplit(".", 1)[-1]
    tensor = (f"keep it in a tensor: a buffer updated in place (self.register_buffer(\"{short}\", "
              f"torch.tensor(...)), then module.{short}.fill_(new_value)) compiles once")
    if guarded.value_type != "int":
        return f"a module attribute is a constant of the graph: {tensor}"
    setting = f"{CONFIG}allow_unspec_int_on_nn_module = True"
    if settings.value("allow_unspec_int_on_nn_module") is True:
        return (f"{CONFIG}allow_unspec_int_on_nn_module is already True (recorded): this is the one "
                f"recompile it leaves (the first change makes the int dynamic); to compile once, {tensor}")
    if settings.has("allow_unspec_int_on_nn_module") is False:
        return tensor
    hinted = " (PyTorch's hint names both)" if guarded.hint and "allow_unspec_int_on_nn_module" in guarded.hint else ""
    return f"{tensor}; or {setting}: one recompile stays (the first change makes it dynamic){hinted}"


def _scalar_across_break_fix(settings: CompileSettings) -> str:
    why = ("a number taken out of a tensor before a graph break (.item()) is carried into the code "
           "after the break as a constant: each new value compiles again")
    if settings.value("capture_scalar_outputs") is True:
        return (f"{why}; {CONFIG}capture_scalar_outputs is already True (recorded), so the break is "
                "another one: fix that graph break, or keep the value a tensor")
    return (f"{why}: {CONFIG}capture_scalar_outputs = True keeps the .item() in the graph (no break, no "
            "recompiles), or keep the value a tensor")


def _global_state_fix(problem: CompileProblem) -> str:
    if isinstance(problem.facts, Guarded) and problem.facts.name == "grad_mode":
        return ("training (grad on) and evaluation (under torch.no_grad()) need graphs of their own: "
                "compile the evaluation call as a frame of its own (evaluate = torch.compile(lambda x: "
                "model(x)), called under torch.no_grad()), so that neither recompiles; or accept one "
                "compile per mode")
    return ("keep autocast and the guarded global state the same across calls, or compile a function "
            "of its own for each state")


def _recompile_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    if problem.cause == "size_mismatch":
        return _size_fix(problem, settings)
    if problem.cause == "python_value":
        return _python_value_fix(problem, settings)
    if problem.cause == "global_state":
        return _global_state_fix(problem)
    return RECOMPILE_FIXES.get(problem.cause, RECOMPILE_FIXES["other"])


# ---- graph breaks -------------------------------------------------------------------------------

BREAK_FIXES = {
    "data_dependent_branch": "no setting traces a branch on a tensor's value (PyTorch calls it fundamental): "
                             "make it branchless, torch.where(cond, a, b) (both sides are computed), "
                             "or torch.cond(pred, true_fn, false_fn, operands)",
    "unsupported_construct": "rewrite that line with supported constructs (lists instead of generators, "
                             "plain functions); TORCHDYNAMO_VERBOSE=1 shows the full stack",
    "other": "see the hints under the break; TORCHDYNAMO_VERBOSE=1 for the full stack",
    NOT_LOGGED: "run with TORCH_LOGS=graph_breaks (or TORCH_TRACE) to see what broke the graph",
}
# A setting a hint names (`torch._dynamo.config.x`, or `torch._dynamo.x`, which some hints write for it).
_HINTED_SETTING = re.compile(r"torch\._dynamo\.(?:config\.)?(\w+)")


def _logging_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    call = problem.facts if isinstance(problem.facts, LoggingCall) else LoggingCall(problem.subject or "print")
    function = call.function
    ignore = f"{CONFIG}ignore_logging_functions.add({function}) (the call then never runs)"
    if settings.has("ignore_logging_functions") is False:
        ignore = "remove the call from the compiled function"
    if call.logger_method:
        return ignore
    reorder = f"{CONFIG}reorderable_logging_functions.add({function})"
    if settings.has("reorderable_logging_functions") is False:
        return ignore
    if call.reorderable is False:
        return (f"PyTorch's hint (reorderable_logging_functions) does not hold here: only tensor, "
                f"constant and string arguments are reordered, and this call passes "
                f"{call.unreorderable_arguments}: pass the items instead ({function}(..., *values)) "
                f"with {reorder}; or {ignore}")
    return f"{reorder} (it then runs after the graph); or {ignore}"


def _skipped_fix(problem: CompileProblem) -> str:
    call = problem.facts if isinstance(problem.facts, SkippedCall) else SkippedCall(None, False)
    name = call.function or "it"
    if call.disabled:
        return (f"remove the torch.compiler.disable (or torch._dynamo.disable) from {name} (PyTorch's "
                "hint): Dynamo then traces it; if it was disabled on purpose, the break is the price")
    return (f"no setting traces {name} (a C function): move the call out of the compiled function and "
            "pass its result in (torch.compiler.allow_in_graph, in PyTorch's hint, fails on a function "
            "that returns no tensor); an extension's function that returns tensors can stay in the "
            "graph as a custom op (torch.library.custom_op)")


def _scalar_output_fix(settings: CompileSettings) -> str:
    if settings.value("capture_scalar_outputs") is True:
        return (f"{CONFIG}capture_scalar_outputs is already True (recorded): keep the value a tensor "
                "(its use needs a Python number)")
    return f"{CONFIG}capture_scalar_outputs = True keeps the .item() in the graph; or keep the value a tensor"


def _dynamic_output_fix(settings: CompileSettings) -> str:
    if settings.value("capture_dynamic_output_shape_ops") is True:
        return (f"{CONFIG}capture_dynamic_output_shape_ops is already True (recorded): use a fixed-size "
                "form (torch.where with a mask)")
    return (f"{CONFIG}capture_dynamic_output_shape_ops = True keeps the op in the graph; or use a "
            "fixed-size form (torch.where with a mask)")


def _backward_fix() -> str:
    # Verified on torch 2.15: trace_autograd_ops alone still breaks a step that returns the loss
    # ("autograd.grad consumed returned tensor's grad_fn"); with loss.detach() returned it does not.
    return (f"{CONFIG}trace_autograd_ops = True (PyTorch's hint writes torch._dynamo.trace_autograd_ops, "
            "which is not a setting) and return loss.detach(), not loss (a returned tensor whose graph "
            "backward() used still breaks it); or call backward() outside the compiled function")


def _break_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    cause = problem.cause
    if cause == "print_or_logging":
        return _logging_fix(problem, settings)
    if cause == "skipped_or_c_function":
        return _skipped_fix(problem)
    if cause == "item_or_tolist":
        return _scalar_output_fix(settings)
    if cause == "dynamic_output_shape":
        return _dynamic_output_fix(settings)
    if cause == "backward_in_compiled":
        return _backward_fix()
    fix = BREAK_FIXES.get(cause, BREAK_FIXES["other"])
    return _agreeing_with(fix, problem.evidence.hints if problem.logged and problem.evidence else [])


def _agreeing_with(fix: str, hints: list[str]) -> str:
    """When PyTorch's hint names a setting, the fix names it too (as `torch._dynamo.config.x`)."""
    for hint in hints:
        for name in _HINTED_SETTING.findall(hint):
            if name not in fix:
                fix += f"; PyTorch's hint: set {CONFIG}{name} ({hint.strip()})"
    return fix


# ---- restarts -----------------------------------------------------------------------------------

RESTART_FIXES = {
    "after_graph_break": "nothing of its own: fix the graph break it follows",
    "tensorify_scalar": f"{CONFIG}specialize_float = True (it then recompiles once per value), "
                        "or keep the value a tensor and use torch ops on it (torch.floor)",
    NOT_LOGGED: "run with TORCH_LOGS=+dynamo (\"Restarting analysis due to ...\") or TORCH_TRACE to see "
                "why it restarted",
}

# ---- failures -----------------------------------------------------------------------------------

MINIFIER = ("reproduce and minify: TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=2 python "
            "your_script.py (writes a small repro); try backend='aot_eager' to tell Dynamo/AOT "
            "issues from Inductor ones")
FAILURE_FIXES = {
    "backend_compiler_failed": MINIFIER,
    "constraint_violation": "use torch._dynamo.maybe_mark_dynamic (allows specialization), or remove the "
                            "code that pins the size (a comparison with a constant); TORCH_LOGS=+dynamic "
                            "shows where",
    "unsupported": "remove the construct from the compiled code, or drop fullgraph=True to allow a graph "
                   "break there",
    "internal_error": "rerun with TORCHDYNAMO_VERBOSE=1 for the full stack, and report it with the "
                      "minifier's repro; " + MINIFIER,
    "export_trace_failed": "read the exception the program got; torch.export.draft_export reports every "
                           "issue without failing; a data-dependent branch needs torch.cond or "
                           "torch._check, an op with no fake kernel a register_fake",
    "other": "rerun with TORCHDYNAMO_VERBOSE=1 for the full stack",
}


def _recompile_limit_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    """The frame now runs eagerly: the fix is that of the recompile that kept repeating."""
    limit = f"{CONFIG}{settings.recompile_limit_name}"
    now = settings.value(settings.recompile_limit_name)
    raise_it = f"raise {limit}{f' (now {now})' if now is not UNKNOWN else ''} if each version is worth it"
    repeated = next((p for p in problem.node.compile.verdict.problems if p.kind is Kind.RECOMPILE), None)
    if repeated is None or repeated.cause == NOT_LOGGED:
        return f"the frame now runs eagerly: fix the reason that repeats (the recompiles before it), or {raise_it}"
    return f"the frame now runs eagerly: {_recompile_fix(repeated, settings)}; or {raise_it}"


def _failure_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    if problem.cause == "recompile_limit":
        return _recompile_limit_fix(problem, settings)
    if problem.cause == "missing_fake_kernel":
        name = problem.subject or "the op"
        return (f"register one: @{name.split('::')[-1]}.register_fake (or "
                f"torch.library.register_fake(\"{name}\")), returning empty tensors of the "
                "output shapes (torch.empty_like(x), x.new_empty(...))")
    return FAILURE_FIXES.get(problem.cause, FAILURE_FIXES["other"])


# ---- per problem --------------------------------------------------------------------------------

def fix_for(problem: CompileProblem) -> str:
    settings = settings_of(problem.node.compile) if problem.node.compile is not None else NOT_RECORDED
    if problem.kind is Kind.RECOMPILE:
        return _recompile_fix(problem, settings)
    if problem.kind is Kind.GRAPH_BREAK:
        return _break_fix(problem, settings)
    if problem.kind is Kind.RESTART:
        return RESTART_FIXES.get(problem.cause, RESTART_FIXES[NOT_LOGGED])
    return _failure_fix(problem, settings)


def diagnose(problems) -> list[Diagnosis]:
    """The problems to act on (a restart that follows a graph break is that break's), each with
    its fix."""
    return [Diagnosis(p.kind.key, p.cause, p.why, fix_for(p), p.source_place) for p in problems if p.primary]


def diagnose_node(node) -> list[Diagnosis]:
    """What happened in one compile id (attempt): its part of its compile's verdict."""
    return diagnose(p for p in node.compile.verdict.problems if p.node is node)
