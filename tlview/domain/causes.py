"""The cause class of a recompile, graph break, restart or failure, and one line of why, in the
user's terms: decided here, once, for every view (the fixes are diagnose's).

Classes come from the structured fields first (the guard kind in a recompile reason, the fail
type) and from several phrasings of each reason, not one exact sentence: wording moves between
PyTorch versions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tlview.domain.break_registry import FAMILIES, RegistryEntry, entry, entry_in, gb_ids_in
from tlview.domain.reasons import GraphBreak, RecompileReason, is_library_path
from tlview.patterns import LazyPattern, lazy


@dataclass(frozen=True, slots=True)
class Guarded:
    """What the failed guard of a recompile read: where the value lives, its name and its type,
    and the hint PyTorch wrote beside it. The fix depends on it: a module's int attribute, a
    global, a value carried over a graph break and an argument each have another remedy."""

    source: str  # one of GUARD_SOURCES
    name: str | None = None  # `self.temperature`, `SCALE`, `n`, `x`, `___stack0`
    value_type: str | None = None  # int, float, bool, str, None: the literal the guard compares with
    hint: str | None = None  # PyTorch's HINT beside the guard
    dim: int | None = None  # an input tensor's dim that changed (`size mismatch at index 1`)


@dataclass(frozen=True, slots=True)
class LoggingCall:
    """A print or logging call that broke the graph, with what the break message tells of it."""

    function: str  # `print`, `logging.warning`
    argument_types: tuple[str, ...] | None = None  # as Dynamo names them: ('str', 'tuple')
    has_kwargs: bool | None = None

    @property
    def reorderable(self) -> bool | None:
        """Whether torch can move the call after the graph (reorderable_logging_functions): only
        for calls with no keyword arguments whose arguments are tensors, constants or strings
        (torch 2.15, variables/misc.py). None: the message did not say."""
        if self.argument_types is None:
            return None
        return not self.has_kwargs and all(t in _REORDERABLE_TYPES for t in self.argument_types)

    @property
    def logger_method(self) -> bool:
        """A Logger's method (`log.warning`), not a function of `logging` or a builtin: torch never
        reorders those; only ignore_logging_functions takes them."""
        return "." in self.function and not self.function.startswith("logging.")

    @property
    def unreorderable_arguments(self) -> str:
        """What keeps it from being reordered: `a tuple`, `keyword arguments`."""
        kinds = [f"a {t}" for t in dict.fromkeys(self.argument_types or ()) if t not in _REORDERABLE_TYPES]
        return " and ".join(kinds + (["keyword arguments"] if self.has_kwargs else [])) or "other arguments"


_REORDERABLE_TYPES = frozenset({"str", "int", "float", "bool", "NoneType", "complex", "Tensor",
                                "torch.Tensor", "Parameter", "torch.nn.Parameter"})


@dataclass(frozen=True, slots=True)
class SkippedCall:
    """A call Dynamo would not trace: a function someone wrapped in torch.compiler.disable, or a
    C function (a builtin or an extension's)."""

    function: str | None  # `smooth`, `posix.getpid`, `zlib.crc32`
    disabled: bool  # wrapped with torch.compiler.disable / torch._dynamo.disable
    skipped_file: str | None = None  # a Python function Dynamo skips for its file (`file is force-skipped
    # (.../site-packages/lib/x.py)`, `in skipfiles`): PyTorch's skip reason; None for a C function
    torch_module: str | None = None  # `torch.cuda`: a function of torch's own that its developers
    # marked as not to be traced, called from the user's line (`module: torch.cuda` in the context)


@dataclass(frozen=True, slots=True)
class RaisedByUser:
    """An exception the user's code raised inside a compiled function that no handler there
    caught, and what Dynamo did with it (torch 2.15 names it "Observed exception", gb0088)."""

    exception: str | None  # as Dynamo quoted it: `ValueError('negative scale')`; None: not logged
    fell_back: bool | None  # Dynamo ran the frame eagerly (which raised it again); False: it raised
    # torch._dynamo.exc.Unsupported instead (fullgraph=True, error_on_graph_break); None: not told
    observed: bool = True  # Dynamo traced the raise ("Observed exception"), not only its class is known

    @property
    def type_name(self) -> str:
        name = (self.exception or "").split("(", 1)[0].split(":", 1)[0].strip()
        return name or "the exception"


_SKIPPED_FUNCTION = lazy(r"calling function `<function (?P<fn>[\w.<>]+) at|the builtin `(?P<builtin>[\w.]+?)\.?`")


_SKIP_REASON = lazy(r"skip reason: (?P<reason>[^\n]+)")
_QUALNAME = lazy(r"qualname: (?P<q>[\w.<>]+)")
_TORCH_MODULE = lazy(r"module: (?P<m>torch(?:\.\w+)*)\b")
_TORCH_FILE = lazy(r"(?:filename:|in file) `[^`]*/(?P<path>torch(?:/\w+)*)\.py`")


def _skipped_call(gb: GraphBreak) -> SkippedCall:
    text = " ".join(filter(None, [gb.detail, gb.explanation]))
    m = _SKIPPED_FUNCTION.search(text) or _QUALNAME.search(gb.context or "")
    name = next((g for g in m.groups() if g), None) if m else None
    reason = _SKIP_REASON.search(gb.context or "")
    c_function = reason is None or "C extension or builtin" in reason.group("reason") or "builtin" in text
    return SkippedCall(name, "disable" in (gb.detail or "") or "wrapped with `torch.compiler.disable`" in text,
                       None if c_function or reason is None else reason.group("reason"),
                       _torch_module(" ".join(filter(None, [gb.context, gb.explanation]))))


def _torch_module(text: str) -> str | None:
    """`torch.cuda` of a skipped function of torch's own: the debug context's `module:`, else its
    `filename:` (torch 2.15 names only the file: `.../torch/optim/lr_scheduler.py`)."""
    if m := _TORCH_MODULE.search(text):
        return m.group("m")
    if m := _TORCH_FILE.search(text):
        return m.group("path").replace("/", ".").removesuffix(".__init__")
    return None


@dataclass(frozen=True, slots=True)
class Cause:
    cause: str  # the class
    why: str  # one line, in the user's terms
    subject: str | None = None  # what the fix names: the logging call, the custom op
    facts: Guarded | LoggingCall | SkippedCall | RaisedByUser | None = None  # what the fix is chosen from
    # (diagnose/classify.py)
    registry: RegistryEntry | None = None  # a graph break's (or failure's) entry in PyTorch's registry


def any_of(patterns: list[str]) -> LazyPattern:
    """One compiled pattern that matches where any of `patterns` does (case and newlines
    ignored): a rule is one search, not one per phrasing (the verdicts of 10,000 compiles were
    spent mostly in re's cache lookups)."""
    return lazy("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE | re.DOTALL)


# What a view says of a problem the logs imply but do not tell: the class, and the TORCH_LOGS
# category (or the trace) that would have told it.
NOT_LOGGED = "not_logged"


# ---- recompiles ---------------------------------------------------------------------------------

# The kind of guard that failed, read from the guard's own code as torch prints it (guards.py's
# GuardBuilder: TENSOR_MATCH writes `tensor 'x' size mismatch ...`, ID_MATCH `___check_obj_id(...)`,
# TYPE_MATCH `___check_type_id(...)`, LENGTH_CHECK `len(x) == 3`, DICT_KEYS_MATCH `list(d.keys())
# == [...]`, EQUALS_MATCH `x == 2`, the shape environment `Ne(Mod(s0, 4), 0)`); the first match wins.
_RECOMPILE_PHRASES = [  # (cause, patterns, why)
    ("size_mismatch", [r"^tensor '.*?' size mismatch", r"\bsizes? (?:changed|differ)"],
     "input {tensor} changed size{detail}"),
    ("stride_mismatch", [r"^tensor '.*?' stride mismatch", r"\bstrides? (?:changed|differ)"],
     "input {tensor} changed strides (memory layout){detail}"),
    ("dtype_mismatch", [r"^tensor '.*?' dtype mismatch", r"\bdtype (?:changed|differ)"],
     "input {tensor} changed dtype{detail}"),
    ("device_mismatch", [r"^tensor '.*?' device mismatch", r"\bdevice (?:changed|differ)", r"device_index"],
     "input {tensor} moved to another device{detail}"),
    ("requires_grad_mismatch", [r"^tensor '.*?' requires_grad mismatch", r"requires_grad (?:changed|differ)"],
     "input {tensor} changed requires_grad{detail}"),
    ("ndim_mismatch", [r"^tensor '.*?' (?:rank|ndim|dim) mismatch"],
     "input {tensor} has another number of dims{detail}"),
    ("tensor_mismatch", [r"^tensor '.*?' .*mismatch", r"^tensor '"],
     "input {tensor} changed ({detail})"),
    ("global_state", [r"GLOBAL_STATE", r"grad_mode", r"autocast", r"torch_function_mode",
                      r"\bdeterministic_algorithms\b", r"___check_global_state", r"___check_current_backend",
                      r"default_device", r"___check_torch_function", r"\bforward_ad\._current_level"],
     "global state changed between calls ({detail})"),
    ("value_became_none", [r"^expected type of '[^']+' to be <class 'NoneType'>",
                           r"^expected type of .*but found <class 'NoneType'>"],
     "a value that was None changed, or became None ({detail})"),
    ("type_changed", [r"^expected type of '[^']+' to be"],
     "a value of another type was passed or read ({detail})"),
    ("function_changed", [r"___check_obj_id\([^,]*\.(?:__code__|__func__)\b",
                          r"type=<class '(?:function|code|method|builtin_function_or_method|functools\.partial)'>"],
     "another function was passed or captured ({detail})"),
    ("value_became_none", [r"type=<class 'NoneType'>", r"^[^=<>!]+ is (?:not )?None\b"],
     "a value that was None changed, or became None ({detail})"),
    ("type_changed", [r"___check_type_id\(", r"\bTYPE_MATCH\b", r"^isinstance\("],
     "a value of another type was passed or read ({detail})"),
    ("object_identity", [r"___check_obj_id\(", r"\bID_MATCH\b"],
     "a different object was passed or captured ({detail})"),
    ("tensor_aliasing", [r"___check_tensors", r"aliasing", r"^Duplicate tensors found",
                         r"^[^=<>!]+ is (?:not )?[^=]+$"],
     "inputs that were the same tensor are now two (or the reverse): {detail}"),
    ("hooks_changed", [r"_(?:forward|backward)(?:_pre)?_hooks\b", r"_state_dict_hooks", r"_global_\w*hooks"],
     "a hook was added to or removed from a module: {detail}"),
    ("length_changed", [r"^len\(.*\) [!=]= \d+$"],
     "a list, tuple or dict changed length: {detail}"),
    ("dict_keys_changed", [r"\.keys\(\)\)? ==", r"___check_dict_keys", r"\bdict_keys\b", r"DICT_KEYS",
                           r"___dict_contains", r"\bin\b .*\.keys\(\)", r"\bdict\.keys\(", r"__contains__\("],
     "a dict's keys (or a set's items) changed: {detail}"),
    ("attribute_changed", [r"^hasattr\(", r"^not hasattr\("],
     "an attribute was added or removed: {detail}"),
    ("shape_guard", [r"\bsize\(\)\[\d+\]", r"\bstride\(\)\[\d+\]", r"\b(?:Eq|Ne|Mod|FloorDiv|PythonMod|Max|Min)\(",
                     r"\bs\d+\b\s*(?:<|>|<=|>=|==)", r"\s(?:%|//|\*|\+|-)\s", r"%", r"(?:<|>|<=|>=|!=)"],
     "a guard on a symbolic (dynamic) value failed: {detail}"),
    ("python_flag", [r"^[\w\[\]'\".()]+ == (?:True|False|None)\b", r"^[\w\[\]'\".()]+ is (?:not )?None\b",
                     r"^not [\w\[\]'\".()]+$"],
     "a Python flag changed: {detail}"),
    ("python_value", [r"^[\w\[\]'\".()]+ == -?[\d.]+(?:e-?\d+)?\b", r"^[\w\[\]'\".()]+ == '[^']*'",
                      r"\bCONSTANT_MATCH\b", r"\bEQUALS_MATCH\b", r"^[\w\[\]'\".()]+ == "],
     "a Python value changed: {detail}"),
]
_RECOMPILE_RULES = [(cause, any_of(patterns), why) for cause, patterns, why in _RECOMPILE_PHRASES]
_TENSOR_NAME = lazy(r"tensor '(.+?)' ")
_EXPECTED = lazy(r"(?:at index (\d+)\. )?expected ([^,]+), actual (\S+)")


# Where the value a guard reads lives, from the guard's start (torch 2.13-2.15 write `n`, older
# ones `L['n']`); the first that matches wins.
GUARD_SOURCES = (
    ("input_tensor", lazy(r"^tensor '(?P<name>[^']+)'")),
    ("global_state", lazy(r"(?:GLOBAL_STATE changed: (?P<name>\w+))|GLOBAL_STATE|___check_global_state"
                                r"|\bgrad_mode\b|\bautocast")),
    ("stack_value", lazy(r"^(?P<name>___stack\d+)\b")),
    ("closure", lazy(r"^(?P<name>\S*__closure__\S*)")),
    ("global", lazy(r"^(?P<name>G\['[^']+'\](?:\.\w+|\[['\"]\w+['\"]\])*)\s*(?:==|!=|is\b)")),
    ("local", lazy(r"^(?P<name>L\['\w+'\])\s*(?:==|!=|is\b)")),
    ("module_attribute", lazy(r"^(?P<name>(?:L\['self'\]|self)(?:\.\w+|\[['\"]\w+['\"]\])+)\s*(?:==|!=|is\b)")),
    ("attribute", lazy(r"^(?P<name>(?:L\['\w+'\]|\w+)(?:\.\w+|\[['\"]\w+['\"]\])+)\s*(?:==|!=|is\b)")),
    ("local", lazy(r"^(?P<name>L\['\w+'\]|\w+)\s*(?:==|!=|is\b)")),
)
_LITERAL = lazy(r"(?:==|!=|\bis(?: not)?)\s*"
                r"(?P<value>-?\d+\.\d*(?:e-?\d+)?|-?\d+(?:e-?\d+)?|True|False|None|'[^']*')\s*$")
_LOCAL_NAME = lazy(r"[LG]\['([^']+)'\]")
_AT_INDEX = lazy(r"\bat index (\d+)")


# A guard that calls a check on what it reads (`___check_obj_id(act.__code__, 1)`, `len(xs) == 3`,
# `list(cfg.keys()) == [...]`): the expression read is its first argument.
_WRAPPED = lazy(r"^(?:not )?(?:___check_obj_id|___check_type_id|len|hasattr|list|isinstance|___dict_contains)"
                r"\((?:'[^']*', )?(?:dict\.keys\()?(?P<inner>(?:[^,()]|\([^()]*\))+)"
                r"|^expected type of '(?P<named>[^']+)' to be "
                r"<class '(?P<was>[\w.]+)'>")
_WRAPPED_TAIL = lazy(r"\.(?:keys\(\)|__code__|__func__|__dict__)$")
_OF_TYPE = lazy(r"type=<class '(?P<type>[\w.]+)'>")


def guarded(guard: str, hint: str | None = None) -> Guarded:
    """What a failed guard (`self.temperature == 1`, `G['SCALE'] == 2`, `___stack0 == 1.5`,
    `___check_obj_id(act.__code__, 1)`) read."""
    if (wrapped := _WRAPPED.search(guard)) is not None:
        inner = _WRAPPED_TAIL.sub("", (wrapped.group("inner") or wrapped.group("named")).strip())
        named = guarded(f"{inner} == 0")  # where the expression itself lives
        of_type = _OF_TYPE.search(guard)
        was = wrapped.group("was") or (of_type.group("type") if of_type else None)
        return Guarded(named.source, named.name, was, hint)
    for source, pattern in GUARD_SOURCES:
        if m := pattern.search(guard):
            name = m.groupdict().get("name")
            break
    else:
        source, name = "other", None
    if name:
        name = _LOCAL_NAME.sub(r"\1", name)
    literal = _LITERAL.search(guard)
    value = literal.group("value") if literal else None
    if value is None:
        value_type = None
    elif value in ("True", "False"):
        value_type = "bool"
    elif value == "None":
        value_type = "None"
    elif value.startswith("'"):
        value_type = "str"
    else:
        value_type = "float" if "." in value or "e" in value else "int"
    dim = _AT_INDEX.search(guard) if source == "input_tensor" else None
    return Guarded(source, name, value_type, hint, int(dim.group(1)) if dim else None)


def recompile_cause(reason: RecompileReason) -> Cause:
    guard = reason.guard.strip()
    cause = _guard_cause(guard)
    return Cause(cause.cause, cause.why, facts=guarded(guard, reason.hint))


@lru_cache(maxsize=4096)  # a long job fails the same few guards over and over
def _guard_cause(first: str) -> Cause:
    tensor_m = _TENSOR_NAME.search(first)
    tensor = f"'{tensor_m.group(1)}'" if tensor_m else ""
    exp = _EXPECTED.search(first)
    detail = ""
    if exp:
        index, expected, actual = exp.groups()
        detail = (f" at dim {index}: {expected} -> {actual}" if index is not None
                  else f": {expected} -> {actual.rstrip('.')}")
    for cause, patterns, why in _RECOMPILE_RULES:
        if patterns.search(first):
            # tensor mismatches say what changed; other guards are quoted
            detail_text = detail if cause.endswith("_mismatch") and cause != "tensor_mismatch" else first
            if cause == "tensor_mismatch":
                detail_text = first.split("' ", 1)[-1][:160]  # (`dispatch key set mismatch. expected ...`)
            return Cause(cause, why.format(tensor=tensor, detail=detail_text))
    return Cause("other", f"a guard failed: {first}")


def recompile_not_logged(text_only: bool) -> Cause:
    where = ("TORCH_LOGS=recompiles tells it" if text_only
             else "the trace has no recompile_reasons for it (cut short?)")
    return Cause(NOT_LOGGED, f"it recompiled, but the guard that failed was not logged ({where})")


# ---- graph breaks -------------------------------------------------------------------------------

_BREAK_PHRASES = [  # (cause, patterns over reason+detail+explanation+the user's line, why)
    ("print_or_logging",
     [r"operator `print`", r"builtin `?print`?\b", r"logging function", r"\blogging\.\w+",
      r"\blogger\.(?:debug|info|warning|error|exception)\b", r"`warnings\.warn`", r"/logging/__init__\.py"],
     "a print or logging call inside the compiled code"),
    ("backward_in_compiled",
     [r"Tensor\.backward\(\)", r"\.backward\(\) call", r"trace_autograd_ops"],
     "loss.backward() inside the compiled function"),
    ("data_dependent_branch",
     [r"data-dependent branch", r"data dependent (?:control flow|branch)", r"generic_jump",
      r"branch condition involves a tensor"],
     "Python control flow on a tensor's value (if tensor.sum() > 0)"),
    ("item_or_tolist",
     [r"Tensor\.item\(\)", r"\.item\(\)", r"tolist\(\)", r"capture_scalar_outputs",
      r"_local_scalar_dense"],
     "a tensor turned into a Python number (.item() / .tolist())"),
    ("dynamic_output_shape",
     [r"dynamic shape operator", r"output shape depends on input Tensor data",
      r"capture_dynamic_output_shape_ops", r"\bnonzero\b", r"\bunique\b"],
     "an op whose output size depends on data (nonzero, unique, masked_select)"),
    ("skipped_or_c_function",
     [r"marked as skipped", r"should not be traced", r"skipfiles", r"Python builtin \(e\.g\.",
      r"C/C\+\+ Python extension", r"pybind", r"cannot trace.*(?:C function|builtin)",
      r"torch\._dynamo\.disable", r"torch\.compiler\.disable"],
     "a function Dynamo skips or cannot trace (a C function or a skipped module)"),
    ("unsupported_construct",
     [r"tp_iternext", r"generator", r"Unsupported method call", r"Unsupported function call",
      r"Failed to trace builtin operator", r"not supported", r"does not (?:know how to|support)",
      r"Unsupported"],
     "a Python construct Dynamo does not support here"),
]
_BREAK_RULES = [(cause, any_of(patterns), why) for cause, patterns, why in _BREAK_PHRASES]
_LOGGING_CALL = lazy(r"\b((?:logging|[A-Za-z_]*log(?:ger)?)"
                     r"\.(?:debug|info|warning|warn|error|exception|critical|log))\(")


def break_cause(gb: GraphBreak) -> Cause:
    """A break's class: its registry entry's family (PyTorch's own taxonomy, break_registry.py),
    told from the user's line where the entry is a generic one (a logging call breaks inside the
    `logging` module, at whatever entry that code hits); a break torch makes on purpose in its own
    code is `by_design`. A torch older than 2.8 names no entry: its message's words decide."""
    frame = gb.user_frame()
    where = f" at {gb.where.rsplit('/', 1)[-1]}" if gb.where else ""
    text = " ".join(filter(None, [gb.reason, gb.detail, gb.explanation, gb.location, frame and frame[1]]))
    found = next(filter(None, map(entry, gb.gb_ids)), None) or entry_in(gb.detail) or entry_in(gb.reason)
    if found is None:
        cause = _break_text_cause(text, where, gb.detail or gb.reason)
    elif (logging := _break_text_cause(text, where, "")).cause == "print_or_logging" and \
            found.family not in _SPECIFIC_FAMILIES:
        cause = logging
    else:
        context = f"; {gb.context}" if gb.context and len(gb.context) <= 80 else ""
        cause = Cause(found.family, f"{FAMILIES[found.family]}{where} (PyTorch {found.gb_id}: "
                      f"{found.type}{context})")
    if (deliberate := _by_design(gb, found)) is not None:
        return Cause("by_design", deliberate + where, registry=found)
    cause = Cause(cause.cause, cause.why, cause.subject, cause.facts, found)
    if cause.cause == "print_or_logging":
        return Cause(cause.cause, cause.why, cause.subject, _logging_call(cause.subject, gb.explanation), found)
    if cause.cause == "skipped_or_c_function":
        call = _skipped_call(gb)
        why = cause.why
        if call.torch_module is not None and "skipped" in (found.type if found else gb.reason or ""):
            why = (f"a function of PyTorch's that Dynamo does not trace, on purpose "
                   f"({torch_function(call)}), called inside the compiled function{where}")
        return Cause(cause.cause, why, cause.subject, call, found)
    return cause


# Families whose entry already says what broke: the user's line does not overrule them.
_SPECIFIC_FAMILIES = frozenset({"explicit_graph_break", "frame_skipped", "backward_in_compiled",
                                "data_dependent_branch", "item_or_tolist", "dynamic_output_shape"})
# torch's own code (an installed torch, or a source tree's `torch/` package).
_TORCH_CODE = lazy(r"(?:^|/)torch/(?:[\w.]+/)*[\w.]+\.py\b|\bmodule: torch\.|`torch\.[\w.]+`")
_SKIPPED_IN_TORCH = lazy(r"(?:module: |qualname: |(?:filename:|in file) `[^`]*/)torch[./]")


def _by_design(gb: GraphBreak, found: RegistryEntry | None) -> str | None:
    """Why a break is PyTorch's on purpose, or None: a torch._dynamo.graph_break() in torch's own
    code (torch.optim's `_use_grad` breaks so that AOT sees the step as an inference graph), or a
    function of torch's that its developers marked as not to be traced, called by library code."""
    if found is None:
        return None
    location = gb.location or ""
    if found.family == "explicit_graph_break" and is_library_path(location) and _TORCH_CODE.search(location):
        return (f"PyTorch breaks the graph here on purpose, in its own code ({_short(location)}: "
                f"{found.type}, {found.gb_id})")
    # A skipped function of torch's is by design where library code called it (DDP's forward, via
    # contextlib); called from the user's own line (torch.cuda.synchronize() in a compiled step:
    # 0.261 -> 0.092 ms a call on an H200 once dropped, fixtures/gpu_perf sync_inside) the break is
    # the user's to move.
    if found.family == "skipped_or_c_function" and "skipped" in found.type and is_library_path(location) and \
            _SKIPPED_IN_TORCH.search(" ".join(filter(None, [gb.detail, gb.explanation, gb.reason, gb.context]))):
        return (f"PyTorch marks this function of its own as not to be traced ({found.type}, "
                f"{found.gb_id}): {_skipped_name(gb)}")
    return None


def torch_function(call: SkippedCall) -> str:
    """`torch.cuda.synchronize`: the skipped function by its module, as the user calls it."""
    name = call.function or "a function"
    if call.torch_module is None or name.startswith("torch.") or "." in name:
        return name  # a method (`Adam.step`) by its class, as the user calls it
    return f"{call.torch_module}.{name}"


def _short(path: str) -> str:
    """`torch/optim/optimizer.py:106` of an installed torch's path."""
    m = _TORCH_TAIL.search(path)
    return m.group(0) if m else path.rsplit("/", 1)[-1]


_TORCH_TAIL = lazy(r"torch/[\w./]+(?::\d+)?$")
_SKIPPED_NAME = lazy(r"qualname: (?P<q>[\w.<>]+)|function `(?P<f>[\w.<>]+)`")


def _skipped_name(gb: GraphBreak) -> str:
    m = _SKIPPED_NAME.search(" ".join(filter(None, [gb.context, gb.detail, gb.explanation])))
    return (m.group("q") or m.group("f")) if m else "a function of torch's"


_CALL_ARGUMENTS = lazy(r"operator `(?P<fn>\w+)` with argument types \[(?P<types>[^\]]*)\] "
                       r"\(has_kwargs (?P<kw>True|False)\)")


def _logging_call(subject: str | None, explanation: str | None) -> LoggingCall:
    """The call that broke the graph: the logging call the user's line made, else the builtin the
    message names (`print`), with its argument types where the message gives them."""
    m = _CALL_ARGUMENTS.search(explanation or "")
    types = tuple(t.strip().strip("'\"") for t in m.group("types").split(",") if t.strip()) if m else None
    return LoggingCall(subject or (m.group("fn") if m else "print"), types, m.group("kw") == "True" if m else None)


@lru_cache(maxsize=4096)  # the same break is logged at every recompile of its frame
def _break_text_cause(text: str, where: str, message: str) -> Cause:
    for cause, patterns, why in _BREAK_RULES:
        if patterns.search(text):
            if cause == "print_or_logging" and (call := _LOGGING_CALL.search(text)):
                return Cause(cause, "a logging call inside the compiled code" + where, call.group(1))
            return Cause(cause, why + where)
    return Cause("other", message + where)


def restart_break_cause(reason: str) -> Cause:
    """A graph break known only from the restart it caused (no break message was logged)."""
    return Cause(NOT_LOGGED, "Dynamo restarted the analysis after a graph break that was not logged "
                 f"(TORCH_LOGS=graph_breaks tells what broke): {reason.strip()[:200]}")


# ---- restarts -----------------------------------------------------------------------------------

# PyTorch's restarts of analysis that no graph break raised (torch/_dynamo/exc.py: the subclasses
# of RestartAnalysis other than SpeculationRestartAnalysis, a graph break's), by the reason each is
# recorded with: its restart_reason, else its class (convert_frame.py: `e.restart_reason or
# str(type(e))`). Two come before a graph break, which the next attempt makes and tells: an
# AutogradGradRestartAnalysis and a RequiresGradRestartAnalysis (output_graph.py, torch 2.15).
_BEFORE_A_BREAK = ("autograd.grad consumed grad_fns of returned tensors", "AutogradGradRestartAnalysis",
                   "requires_grad_() intermediate leaked as output", "RequiresGradRestartAnalysis")
_TENSORIFY = ("TensorifyScalarRestartAnalysis", "_tensorify_python_scalars")
_NO_BREAK = (*_TENSORIFY, "UnspecializeRestartAnalysis", "CompileCollectiveRestartAnalysis")


def is_graph_break_restart(reason: str) -> bool:
    """A restart of analysis after a graph break (most are), not one of PyTorch's other restarts:
    TensorifyScalarRestartAnalysis (a float made a tensor, then specialized) and the others above."""
    return not any(words in reason for words in _NO_BREAK + _BEFORE_A_BREAK)


def breaks_next_attempt(reason: str) -> bool:
    """A restart that comes before a graph break: the next attempt breaks the graph (and tells it)
    at a call that the attempt thrown away found too late (autograd.grad, requires_grad_())."""
    return any(words in reason for words in _BEFORE_A_BREAK)


def restart_cause(reason: str | None, text_only: bool) -> Cause:
    if reason is None:
        where = ("TORCH_LOGS=+dynamo tells why (\"Restarting analysis due to ...\")" if text_only
                 else "the trace has no compilation metrics for it (cut short?)")
        return Cause(NOT_LOGGED, f"Dynamo restarted the analysis; the reason was not logged ({where})")
    if is_graph_break_restart(reason):
        return Cause("after_graph_break", "Dynamo restarted the analysis after a graph break, to "
                     "compile the code before the break as a graph of its own")
    if breaks_next_attempt(reason):
        return Cause("before_graph_break", "Dynamo restarted the analysis to break the graph where the "
                     f"attempt it threw away went too far ({reason.strip()[:120]}): the next attempt breaks it")
    if not any(words in reason for words in _TENSORIFY):
        return Cause("other_restart", f"Dynamo restarted the analysis ({reason.strip()[:120]}), not after a "
                     "graph break")
    return Cause("tensorify_scalar",
                 "a Python float was made a tensor, then had to be specialized (math.floor or another "
                 "non-tensor use of it): Dynamo restarted the analysis (TensorifyScalarRestartAnalysis, "
                 "not a graph break)")


# ---- failures -----------------------------------------------------------------------------------

_LIMIT = any_of([r"recompile[_ ]limit", r"cache[_ ]size[_ ]limit"])
_FAKE_KERNEL = any_of([r"no fake impl registered", r"register_fake", r"fake kernel", r"Meta kernel",
                       r"fake impl"])
# A custom op (torch.library): a CustomOpDef, or an op of a namespace that is not torch's own.
_CUSTOM_OP = lazy(r"CustomOpDef\((?P<def>[\w.:]+)\)|"
                  r"(?:for operator|operator:?) (?P<op>(?!aten::|prims::|_c10d\w*::|c10d::|"
                  r"quantized::|inductor::|higher_order::)\w+::[\w.]+)|`(?P<attr>\w+)\.register_fake`")
_BACKEND_RAISED = any_of([r"backend='?\w+'? raised"])
_CONSTRAINTS = any_of([r"marked .* as dynamic but", r"Constraints violated"])
_MAKE_FX = any_of([r"make_fx failed", r"make_fx_fail_partial"])
_INTERNAL = any_of([r"Internal", r"InternalTorchDynamoError", r"AssertionError"])
_SKIPPED_FRAME = any_of([r"Skipping the (?:frame|function) and falling back to eager", r"\bSkipFrame\b",
                         r"falling back to eager"])
_DATA_DEPENDENT = any_of([r"GuardOnDataDependentSymNode", r"Could not guard on data-dependent",
                          r"PendingUnbackedSymbolNotFound", r"unbacked symbols? .*not in returned outputs",
                          r"data-dependent expression", r"DataDependentOutputException",
                          r"Could not extract specialized integer from data-dependent"])
_CONTROL_FLOW_OP = any_of([r"UncapturedHigherOrderOpError",
                           r"\btorch\.(?:cond|while_loop|scan|map)\b.*(?:expected|must|same)",
                           r"true_fn_output and false_fn_output", r"branches? .* (?:same|matching) (?:metadata|dtype)"])
_FAKE_RUN = lazy(r"(?:Dynamo failed to run FX node with fake tensors:|TorchRuntimeError:)\s*(?P<what>.+)")
# Exceptions a user's code raises itself (and any class Dynamo names `Observed...`): the program
# would raise it without torch.compile too.
def skipped_frame_cause(entry: RegistryEntry | None, first: str, in_loop: bool) -> Cause:
    """A frame Dynamo gave up at a graph break it could not resume from (in a loop, in a generator,
    in a context it cannot rebuild): the frame runs eagerly, told by the break that caused it."""
    what = f"{entry.type} ({entry.gb_id})" if entry else first
    loop = " in a loop" if in_loop else ""
    return Cause("frame_skipped", f"the whole frame runs eagerly: Dynamo gave it up at a graph "
                 f"break{loop}: {what}", registry=entry)


def gave_up_the_frame(gb: GraphBreak) -> bool:
    """A break Dynamo could not handle by splitting the graph ("Failed to handle graph break
    gracefully. Skipping the function and falling back to eager")."""
    return bool(_SKIPPED_FRAME.search(gb.reason or ""))


_USER_RAISED = lazy(r"^(?:Observed\w*Exception|Observed\w*Error|ValueError|TypeError|KeyError|IndexError|"
                    r"ZeroDivisionError|NotImplementedError|StopIteration|AttributeError|UserError|"
                    r"RuntimeError|Exception|LookupError|ArithmeticError|OSError)$")


def failure_cause(fail_type: str | None, fail_reason: str | None, *, place: str | None = None,
                  fell_back: bool | None = None) -> Cause:
    """A failure's class, from what torch said of it: the exception's class, the registry entries
    its message names (a graph break made an error; the break that gave up a frame), its words.
    `place` is the user's line it failed at; `fell_back` whether Dynamo then ran the frame eagerly
    (None: not told), which decides what the program got of an exception the user's code raised."""
    fail_type = (fail_type or "").rsplit(".", 1)[-1]
    reason = fail_reason or ""
    first = reason.split("\n", 1)[0].strip()
    entries = [e for e in map(entry_in, gb_ids_in(reason)) if e is not None]
    cause_entry = next((e for e in entries if e.family != "frame_skipped"), None)
    if _LIMIT.search(reason):
        return Cause("recompile_limit", "the recompile limit was hit: this frame now runs eagerly",
                     registry=cause_entry)
    if any(e.family == "frame_skipped" for e in entries) or _SKIPPED_FRAME.search(reason):
        return skipped_frame_cause(cause_entry, first, any(e.gb_id == "gb7000" for e in entries))
    if (op := _CUSTOM_OP.search(reason)) and _FAKE_KERNEL.search(reason):
        name = op.group("def") or op.group("op") or op.group("attr")
        return Cause("missing_fake_kernel", f"the custom op {name} has no fake (meta) kernel: Dynamo "
                     "cannot run it on fake tensors to learn its output shapes", name)
    if "BackendCompilerFailed" in fail_type or _BACKEND_RAISED.search(reason):
        lines = [ln.strip() for ln in reason.split("\n") if ln.strip()]
        raised = lines[1] if len(lines) > 1 and lines[0].endswith("raised:") else first
        return Cause("backend_compiler_failed", f"the backend compiler raised {raised}")
    if "ConstraintViolation" in fail_type or _CONSTRAINTS.search(reason):
        return Cause("constraint_violation", "a dim marked dynamic was specialized to a constant by the code")
    if _DATA_DEPENDENT.search(f"{fail_type} {reason}"):
        return Cause("data_dependent_guard", "the code needs a concrete value of a number computed from "
                     f"a tensor's data (a size or an `if` on .item()), which tracing cannot know: {first}")
    if _CONTROL_FLOW_OP.search(f"{fail_type} {reason}"):
        return Cause("control_flow_op", f"a control-flow operator (torch.cond, while_loop, scan, map) "
                     f"could not be traced: {first}")
    if "TorchRuntimeError" in fail_type:
        m = _FAKE_RUN.search(reason)
        what = (m.group("what").strip() if m else first)[:300]
        return Cause("torch_runtime_error", f"an op failed when traced with fake tensors (it would fail "
                     f"in eager too: shapes, dtypes or devices that do not fit): {what}")
    observed = cause_entry is not None and cause_entry.family == "user_exception" or fail_type.startswith("Observed")
    if observed or _USER_RAISED.match(fail_type):
        # Dynamo's "Observed exception": it traced the raise; an exception's class alone says no more
        user_raised = RaisedByUser(_raised(reason, fail_type), fell_back if observed else None, observed)
        return Cause("user_exception", _user_raised_why(user_raised, place), facts=user_raised,
                     registry=cause_entry)
    if "Unsupported" in fail_type:
        what = f"{cause_entry.type} ({cause_entry.gb_id})" if cause_entry else first
        return Cause("unsupported", f"a graph break was made an error (fullgraph=True, or "
                     f"error_on_graph_break): {what}", registry=cause_entry)
    if _MAKE_FX.search(reason):
        return Cause("export_trace_failed", "torch.export (non-strict) could not trace the program with "
                     "make_fx; the exception went to the program, not to the log")
    if _INTERNAL.search(fail_type):
        return Cause("internal_error", f"an error inside torch.compile: {first}")
    return Cause("other", f"{fail_type}: {first}".strip(": "))


def _user_raised_why(raised: RaisedByUser, place: str | None) -> str:
    """What happened to an exception the user's code raised inside a compiled function that no
    handler there caught: Dynamo traced the raise ("Observed exception"), then either gave the
    frame up and ran it eagerly, where it raised again (a graph break that skips the frame is
    logged), or, allowed no graph break (fullgraph=True, error_on_graph_break), raised
    torch._dynamo.exc.Unsupported from it (no such break)."""
    where = f" at {place.rsplit('/', 1)[-1]}" if place else ""
    said = f"your code raised {raised.exception or 'an exception (the log does not quote it)'}{where}"
    if not raised.observed:
        return f"{said} inside the compiled region (it would raise without torch.compile too)"
    if raised.fell_back:
        return f"{said}; Dynamo traced it, found no handler, fell back to eager and raised it there"
    if raised.fell_back is False:
        return (f"{said}; Dynamo traced it, found no handler and, allowed no graph break (fullgraph=True "
                "or error_on_graph_break), raised torch._dynamo.exc.Unsupported from it")
    return (f"{said}; Dynamo traced it and found no handler: it falls back to eager, which raises it "
            "again (with fullgraph=True it raises torch._dynamo.exc.Unsupported from it)")


_RAISED_EXCEPTION = lazy(r"raised exception (?P<exc>[\w.]+\(.*?\))(?:\n|$)")


def _raised(reason: str, fail_type: str) -> str | None:
    """`ValueError('negative scale')`: what the user's code raised, as Dynamo quoted it (its debug
    context), or the class and message of the exception itself; None where neither is logged."""
    if m := _RAISED_EXCEPTION.search(reason):
        return m.group("exc")
    if fail_type and fail_type != "Unsupported" and not fail_type.startswith("Observed"):
        first = reason.split("\n", 1)[0].strip()
        return f"{fail_type}: {first}" if first else fail_type
    return None
