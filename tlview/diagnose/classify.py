"""What to do about each problem of the verdict (model/verdict.py): the fix for its cause class,
in the user's terms. The cause and the why are the model's; only the advice is decided here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tlview.model.causes import NOT_LOGGED
from tlview.model.verdict import CompileProblem, Kind


@dataclass(frozen=True, slots=True)
class Diagnosis:
    kind: str  # recompile, graph_break, restart, failure
    cause: str  # the class
    why: str  # one line, in the user's terms
    fix: str

    def as_dict(self) -> dict:
        return {"kind": self.kind, "cause": self.cause, "why": self.why, "fix": self.fix}


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
    NOT_LOGGED: "run with TORCH_LOGS=recompiles (or TORCH_TRACE) to see the guard that failed",
}


# ---- graph breaks -------------------------------------------------------------------------------

BREAK_FIXES = {
    "print_or_logging": "remove it from the compiled region, or allow it without a break: "
                        "torch._dynamo.config.reorderable_logging_functions.add(print)",
    "backward_in_compiled": "call backward() outside the compiled function (compile the model and the "
                            "loss, not the whole step), or let Dynamo trace it: "
                            "torch._dynamo.config.trace_autograd_ops = True (PyTorch's hint says "
                            "torch._dynamo.trace_autograd_ops, which does not exist), or use compiled "
                            "autograd (torch._dynamo.config.compiled_autograd = True)",
    "data_dependent_branch": "express it with torch.where / torch.cond, or move the branch out of the "
                             "compiled function",
    "item_or_tolist": "keep the value a tensor; or set torch._dynamo.config.capture_scalar_outputs = True",
    "dynamic_output_shape": "set torch._dynamo.config.capture_dynamic_output_shape_ops = True, or use a "
                            "fixed-size form (torch.where with a mask)",
    "skipped_or_c_function": "move the call out of the compiled code; or wrap it: "
                             "torch._dynamo.allow_in_graph, or a custom op (torch.library.custom_op) so "
                             "it stays in the graph",
    "unsupported_construct": "rewrite that line with supported constructs (lists instead of generators, "
                             "plain functions); TORCHDYNAMO_VERBOSE=1 shows the full stack",
    "other": "see the hints under the break; TORCHDYNAMO_VERBOSE=1 for the full stack",
    NOT_LOGGED: "run with TORCH_LOGS=graph_breaks (or TORCH_TRACE) to see what broke the graph",
}
# A setting a hint names (`torch._dynamo.config.x`, or `torch._dynamo.x`, which some hints write for it).
_HINTED_SETTING = re.compile(r"torch\._dynamo\.(?:config\.)?(\w+)")


def _break_fix(problem: CompileProblem) -> str:
    if problem.cause == "print_or_logging" and problem.subject:
        fix = ("remove it from the compiled region, or let Dynamo skip it without a break: "
               f"torch._dynamo.config.ignore_logging_functions.add({problem.subject})")
    else:
        fix = BREAK_FIXES.get(problem.cause, BREAK_FIXES["other"])
    return _agreeing_with(fix, problem.evidence.hints if problem.logged else [])


def _agreeing_with(fix: str, hints: list[str]) -> str:
    """When PyTorch's hint names a setting, the fix names it too (as `torch._dynamo.config.x`)."""
    for hint in hints:
        for name in _HINTED_SETTING.findall(hint):
            if name not in fix:
                fix += f"; PyTorch's hint: set torch._dynamo.config.{name} ({hint.strip()})"
    return fix


# ---- restarts -----------------------------------------------------------------------------------

RESTART_FIXES = {
    "after_graph_break": "nothing of its own: fix the graph break it follows",
    "tensorify_scalar": "torch._dynamo.config.specialize_float = True (it then recompiles once per value), "
                        "or keep the value a tensor and use torch ops on it (torch.floor)",
    NOT_LOGGED: "run with TORCH_LOGS=+dynamo (\"Restarting analysis due to ...\") or TORCH_TRACE to see "
                "why it restarted",
}

# ---- failures -----------------------------------------------------------------------------------

MINIFIER = ("reproduce and minify: TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=2 python "
            "your_script.py (writes a small repro); try backend='aot_eager' to tell Dynamo/AOT "
            "issues from Inductor ones")
FAILURE_FIXES = {
    "recompile_limit": RECOMPILE_FIXES["recompile_limit"],
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


def _failure_fix(problem: CompileProblem) -> str:
    if problem.cause == "missing_fake_kernel":
        name = problem.subject or "the op"
        return (f"register one: @{name.split('::')[-1]}.register_fake (or "
                f"torch.library.register_fake(\"{name}\")), returning empty tensors of the "
                "output shapes (torch.empty_like(x), x.new_empty(...))")
    return FAILURE_FIXES.get(problem.cause, FAILURE_FIXES["other"])


# ---- per problem --------------------------------------------------------------------------------

def fix_for(problem: CompileProblem) -> str:
    if problem.kind is Kind.RECOMPILE:
        return RECOMPILE_FIXES.get(problem.cause, RECOMPILE_FIXES["other"])
    if problem.kind is Kind.GRAPH_BREAK:
        return _break_fix(problem)
    if problem.kind is Kind.RESTART:
        return RESTART_FIXES.get(problem.cause, RESTART_FIXES[NOT_LOGGED])
    return _failure_fix(problem)


def diagnose(problems) -> list[Diagnosis]:
    """The problems to act on (a restart that follows a graph break is that break's), each with
    its fix."""
    return [Diagnosis(p.kind.key, p.cause, p.why, fix_for(p)) for p in problems if p.primary]


def diagnose_node(node) -> list[Diagnosis]:
    """What happened in one compile id (attempt): its part of its compile's verdict."""
    return diagnose(p for p in node.compile.verdict.problems if p.node is node)

