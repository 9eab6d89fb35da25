"""Why a compile recompiled, broke or failed, in the user's terms, and what to do about it.

Classes come from the structured fields first (the guard kind in a recompile reason, the fail
type) and from several phrasings of each reason, not one exact sentence: wording moves between
PyTorch versions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tlview.model.compile_node import CompileNode
from tlview.model.reasons import GraphBreak, RecompileReason, is_graph_break_restart


@dataclass(frozen=True, slots=True)
class Diagnosis:
    kind: str  # recompile, graph_break, failure
    cause: str  # the class
    why: str  # one line, in the user's terms
    fix: str

    def as_dict(self) -> dict:
        return {"kind": self.kind, "cause": self.cause, "why": self.why, "fix": self.fix}


def _search(patterns, text: str) -> re.Match | None:
    for pattern in patterns:
        m = re.search(pattern, text, re.IGNORECASE | re.DOTALL)
        if m:
            return m
    return None


# ---- recompiles ---------------------------------------------------------------------------------

RECOMPILE_FIXES = {
    "size_mismatch": "mark the dim dynamic: torch._dynamo.mark_dynamic(x, dim) (or maybe_mark_dynamic, "
                     "or torch.compile(dynamic=True)); if only a few sizes occur, pad or bucket the inputs",
    "stride_mismatch": "pass inputs with the same layout each call (.contiguous() before the call), or "
                       "mark the dim dynamic if strides follow sizes",
    "dtype_mismatch": "cast inputs to one dtype before the compiled call (x.float()), or expect one "
                      "compiled version per dtype",
    "device_mismatch": "keep inputs on one device for a compiled function (x.to(device) first)",
    "requires_grad_mismatch": "call with requires_grad set the same way each time (or compile the "
                              "training and the inference paths separately, e.g. under torch.no_grad())",
    "python_value": "pass a tensor instead of a changing Python number, or let Dynamo treat it as "
                    "dynamic (torch._dynamo.config.specialize_int/float=False, or mark_dynamic)",
    "python_flag": "a Python flag (a bool or None attribute or argument) is part of the compiled code: "
                   "each value compiles once; keep it fixed between calls, or expect one compile per "
                   "value (compile each mode separately), or make it a tensor and use torch.where",
    "shape_guard": "a branch on a size (if x.shape[0] <= 9) pins the size range: remove the branch, "
                   "use torch.cond, or accept one compile per side of it",
    "object_identity": "pass the same module/function object each call (create it once, outside the "
                       "loop), or compile the module itself rather than a function that receives it",
    "global_state": "keep grad mode, autocast and the guarded globals the same across calls, or compile "
                    "the two modes separately",
    "recompile_limit": "the frame now runs eagerly: fix the reason that repeats (see above), or raise "
                       "torch._dynamo.config.recompile_limit if each version is worth it",
    "other": "read the failed guard; TORCH_LOGS=recompiles_verbose shows every guard that failed",
}

_RECOMPILE_RULES = [  # (cause, patterns, why); first match wins
    ("size_mismatch", [r"size mismatch", r"\bsizes? (?:changed|differ)"],
     "input {tensor} changed size{detail}"),
    ("stride_mismatch", [r"stride mismatch", r"\bstrides? (?:changed|differ)"],
     "input {tensor} changed strides (memory layout){detail}"),
    ("dtype_mismatch", [r"dtype mismatch", r"\bdtype (?:changed|differ)"],
     "input {tensor} changed dtype{detail}"),
    ("device_mismatch", [r"device mismatch", r"\bdevice (?:changed|differ)", r"device_index"],
     "input {tensor} moved to another device{detail}"),
    ("requires_grad_mismatch", [r"requires_grad mismatch", r"requires_grad (?:changed|differ)"],
     "input {tensor} changed requires_grad{detail}"),
    ("global_state", [r"GLOBAL_STATE", r"grad_mode", r"autocast", r"torch_function_mode",
                      r"\bdeterministic_algorithms\b", r"___check_global_state"],
     "global state changed between calls ({detail})"),
    ("object_identity", [r"___check_obj_id", r"___check_type_id", r"ID_MATCH", r"TYPE_MATCH",
                         r"\bis not\b", r"___check_current_backend"],
     "a different object was passed or captured ({detail})"),
    ("shape_guard", [r"\bsize\(\)\[\d+\]", r"\bstride\(\)\[\d+\]", r"\bEq\(|\bNe\(|Mod\(",
                     r"\bs\d+\b\s*(?:<|>|<=|>=|==)"],
     "a guard on a symbolic size failed: {detail}"),
    ("python_flag", [r"^[\w\[\]'\".]+ == (?:True|False|None)\b", r"^[\w\[\]'\".]+ is (?:not )?None\b"],
     "a Python flag changed: {detail}"),
    ("python_value", [r"^[\w\[\]'\".]+ == -?[\d.]+(?:e-?\d+)?\b", r"^[\w\[\]'\".]+ == '[^']*'",
                      r"\bCONSTANT_MATCH\b", r"\bEQUALS_MATCH\b"],
     "a Python value changed: {detail}"),
]
_TENSOR_NAME = re.compile(r"tensor '([^']+)'")
_EXPECTED = re.compile(r"(?:at index (\d+)\. )?expected ([^,]+), actual (\S+)")


def diagnose_recompile(reason: RecompileReason) -> Diagnosis:
    first = reason.guard.strip()
    tensor_m = _TENSOR_NAME.search(first)
    tensor = f"'{tensor_m.group(1)}'" if tensor_m else ""
    exp = _EXPECTED.search(first)
    detail = ""
    if exp:
        index, expected, actual = exp.groups()
        detail = (f" at dim {index}: {expected} -> {actual}" if index is not None
                  else f": {expected} -> {actual.rstrip('.')}")
    for cause, patterns, why in _RECOMPILE_RULES:
        if _search(patterns, first):
            # tensor mismatches say what changed; other guards are quoted
            detail_text = detail if cause.endswith("_mismatch") else first
            return Diagnosis("recompile", cause, why.format(tensor=tensor, detail=detail_text),
                             RECOMPILE_FIXES[cause])
    return Diagnosis("recompile", "other", f"a guard failed: {first}", RECOMPILE_FIXES["other"])


# ---- graph breaks -------------------------------------------------------------------------------

BREAK_RULES = [  # (cause, patterns over reason+detail+explanation+the user's line, why, fix)
    ("print_or_logging",
     [r"operator `print`", r"builtin `?print`?\b", r"logging function", r"\blogging\.\w+",
      r"\blogger\.(?:debug|info|warning|error|exception)\b", r"`warnings\.warn`", r"/logging/__init__\.py"],
     "a print or logging call inside the compiled code",
     "remove it from the compiled region, or allow it without a break: "
     "torch._dynamo.config.reorderable_logging_functions.add(print)"),
    ("backward_in_compiled",
     [r"Tensor\.backward\(\)", r"\.backward\(\) call", r"trace_autograd_ops"],
     "loss.backward() inside the compiled function",
     "call backward() outside the compiled function (compile the model and the loss, not the whole "
     "step), or let Dynamo trace it: torch._dynamo.config.trace_autograd_ops = True (PyTorch's hint "
     "says torch._dynamo.trace_autograd_ops, which does not exist), or use compiled autograd "
     "(torch._dynamo.config.compiled_autograd = True)"),
    ("data_dependent_branch",
     [r"data-dependent branch", r"data dependent (?:control flow|branch)", r"generic_jump",
      r"branch condition involves a tensor"],
     "Python control flow on a tensor's value (if tensor.sum() > 0)",
     "express it with torch.where / torch.cond, or move the branch out of the compiled function"),
    ("item_or_tolist",
     [r"Tensor\.item\(\)", r"\.item\(\)", r"tolist\(\)", r"capture_scalar_outputs",
      r"_local_scalar_dense"],
     "a tensor turned into a Python number (.item() / .tolist())",
     "keep the value a tensor; or set torch._dynamo.config.capture_scalar_outputs = True"),
    ("dynamic_output_shape",
     [r"dynamic shape operator", r"output shape depends on input Tensor data",
      r"capture_dynamic_output_shape_ops", r"\bnonzero\b", r"\bunique\b"],
     "an op whose output size depends on data (nonzero, unique, masked_select)",
     "set torch._dynamo.config.capture_dynamic_output_shape_ops = True, or use a fixed-size form "
     "(torch.where with a mask)"),
    ("skipped_or_c_function",
     [r"marked as skipped", r"should not be traced", r"skipfiles", r"Python builtin \(e\.g\.",
      r"C/C\+\+ Python extension", r"pybind", r"cannot trace.*(?:C function|builtin)",
      r"torch\._dynamo\.disable"],
     "a function Dynamo skips or cannot trace (a C function or a skipped module)",
     "move the call out of the compiled code; or wrap it: torch._dynamo.allow_in_graph, or a custom "
     "op (torch.library.custom_op) so it stays in the graph"),
    ("unsupported_construct",
     [r"tp_iternext", r"generator", r"Unsupported method call", r"Unsupported function call",
      r"Failed to trace builtin operator", r"not supported", r"does not (?:know how to|support)",
      r"Unsupported"],
     "a Python construct Dynamo does not support here",
     "rewrite that line with supported constructs (lists instead of generators, plain functions); "
     "TORCHDYNAMO_VERBOSE=1 shows the full stack"),
]


_LOGGING_CALL = re.compile(r"\b((?:logging|[A-Za-z_]*log(?:ger)?)\.(?:debug|info|warning|warn|error|exception|critical|log))\(")
# A setting a hint names (`torch._dynamo.config.x`, or `torch._dynamo.x`, which some hints write for it).
_HINTED_SETTING = re.compile(r"torch\._dynamo\.(?:config\.)?(\w+)")


def diagnose_graph_break(gb: GraphBreak) -> Diagnosis:
    # Not the hints: they are generic ("if you are calling a logging function (e.g. print)..."). The
    # user's own line tells what was called (a break inside `logging` happens in the library).
    frame = gb.user_frame()
    text = " ".join(filter(None, [gb.reason, gb.detail, gb.explanation, gb.location, frame and frame[1]]))
    where = f" at {gb.where.rsplit('/', 1)[-1]}" if gb.where else ""
    for cause, patterns, why, fix in BREAK_RULES:
        if _search(patterns, text):
            if cause == "print_or_logging" and (call := _LOGGING_CALL.search(text)):
                why = "a logging call inside the compiled code"
                fix = ("remove it from the compiled region, or let Dynamo skip it without a break: "
                       f"torch._dynamo.config.ignore_logging_functions.add({call.group(1)})")
            return Diagnosis("graph_break", cause, why + where, _agreeing_with(fix, gb.hints))
    return Diagnosis("graph_break", "other", (gb.detail or gb.reason) + where,
                     _agreeing_with("see the hints under the break; TORCHDYNAMO_VERBOSE=1 for the full "
                                    "stack", gb.hints))


def _agreeing_with(fix: str, hints: list[str]) -> str:
    """When PyTorch's hint names a setting, the fix names it too (as `torch._dynamo.config.x`)."""
    for hint in hints:
        for name in _HINTED_SETTING.findall(hint):
            if name not in fix:
                fix += f"; PyTorch's hint: set torch._dynamo.config.{name} ({hint.strip()})"
    return fix


# ---- failures -----------------------------------------------------------------------------------

TENSORIFY_RESTART = Diagnosis(
    "restart", "tensorify_scalar",
    "a Python float was made a tensor, then had to be specialized (math.floor or another non-tensor "
    "use of it): Dynamo restarted the analysis (TensorifyScalarRestartAnalysis, not a graph break)",
    "torch._dynamo.config.specialize_float = True (it then recompiles once per value), or keep the "
    "value a tensor and use torch ops on it (torch.floor)")

MINIFIER = ("reproduce and minify: TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=2 python "
            "your_script.py (writes a small repro); try backend='aot_eager' to tell Dynamo/AOT "
            "issues from Inductor ones")


def diagnose_failure(fail_type: str | None, fail_reason: str | None) -> Diagnosis:
    fail_type = fail_type or ""
    reason = fail_reason or ""
    first = reason.split("\n", 1)[0].strip()
    if _search([r"recompile[_ ]limit", r"cache[_ ]size[_ ]limit"], reason):
        return Diagnosis("failure", "recompile_limit",
                         "the recompile limit was hit: this frame now runs eagerly",
                         RECOMPILE_FIXES["recompile_limit"])
    if _search([r"no fake impl registered", r"register_fake", r"fake kernel", r"Meta kernel"], reason):
        op = re.search(r"CustomOpDef\(([\w.:]+)\)|for operator (\S+)|`(\w+)\.register_fake`", reason)
        name = next((g for g in op.groups() if g), "the op") if op else "the op"
        return Diagnosis("failure", "missing_fake_kernel",
                         f"the custom op {name} has no fake (meta) kernel: Dynamo cannot run it on "
                         "fake tensors to learn its output shapes",
                         f"register one: @{name.split('::')[-1]}.register_fake (or "
                         f"torch.library.register_fake(\"{name}\")), returning empty tensors of the "
                         "output shapes (torch.empty_like(x), x.new_empty(...))")
    if "BackendCompilerFailed" in fail_type or _search([r"backend='?\w+'? raised"], reason):
        lines = [ln.strip() for ln in reason.split("\n") if ln.strip()]
        raised = lines[1] if len(lines) > 1 and lines[0].endswith("raised:") else first
        return Diagnosis("failure", "backend_compiler_failed",
                         f"the backend compiler raised {raised}", MINIFIER)
    if "ConstraintViolation" in fail_type or _search([r"marked .* as dynamic but", r"Constraints violated"], reason):
        return Diagnosis("failure", "constraint_violation",
                         "a dim marked dynamic was specialized to a constant by the code",
                         "use torch._dynamo.maybe_mark_dynamic (allows specialization), or remove the "
                         "code that pins the size (a comparison with a constant); TORCH_LOGS=+dynamic "
                         "shows where")
    if "Unsupported" in fail_type:
        return Diagnosis("failure", "unsupported", f"Dynamo cannot trace this (fullgraph or a hard "
                         f"limit): {first}", "remove the construct from the compiled code, or drop "
                         "fullgraph=True to allow a graph break there")
    if _search([r"Internal", r"InternalTorchDynamoError", r"AssertionError"], fail_type):
        return Diagnosis("failure", "internal_error", f"an error inside torch.compile: {first}",
                         "rerun with TORCHDYNAMO_VERBOSE=1 for the full stack, and report it with "
                         "the minifier's repro; " + MINIFIER)
    return Diagnosis("failure", "other", f"{fail_type}: {first}".strip(": "),
                     "rerun with TORCHDYNAMO_VERBOSE=1 for the full stack")


# ---- per compile id -------------------------------------------------------------------------------

def diagnose_node(node: CompileNode) -> list[Diagnosis]:
    """The recompile's cause, every graph break, restart and failure of a compile id, diagnosed."""
    out: list[Diagnosis] = []
    failure = node.failure
    refused = failure is not None and bool(_search([r"recompile[_ ]limit"], failure.fail_reason))
    if (cause := node.recompile_cause) is not None:
        out.append(diagnose_recompile(cause))
    if refused:
        causes = [d.cause for d in out] or ["other"]
        out.insert(0, Diagnosis("recompile", "recompile_limit",
                                f"compile #{(node.cid.frame_compile or 0) + 1} of this frame was refused "
                                f"(recompile limit); it recompiled each time for: {', '.join(causes)}",
                                RECOMPILE_FIXES["recompile_limit"]))
    for gb in node.breaks:
        out.append(diagnose_graph_break(gb))
    for reason in node.restart_reasons:
        if not is_graph_break_restart(reason):
            out.append(TENSORIFY_RESTART)
    if failure is not None:
        out.append(diagnose_failure(failure.fail_type, failure.fail_reason))
    return out
