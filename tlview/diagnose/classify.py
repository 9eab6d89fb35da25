"""What to do about each problem of the verdict (domain/verdict.py), in the user's terms. The cause
and the why are the model's; only the advice is decided here, from the compile's own context:

- what the failed guard read (a module's int attribute, a global, a value carried over a graph
  break, an argument: causes.Guarded), the call that broke the graph (LoggingCall, SkippedCall);
- the settings the compile ran with (domain/settings.py: its recorded dynamo_config and torch
  version): a fix never asks for a setting the compile already had, says what is set that causes
  the problem (dynamic=False), and names a setting only where that torch has it, by its name there;
- PyTorch's own hint: followed, unless it is known not to hold, and then said so.

Each fix here was applied to a real program and re-run on torch 2.15 (fixtures/fixes/, README's
table): where a fix leaves a recompile, the text says so; where no setting helps, it says that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from tlview.diagnose.perf_fixes import perf_fix
from tlview.domain.causes import NOT_LOGGED, Guarded, LoggingCall, RaisedByUser, SkippedCall, torch_function
from tlview.domain.places import split_place
from tlview.domain.reasons import is_library_path
from tlview.domain.settings import NOT_RECORDED, UNKNOWN, CompileSettings, settings_of
from tlview.domain.verdict import CompileProblem, Kind, Verdict

if TYPE_CHECKING:
    from tlview.domain.compile_node import Compile, CompileNode


@dataclass(frozen=True, slots=True)
class Diagnosis:
    kind: str  # recompile, graph_break, restart, failure, perf
    cause: str  # the class
    why: str  # one line, in the user's terms
    fix: str
    place: tuple[str, int] | None = None  # the user's line it is about (its source is shown)

    registry: tuple[str, str] | None = None  # (gb id, PyTorch's type) of its registry entry

    def as_dict(self) -> dict:
        return {"kind": self.kind, "cause": self.cause, "why": self.why, "fix": self.fix,
                "place": f"{self.place[0]}:{self.place[1]}" if self.place else None,
                "registry": {"id": self.registry[0], "type": self.registry[1]} if self.registry else None}


CONFIG = "torch._dynamo.config."

# ---- recompiles ---------------------------------------------------------------------------------

RECOMPILE_FIXES = {
    "dtype_mismatch": "cast inputs to one dtype before the compiled call (x.float()), or expect one "
                      "compiled version per dtype",
    "stride_mismatch": "pass inputs with the same memory layout each call (.contiguous() before the call, "
                       "or channels_last for the model and every input): marking a dim dynamic does not "
                       "cover a change of layout",
    "device_mismatch": "keep inputs on one device for a compiled function (x.to(device) first)",
    "requires_grad_mismatch": "compile the evaluation path as a function of its own (eval_fn = "
                              "torch.compile(lambda x, w: f(x, w)), called only where requires_grad "
                              "differs), or call with requires_grad set the same way each time",
    "ndim_mismatch": "keep the number of dims of {name} the same each call (reshape or unsqueeze before "
                     "the call): each rank compiles a version of its own",
    "tensor_mismatch": "pass {name} as the same kind of tensor each call (a subclass, sparse or inference "
                       "tensor differs in its dispatch keys): each kind compiles a version of its own",
    "python_flag": "a Python flag (a bool or None attribute or argument) is part of the compiled code: "
                   "each value compiles once; keep it fixed between calls, or expect one compile per "
                   "value (compile each mode separately), or make it a tensor and use torch.where",
    "shape_guard": "a branch on a size (if x.shape[0] <= 9) pins the size range: remove the branch, "
                   "use torch.cond, or accept one compile per side of it",
    "object_identity": "{name} is another object than the one compiled against (its identity is guarded): "
                       "create it once, outside the loop, and pass that same object each call",
    "function_changed": "{name} is another function than the one compiled against (its code object is "
                        "guarded): compile the caller that chooses {name} (where each function is a "
                        "constant of the traced code: the loop over layers) instead of the function it is "
                        "passed to; a lambda or nested def made anew each call: define it once",
    "type_changed": "{name} has another type than when compiled (it was {value_type}): keep its type the "
                    "same each call (always a tensor, always a float, the same class)",
    "value_became_none": "{name} is None in some calls and set in others: each compiles a version of its "
                         "own; keep it always set (a tensor of zeros, a default) or always None",
    "tensor_aliasing": "two arguments were the same tensor in one call and two in another (aliasing is "
                       "guarded): pass distinct tensors each time (y = x.clone()), or the same one each time",
    "dict_keys_changed": "the dict {name} has other keys than when compiled: each set of keys compiles "
                         "anew; give it the same keys each call (a default for a missing one)",
    "attribute_changed": "an attribute of {name} was added or removed after the first call: set every "
                         "attribute in __init__, and change its value, not its presence",
    "hooks_changed": "register a module's hooks before its first compiled call (and keep them): each "
                     "set of hooks compiles a version of its own",
    "global_state": "keep autocast and the guarded global state the same across calls, or compile a "
                     "function of its own for each state",
    "other": "the guard that failed is quoted above: keep what it reads the same between calls (its "
             "value, type or size)",
    NOT_LOGGED: "run with TORCH_LOGS=recompiles (or TORCH_TRACE) to see the guard that failed",
}


def _length_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    guarded = problem.facts if isinstance(problem.facts, Guarded) else Guarded("other")
    if guarded.source == "stack_value":
        return ("a list carried over a graph break (made by .tolist() or a loop before the break) is a "
                "constant of the code after it, length and all: keep it a tensor across the break (no "
                ".tolist()), or fix the break so that nothing is carried")
    name = guarded.name or "the list"
    if "self.state" in (problem.message or "") and is_library_path(split_place(problem.location)[0]):
        # torch.optim: a compiled step's state is empty at the first step and filled by it
        return ("the optimizer's state is empty at its first step and filled by it: this one recompile "
                "is expected (a compiled optimizer step compiles twice), and none follows from it")
    return (f"{name} has another length than when compiled: the number of items of a list, tuple or "
            f"dict is part of the compiled code (no setting makes it dynamic): give it the same number "
            f"each call (pad a list; give a dict every key, a default where one is missing), or pass one "
            f"tensor (torch.stack({name})), whose size can be dynamic")


def _symbolic_fix(problem: CompileProblem) -> str:
    guard = problem.message or ""
    if "size()" in guard or "stride()" in guard:
        return RECOMPILE_FIXES["shape_guard"]
    return (f"an int Dynamo made dynamic is tested in Python ({guard}): each outcome of the test pins "
            "the int's range and compiles again; compute the test outside the compiled function and "
            "pass its result (a bool: one compile per value), or keep the int static "
            "(torch._dynamo.mark_static is for tensors; pass it as a constant of a functools.partial)")


_SIZES = re.compile(r"expected (?P<expected>\d+), actual (?P<actual>\d+)")


def _size_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    guarded = problem.facts if isinstance(problem.facts, Guarded) else Guarded("input_tensor")
    mark = f"torch._dynamo.mark_dynamic({guarded.name or 'x'}, {guarded.dim if guarded.dim is not None else 'dim'})"
    sizes = _SIZES.search(problem.message or "")
    if sizes and {sizes.group("expected"), sizes.group("actual")} & {"0", "1"}:
        # PyTorch specializes sizes 0 and 1 always (its "0/1 specialization"): a dim marked dynamic
        # still compiles apart for them (shared/gpu lm_decode, a KV cache that grows from 0)
        return (f"a size of 0 or 1 is always compiled apart (PyTorch's 0/1 specialization: "
                f"{mark} does not cover it): keep the dim at 2 or more from the first call (a "
                f"preallocated buffer of fixed size with a position index, as a KV cache), or accept "
                f"one compile for each of sizes 0 and 1")
    if settings.static_by_request:
        return (f"{_static_why(settings)}, so every new size compiles again: drop dynamic=False (or that "
                f"setting: a size that changes then becomes dynamic at its first change: one recompile), "
                f"or mark the dim dynamic before the call: {mark}")
    return (f"mark the dim dynamic before the first call: {mark} (without it, Dynamo makes it dynamic "
            "at its first change: this recompile); if only a few sizes occur, pad or bucket the inputs")


def _static_why(settings: CompileSettings) -> str:
    return ("it is compiled with dynamic=False, or with automatic_dynamic_shapes=False set (its "
            "dynamo_config records automatic_dynamic_shapes=False)")


# An optimizer's hyperparameter read by a compiled step (`self.param_groups[0]['lr'] == 0.01`).
_OPTIMIZER_HYPERPARAMETER = re.compile(r"param_groups\[\d+\]\[['\"](?P<name>\w+)['\"]\]")


def _python_value_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    guarded = problem.facts if isinstance(problem.facts, Guarded) else Guarded("other")
    name = guarded.name or "the value"
    if m := _OPTIMIZER_HYPERPARAMETER.search(problem.message or ""):
        # torch's "compiled optimizer with an LR scheduler" recipe: a tensor lr is read, not guarded
        hyper = m.group("name")
        return (f"the optimizer's {hyper} is a Python float, a constant of the compiled step: each new "
                f"value (an LR scheduler's) compiles again; pass it as a tensor when the optimizer is "
                f"made ({hyper}=torch.tensor(0.01)): the step then reads it and compiles once")
    if guarded.source == "stack_value" and "[" in (problem.message or "").split("==")[0]:
        return _length_fix(problem, settings)  # (an item of a list carried over a graph break)
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
            f"again for {name}, its use needs a constant (an `if` on it, range({name}), a shape): make "
            f"that decision outside the compiled function and pass in its result (a tensor {name} "
            "would make an `if` on it a data-dependent graph break)")


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


def _rejected_input(problem: CompileProblem) -> bool:
    """The compile this recompile made then failed with the user's own exception: it was for an
    input the code rejects (fixtures/fixes/user_exception: mark_dynamic on it fails with a
    ConstraintViolation, since the check pins the size)."""
    compile_ = problem.node.compile
    return compile_ is not None and any(p.kind is Kind.FAILURE and p.cause == "user_exception"
                                        for p in compile_.verdict.problems)


def _recompile_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    if _rejected_input(problem):
        return ("this compile was for an input the code then rejected (it raised: the failure of this "
                "compile): check inputs before the compiled call, and this recompile goes with the "
                "failure; a setting that makes the input dynamic fails where the check pins its size")
    if problem.cause == "size_mismatch":
        return _size_fix(problem, settings)
    if problem.cause == "python_value":
        return _python_value_fix(problem, settings)
    if problem.cause == "global_state":
        return _global_state_fix(problem)
    if problem.cause == "length_changed":
        return _length_fix(problem, settings)
    if problem.cause == "shape_guard":
        return _symbolic_fix(problem)
    guarded = problem.facts if isinstance(problem.facts, Guarded) else Guarded("other")
    fix = RECOMPILE_FIXES.get(problem.cause, RECOMPILE_FIXES["other"])
    return fix.format(name=guarded.name or "the value", value_type=guarded.value_type or "another type")


# ---- graph breaks -------------------------------------------------------------------------------

BREAK_FIXES = {
    "data_dependent_branch": "no setting traces a branch on a tensor's value (PyTorch calls it fundamental): "
                             "make it branchless, torch.where(cond, a, b) (both sides are computed), "
                             "or torch.cond(pred, true_fn, false_fn, operands)",
    "unsupported_construct": "rewrite that line with constructs Dynamo traces, or move it out of the "
                             "compiled function (pass its result in)",
    "explicit_graph_break": "remove the torch._dynamo.graph_break() call (PyTorch's hint) if it was left "
                            "from debugging; if it is there on purpose, the break is its price",
    "user_exception": "the code raises here on this input (it would raise without torch.compile too): "
                      "fix the condition, or raise and catch outside the compiled function",
    "dynamo_bug": "PyTorch calls this likely a Dynamo bug: report it (TORCHDYNAMO_VERBOSE=1 gives the "
                  "stack); meanwhile move that line out of the compiled function",
    "frame_skipped": "fix the graph break before it: the frame then compiles",
    "other": "see PyTorch's hints under the break; TORCHDYNAMO_VERBOSE=1 for the full stack",
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
    if call.torch_module is not None:
        return _torch_skipped_fix(problem, call)
    if call.skipped_file is not None:
        dont_skip = next((h for h in _hints_of(problem) if "dont_skip_tracing" in h), None)
        traced = (f"PyTorch's hint: {dont_skip.strip()}" if dont_skip else
                  "move the call out of the compiled function and pass its result in")
        return (f"Dynamo skips {name} for its file ({call.skipped_file}): {traced} (more breaks may "
                "follow inside it); or move the call out of the compiled function")
    return (f"no setting traces {name} (a C function): move the call out of the compiled function and "
            "pass its result in (torch.compiler.allow_in_graph, in PyTorch's hint, fails on a function "
            "that returns no tensor); an extension's function that returns tensors can stay in the "
            "graph as a custom op (torch.library.custom_op)")


def _torch_skipped_fix(problem: CompileProblem, call: SkippedCall) -> str:
    """A function of torch's that Dynamo skips on purpose, called from the user's line: the call
    moves out (fixtures/gpu_perf sync_inside: torch.cuda.synchronize() dropped from a compiled step,
    3 compile ids -> 1 and 0.261 -> 0.092 ms a call on an H200), with PyTorch's own hints."""
    name = torch_function(call)
    hints = [h.strip() for h in _hints_of(problem) if not h.strip().startswith(_GENERIC_HINTS + ("Please file",))]
    dont_skip = next((h for h in hints if "dont_skip_tracing" in h), None)
    said = [h for h in hints if h is not dont_skip]
    return (f"call {name} outside the compiled function (before or after it), or drop it where nothing "
            "needs it: PyTorch does not trace it, on purpose, so the graph breaks at your call"
            + (f" (PyTorch's hint: {' '.join(said)})" if said else "")
            + (f"; to trace it anyway, {dont_skip} (it may bring other breaks or recompiles)" if dont_skip else ""))


def _scalar_output_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    entry = problem.registry
    if entry is not None and "tolist" in entry.type and "non-integer" in entry.type:
        # gb0109: no setting traces .tolist() of a float tensor (capture_scalar_outputs does not)
        return ("keep the values a tensor (no .tolist(): tensor ops on them stay in the graph); PyTorch's "
                "hint: .tolist() is traced only on an integer tensor")
    if settings.value("capture_scalar_outputs") is True:
        return (f"{CONFIG}capture_scalar_outputs is already True (recorded): keep the value a tensor "
                "(its use needs a Python number)")
    # Where the number is used decides (fixtures/fixes, unseen programs): in tensor math the
    # setting keeps it in the graph; as a size, an `if` or a Python float() it fails or breaks again.
    return ("keep the value a tensor (drop the .item() / float() / .tolist(): tensor math on it stays in "
            f"the graph); where it must be a number used only in tensor math, {CONFIG}"
            "capture_scalar_outputs = True keeps the .item() in the graph (used as a size, a range or in "
            "an `if`, it breaks or fails again: make that test in the caller)")


def _dynamic_output_fix(settings: CompileSettings) -> str:
    if settings.value("capture_dynamic_output_shape_ops") is True:
        return (f"{CONFIG}capture_dynamic_output_shape_ops is already True (recorded): use a fixed-size "
                "form (torch.where with a mask)")
    # (fixtures/fixes: where the count feeds Python (.tolist(), a loop), the setting fails with a
    # data-dependent guard; the fixed-size form compiled in every case tried)
    return ("use a fixed-size form (torch.where with a mask, one_hot(...).sum(0) for counts); or "
            f"{CONFIG}capture_dynamic_output_shape_ops = True keeps the op in the graph while its "
            "result feeds only tensor ops")


_LEAKED = re.compile(r"Leaked output tensors: ([A-Za-z_][\w.]*)")


def _backward_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    """backward() or autograd.grad inside the compiled function, by PyTorch's registry entry and
    hints. Verified on torch 2.15 (fixtures/fixes/backward_in_compiled, and held-out programs of
    stop 57): trace_autograd_ops alone still breaks a step that returns the loss (gb4927,
    "autograd.grad consumed returned tensor's grad_fn"), with loss.detach() returned it does not;
    a gradient penalty (autograd.grad with create_graph=True, its result returned and backward()
    called on it) needed the setting alone: rc 1 (double backward through a compiled graph) -> 0."""
    entry = problem.registry
    said = entry.type if entry is not None else problem.message
    detach = ("return loss.detach(), not loss, where the function returns the tensor that backward() or "
              "autograd.grad ran through (as it is, the graph breaks again: gb4927); a tensor made from "
              "the gradients (create_graph=True, a gradient penalty) is returned as it is")
    if "consumed returned tensor" in said or settings.value("trace_autograd_ops") is True:
        # (the setting is on: it is never asked for again) PyTorch names the tensors it leaked
        leaked = _LEAKED.search(problem.message or "")
        name = leaked.group(1) if leaked else "loss"
        return (f"return {name}.detach(), not {name}: the function returns a tensor whose graph "
                "autograd.grad (or backward()) ran through, and PyTorch will not leave it to a second "
                "backward; to call backward() on it after, retain_graph=True in autograd.grad "
                "(PyTorch's hints)")
    wrong = any("torch._dynamo.trace_autograd_ops" in hint for hint in _hints_of(problem))
    setting = f"{CONFIG}trace_autograd_ops = True" + (
        " (PyTorch's hint writes torch._dynamo.trace_autograd_ops, which is not a setting)" if wrong
        else " (PyTorch's hint)" if any("trace_autograd_ops" in hint for hint in _hints_of(problem)) else "")
    return f"{setting}; and {detach}; or call backward() outside the compiled function"


def _by_design_fix(problem: CompileProblem) -> str:
    hints = _hints_of(problem)
    dont_skip = next((h for h in hints if "dont_skip_tracing" in h), None)
    if dont_skip is not None:
        # fixtures/fixes/by_design/optim_sched_in_step: on an LR scheduler's wrapped step the hint
        # removes the break and brings a grad-mode recompile
        return ("nothing to change in your code: PyTorch does not trace this function of its own, on "
                "purpose, and the graph breaks around it (counted apart from your breaks); to trace it "
                "anyway, PyTorch's hint: " + dont_skip.strip() + " (it may bring other breaks or "
                "recompiles)")
    return ("nothing to change in your code: PyTorch breaks the graph here on purpose, in its own code "
            "(torch.optim's step breaks so that AOT sees the update as an inference graph: the comment "
            "at that line says why); the code after it is compiled as a graph of its own, and the break "
            "is counted apart from your breaks")


def _family_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    """The fix of a graph break by its class (also of the break that made a frame run eagerly, or
    that fullgraph made an error)."""
    cause = problem.cause
    if cause == "print_or_logging":
        return _logging_fix(problem, settings)
    if cause == "skipped_or_c_function":
        return _skipped_fix(problem)
    if cause == "item_or_tolist":
        return _scalar_output_fix(problem, settings)
    if cause == "dynamic_output_shape":
        return _dynamic_output_fix(settings)
    if cause == "backward_in_compiled":
        return _backward_fix(problem, settings)
    if cause == "by_design":
        return _by_design_fix(problem)
    fix = BREAK_FIXES.get(cause, BREAK_FIXES["other"])
    return _agreeing_with(fix, _hints_of(problem), settings)


def _hints_of(problem: CompileProblem) -> list[str]:
    """PyTorch's hints for this problem: the break message's, else its registry's standard ones."""
    evidence = problem.evidence
    if problem.logged and evidence is not None and getattr(evidence, "hints", None):
        return list(evidence.hints)
    return []


# Hints every break of a kind carries, that say nothing of this one (graph_break_hints.py).
_GENERIC_HINTS = ("It may be possible to write Dynamo tracing rules", "Please report an issue to PyTorch",
                  "This graph break may be difficult to debug", "Your code may result in an error",
                  "This graph break is fundamental", "This is likely to be a Dynamo bug")


def _agreeing_with(fix: str, hints: list[str], settings: CompileSettings = NOT_RECORDED) -> str:
    """PyTorch's own hints for the break, after tlview's fix: a hint that names a setting only where
    that torch has it (its recorded dynamo_config; a hint's `torch._dynamo.graph_break()` is no
    setting), and none of the generic ones every break of a kind carries."""
    taken = 0
    for hint in hints:
        hint = hint.strip()
        if hint.startswith(_GENERIC_HINTS) or hint in fix or taken == 2:
            continue
        if hint.startswith("If you are attempting to call a logging function"):
            continue  # (said of every builtin a break names; a logging call is classed apart)
        names = _HINTED_SETTING.findall(hint)
        settings_named = [n for n in names if settings.has(n) is True]
        if names and not settings_named and not any(f"{n}(" in hint or f"{n}`" in hint for n in names):
            continue  # names a setting this torch is not known to have
        if settings_named and all(n in fix for n in settings_named):
            continue
        fix += f"; PyTorch's hint: {hint if len(hint) <= 160 else hint[:157] + '...'}"
        taken += 1
    return fix


# ---- restarts -----------------------------------------------------------------------------------

RESTART_FIXES = {
    "after_graph_break": "nothing of its own: fix the graph break it follows",
    "before_graph_break": "nothing of its own: fix the graph break the next attempt makes",
    "other_restart": "nothing to change: PyTorch restarts the analysis this way by design",
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
    "internal_error": "rerun with TORCHDYNAMO_VERBOSE=1 for the full stack, and report it with the "
                      "minifier's repro; " + MINIFIER,
    "export_trace_failed": "read the exception the program got; torch.export.draft_export reports every "
                           "issue without failing; a data-dependent branch needs torch.cond or "
                           "torch._check, an op with no fake kernel a register_fake",
    "user_exception": "your code raised this on this input inside the compiled function: it would raise "
                      "without torch.compile too (check with torch.compiler.set_stance(\"force_eager\")): "
                      "fix the condition at that line, or raise and catch outside the compiled function",
    "torch_runtime_error": "an op gets shapes, dtypes or devices that do not fit (it fails in eager too: "
                           "check with torch.compiler.set_stance(\"force_eager\")): fix the inputs at "
                           "that line as the message says",
    "data_dependent_guard": "a number read from a tensor's data decides a size or an `if`: tell the "
                            "compiler what holds with torch._check(...) before its use (torch._check(n > 0)), "
                            "use torch.cond for an `if` on it, or keep the value a tensor",
    "control_flow_op": "a torch.cond (or while_loop, scan, map) must get branches that return the same "
                       "number of tensors of the same dtype, device and number of dims: make both "
                       "branches return alike (cast one: .to(dtype))",
    "other": "rerun with TORCHDYNAMO_VERBOSE=1 for the full stack",
}


def _entry_problem(problem: CompileProblem):
    """A failure told by a graph break (a frame given up, a break made an error), as that break:
    its class (the registry entry's family) and hints, to choose its fix by."""
    from dataclasses import replace

    entry = problem.registry
    if entry is None:
        return None
    family = entry.family if entry.family != "frame_skipped" else "other"
    return replace(problem, kind=Kind.GRAPH_BREAK, cause=family,
                   evidence=_FailureHints(_failure_hints(problem)))


class _FailureHints:
    """The hints a failure's message carries (`Hint: ...` lines), as a graph break's."""

    def __init__(self, hints: list[str]) -> None:
        self.hints = hints


def _failure_hints(problem: CompileProblem) -> list[str]:
    reason = getattr(problem.evidence, "fail_reason", "") or ""
    first = reason.split("*** While handling this graph break", 1)[0]
    return [line.strip()[len("Hint:"):].strip() for line in first.split("\n") if line.strip().startswith("Hint:")]


def _frame_skipped_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    broke = _entry_problem(problem)
    where = f" at line {problem.source_place[1]}" if problem.source_place else ""
    if broke is None:
        return (f"fix the graph break{where} that made Dynamo give up the frame (TORCH_LOGS=graph_breaks "
                "tells it): the frame then compiles whole")
    return (f"fix the graph break{where} ({broke.cause}: {_family_fix(broke, settings)}): Dynamo cannot "
            "resume after a break inside a loop, so it runs the whole frame eagerly; with the break "
            "gone the frame compiles whole")


def _unsupported_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    broke = _entry_problem(problem)
    made_error = ("torch.export allows no graph break" if problem.node.is_outside else
                  "fullgraph=True (or error_on_graph_break, or torch.export) allows no graph break")
    if broke is None:
        return f"remove the construct from the compiled code ({made_error}; without them it is a graph break)"
    return f"{made_error}: fix this one ({broke.cause}: {_family_fix(broke, settings)})"


def _recompile_limit_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    """The frame now runs eagerly: the fix is that of the recompile that kept repeating."""
    limit = f"{CONFIG}{settings.recompile_limit_name}"
    now = settings.value(settings.recompile_limit_name)
    raise_it = f"raise {limit}{f' (now {now})' if now is not UNKNOWN else ''} if each version is worth it"
    compile_ = problem.node.compile
    repeated = (next((p for p in compile_.verdict.problems if p.kind is Kind.RECOMPILE), None)
                if compile_ is not None else None)  # (a node of the index has its compile)
    if repeated is None or repeated.cause == NOT_LOGGED:
        return f"the frame now runs eagerly: fix the reason that repeats (the recompiles before it), or {raise_it}"
    return f"the frame now runs eagerly: {_recompile_fix(repeated, settings)}; or {raise_it}"


def _user_exception_fix(problem: CompileProblem, raised: RaisedByUser) -> str:
    """The program's own error, not a tracing limit: where Dynamo raised Unsupported from it, the
    program's `except` for the user's class no longer catches it."""
    where = f" at line {problem.source_place[1]}" if problem.source_place else " at that line"
    own = (f"your code raises {raised.type_name} on this input (it would without torch.compile too: "
           f"check with torch.compiler.set_stance(\"force_eager\")): fix the condition{where}, or raise and "
           "catch outside the compiled function")
    if raised.fell_back is False:
        return (f"{own}; the program gets torch._dynamo.exc.Unsupported, not {raised.type_name} (yours is "
                f"its __cause__): an `except {raised.type_name}` around the compiled call does not catch it")
    return own


def _failure_fix(problem: CompileProblem, settings: CompileSettings) -> str:
    if problem.cause == "recompile_limit":
        return _recompile_limit_fix(problem, settings)
    if problem.cause == "frame_skipped":
        return _frame_skipped_fix(problem, settings)
    if problem.cause == "unsupported":
        return _unsupported_fix(problem, settings)
    if problem.cause == "user_exception" and isinstance(problem.facts, RaisedByUser):
        return _user_exception_fix(problem, problem.facts)
    if problem.cause == "missing_fake_kernel":
        name = problem.subject or "the op"
        return (f"register one: @{name.split('::')[-1]}.register_fake (or "
                f"torch.library.register_fake(\"{name}\")), returning empty tensors of the "
                "output shapes (torch.empty_like(x), x.new_empty(...))")
    return FAILURE_FIXES.get(problem.cause, FAILURE_FIXES["other"])


# ---- per problem --------------------------------------------------------------------------------

def fix_for(problem: CompileProblem) -> str:
    """What to do about a problem: decided once per problem and the settings of its compile;
    --report at 10,000 compile ids asked each twice or three times (the costs, the problem's
    entry, its diagnosis), 22,000 fixes."""
    compile_ = problem.node.compile
    if compile_ is None:
        return _fix(problem, NOT_RECORDED)
    settings = settings_of(compile_)  # (read once per revision of the compile)
    # (a fix is checked against its problem and settings: the verdict need not be asked again)
    fixes = (_DECIDED.get(compile_) or _decided_of(compile_)).fixes
    held = fixes.get(id(problem))
    # (the problem is held: its id is not another's)
    if held is None or held[0] is not problem or held[1] is not settings:
        held = fixes[id(problem)] = (problem, settings, _fix(problem, settings))
    return held[2]


def _fix(problem: CompileProblem, settings: CompileSettings) -> str:
    if problem.kind is Kind.RECOMPILE:
        fix = _recompile_fix(problem, settings)
    elif problem.kind is Kind.GRAPH_BREAK:
        fix = _family_fix(problem, settings)
    elif problem.kind is Kind.RESTART:
        fix = RESTART_FIXES.get(problem.cause, RESTART_FIXES[NOT_LOGGED])
    elif problem.kind is Kind.PERF:
        return perf_fix(problem, settings)
    else:
        fix = _failure_fix(problem, settings)  # (a failure, or a frame run eagerly)
    return _settings_that_exist(fix, settings)


_NAMED_SETTING = re.compile(r"torch\._dynamo\.config\.(\w+)")


def _settings_that_exist(fix: str, settings: CompileSettings) -> str:
    """Whatever rule wrote the fix, a setting it names that this compile's torch does not have (its
    recorded dynamo_config lacks it, or its version is older) is said to be missing, not asked for."""
    missing = [name for name in dict.fromkeys(_NAMED_SETTING.findall(fix)) if settings.has(name) is False]
    if not missing:
        return fix
    version = ".".join(map(str, settings.torch_version)) if settings.torch_version else "this run's"
    return fix + "; " + ", ".join(f"torch {version} has no {CONFIG}{name}" for name in missing) + \
        " (its dynamo_config does not list it): the rest of the fix stands"


def diagnose(problems) -> list[Diagnosis]:
    """The problems to act on (a restart that follows a graph break is that break's), each with
    its fix."""
    found = [Diagnosis(p.kind.key, p.cause, p.why, fix_for(p), p.source_place,
                       (p.registry.gb_id, p.registry.type) if p.registry is not None else None)
             for p in problems if p.primary]
    # a frame run eagerly leads (none of it is compiled), in every view that lists diagnoses
    return sorted(found, key=lambda d: d.kind != Kind.FRAME_SKIPPED.key)


def diagnose_node(node: CompileNode) -> tuple[Diagnosis, ...]:
    """What happened in one compile id (attempt): its part of its compile's verdict. Decided
    once per verdict (the costs, the compile's entry and the explorer all ask)."""
    compile_ = node.compile
    assert compile_ is not None, node.id  # (the index gives each node its compile)
    decided = _decided_of(compile_)
    found = decided.diagnoses.get(node)
    if found is None:
        found = decided.diagnoses[node] = tuple(diagnose(p for p in decided.verdict.problems if p.node is node))
    return found


@dataclass(eq=False)
class _Decided:
    """What was decided of one compile: valid while it has this verdict at this revision (a
    followed compile that takes a record is judged again, and decided again)."""

    verdict: Verdict
    revision: int
    fixes: dict[int, tuple[CompileProblem, CompileSettings, str]] = field(default_factory=dict)  # by id(problem)
    diagnoses: dict[CompileNode, tuple[Diagnosis, ...]] = field(default_factory=dict)


# (weak: a compile the index let go takes its decisions with it)
_DECIDED: WeakKeyDictionary[Compile, _Decided] = WeakKeyDictionary()


def _decided_of(compile_: Compile) -> _Decided:
    verdict = compile_.verdict
    decided = _DECIDED.get(compile_)
    if decided is None or decided.verdict is not verdict or decided.revision != compile_.revision:
        decided = _DECIDED[compile_] = _Decided(verdict, compile_.revision)
    return decided
