"""Why a compile recompiled, broke or failed, as torch wrote it: parsed once, here, from the trace's
payloads and from TORCH_LOGS text alike (both carry the same messages in slightly other frames).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import orjson

from tlview.domain.compile_id import CID_IN_TEXT, REASON_CID_RE, CompileId

if TYPE_CHECKING:
    from tlview.source.payload import LoadedPayload


@dataclass(slots=True)
class RecompileReason:
    """One failed guard of a cached compile: `0/0: tensor 'x' size mismatch at index 1. ...`."""

    text: str
    failed_id: CompileId | None  # the earlier compile whose guard failed

    @property
    def body(self) -> str:
        """The reason without its compile-id prefix (`tensor 'x' size mismatch ...`)."""
        return REASON_CID_RE.sub("", self.text, count=1)

    @property
    def summary(self) -> str:
        """First line without the guard's source comment (`0/0: n == 2  # return ...`)."""
        return reason_summary(self.text)

    @property
    def guard(self) -> str:
        """The failed guard alone: the summary without the compile-id prefix."""
        return reason_summary(self.body)

    def user_frame(self) -> tuple[str, int] | None:
        """(file, line) of the user's line the guard came from: the innermost frame of its "User
        stack trace" (torch 2.14 and newer), else the place its comment names (`# code  #
        path:line in fn`, the path cut at its start)."""
        lines = self.text.split("\n")
        found = None
        for line in lines[1:]:
            if (m := _FRAME.match(line)) and not is_library_path(m.group("path")):
                found = (m.group("path"), int(m.group("line")))
        if found is None and (m := _GUARD_PLACE.search(lines[0])):
            found = (m.group("path"), int(m.group("line")))
        return found

    @property
    def hint(self) -> str | None:
        """PyTorch's own advice, written after the guard (`... in forward (HINT: ...)`)."""
        m = _HINT.search(self.text.split("\n", 1)[0])
        return m.group(1).strip() if m else None


_HINT = re.compile(r"\(HINT: (.*)\)\s*$")
_GUARD_PLACE = re.compile(r"#[^#]*#\s*(?P<path>\S+\.py):(?P<line>\d+) in \S+")


def reason_summary(text: str) -> str:
    return text.split("\n", 1)[0].split("  #", 1)[0].rstrip()


def reason_with_id(text: str) -> RecompileReason:
    m = REASON_CID_RE.match(text)
    return RecompileReason(text, CompileId.parse(m.group("cid")) if m else None)


_RECOMPILE_ENTRY = re.compile(rf"^\s*- (?P<cid>{CID_IN_TEXT}): ")


def parse_recompile_reasons(text: str) -> list[RecompileReason]:
    """The trace's `recompile_reasons` payload (a JSON list for several reasons, bare text for
    one), or TORCH_LOGS `recompiles` text ("Recompiling function f ... - 0/0: reason")."""
    stripped = text.strip()
    if stripped.startswith("Recompiling function"):
        reasons: list[str] = []
        for line in text.split("\n"):
            if _RECOMPILE_ENTRY.match(line):
                reasons.append(line.strip()[2:])
            elif reasons and line.strip().startswith("-"):
                reasons[-1] += "\n" + line.strip()[2:]
        return [reason_with_id(r) for r in reasons]
    try:
        value = orjson.loads(stripped) if stripped[:1] in ("[", '"') else None
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, list):
        reasons = [r if isinstance(r, str) else str(r) for r in value]
    elif isinstance(value, str):
        reasons = [value]
    else:
        reasons = [text] if stripped else []
    return [reason_with_id(r) for r in reasons]


@dataclass(slots=True)
class GraphBreak:
    location: str | None
    reason: str
    detail: str | None = None
    explanation: str | None = None
    hints: list[str] = field(default_factory=list)
    user_stack: list[str] = field(default_factory=list)
    url: str | None = None
    context: str | None = None  # PyTorch's "Developer debug context:" (the op, the function, the value)
    gb_ids: tuple[str, ...] = ()  # every registry id the message names (a break, then the one that gave up)
    source: Any = None  # where the whole message is (read from disk when shown)
    rec: int = -1

    def load(self) -> LoadedPayload:
        loaded: LoadedPayload = self.source.load_payload(self.rec)
        return loaded

    def user_frame(self) -> tuple[str, str] | None:
        """(file:line, code) of the innermost frame of the user's own code in the traceback: where
        the user called what broke (a break inside `logging` happens in the standard library)."""
        found = None
        for i, line in enumerate(self.user_stack):
            if frame := _user_code_frame(line):
                code = self.user_stack[i + 1].strip() if i + 1 < len(self.user_stack) else ""
                found = (f"{frame[0]}:{frame[1]}", code)
        return found

    def user_function(self) -> tuple[str, str] | None:
        """(function, file:line) of the traceback's innermost frame of the user's code: in a text
        log that names no compile's function (TORCH_LOGS=graph_breaks alone), the best guess at the
        compiled frame (an inlined function's name where the break is inside one)."""
        found = None
        for line in self.user_stack:
            if frame := _user_code_frame(line):
                found = (frame[2], f"{frame[0]}:{frame[1]}")
        return found

    @property
    def where(self) -> str | None:
        """Where to look: the break's place, or the user's line when it broke inside a library."""
        if self.location and is_library_path(self.location) and (frame := self.user_frame()):
            return frame[0]
        return self.location


_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<fn>.+)$')


@lru_cache(maxsize=4096)
def _user_code_frame(line: str) -> tuple[str, str, str] | None:
    """(path, line, function) of a traceback's `File "...", line N, in f` in the user's own code;
    None for another line or a library's frame. (The same lines come in every break of a
    frame: the verdicts of 10,000 compile ids matched them 28,000 times.)"""
    m = _FRAME.match(line)
    return (m.group("path"), m.group("line"), m.group("fn")) if m and not is_library_path(m.group("path")) else None


@lru_cache(maxsize=4096)
def is_library_path(path: str) -> bool:
    """Python's standard library, an installed package, or frozen/generated code: not the user's."""
    return "/site-packages/" in path or "/dist-packages/" in path or path.startswith("<") or \
        bool(_STANDARD_LIBRARY.search(path)) or bool(_TORCH_SOURCE.search(path))


def is_generated_path(path: str) -> bool:
    """Code torch generated and imported: Inductor's output modules and kernels in its cache."""
    return _GENERATED.search(path) is not None


_GENERATED = re.compile(r"/c[a-z0-9]{40,}\.py$|torchinductor_|/triton/|/fxgraph/")
_STANDARD_LIBRARY = re.compile(r"/lib/python3\.\d+/(?!site-packages)")
# torch's own files where torch is not installed as a package (a source checkout, `pip install -e`),
# as torch names them in messages: `/src/pytorch/torch/optim/sgd.py`, `torch/_dynamo/external_utils.py`.
_TORCH_SOURCE = re.compile(r"(?:^|/)torch/(?:_[a-z_]+|optim|nn|utils|autograd|distributed|fx|export|"
                           r"library|amp|cuda|functional|_tensor|overrides)\b")


_GB_LOCATION = re.compile(r"Graph break(?: \(.*?\))? in user code at (?P<loc>\S+)")


def is_graph_break_message(lines: list[str]) -> bool:
    return any("Graph break" in line for line in lines[:2])


def parse_graph_break(text: str, source: Any = None, rec: int = -1) -> GraphBreak:
    """A `dynamo_graph_break_reason` message (trace payload or `graph_breaks` text): location,
    reason, explanation, hints, user stack."""
    location, reason, detail, explanation, hints, user_stack, url, context, gb_ids = _graph_break_fields(text)
    return GraphBreak(location, reason, detail, explanation, list(hints), list(user_stack), url, context,
                      gb_ids, source, rec)


# (location, reason, detail, explanation, hints, user stack, url, context, registry ids)
_BreakFields = tuple[str | None, str, str | None, str | None, tuple[str, ...], tuple[str, ...], str | None,
                     str | None, tuple[str, ...]]


@lru_cache(maxsize=1024)
def _graph_break_fields(text: str) -> _BreakFields:
    """The fields of a graph break message, read once per text: the same break is logged again
    at every recompile of its frame and on every rank (20-45 µs a message: 4,669 messages, 6
    texts, in bench/ranks.py's 10,000 compile ids)."""
    lines = text.split("\n")
    location = None
    reason = ""
    detail = None
    explanation = None
    hints: list[str] = []
    url = None
    context = None
    gb_ids: list[str] = []
    user_stack: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if location is None and (m := _GB_LOCATION.search(line)):
            location = m.group("loc")
        elif stripped.startswith("Graph Break Reason:") and not reason:
            reason = stripped[len("Graph Break Reason:"):].strip()
            if reason.endswith(":"):
                j = i + 1
                while j < len(lines) and not lines[j].strip():
                    j += 1
                if j < len(lines):
                    detail = lines[j].strip()
        elif stripped.startswith("Explanation:") and explanation is None:
            explanation = stripped[len("Explanation:"):].strip()
        elif stripped.startswith("Hint:"):
            hints.append(stripped[len("Hint:"):].strip())
        elif stripped.startswith("Developer debug context:") and context is None:
            context = stripped[len("Developer debug context:"):].strip()
        elif "graph break, please visit:" in stripped:
            url = url or stripped.rsplit(" ", 1)[-1]
            gb_ids += _GB_ID_IN_URL.findall(stripped)
        elif stripped == "User code traceback:":
            j = i + 1
            while j < len(lines) and lines[j].strip():
                user_stack.append(lines[j].rstrip())
                j += 1
            i = j
            continue
        elif stripped.startswith("Traceback (most recent call last)"):
            break
        i += 1
    if not reason:
        reason = next((ln.strip() for ln in lines[1:] if ln.strip()), lines[0].strip())
    return (location, reason, detail, explanation, tuple(hints), tuple(user_stack), url, context,
            tuple(dict.fromkeys(gb_ids)))


_GB_ID_IN_URL = re.compile(r"\b(gb\d{4})\b", re.IGNORECASE)


@dataclass(slots=True, frozen=True)
class Failure:
    """A compile that failed: the exception's class name and message (as compilation metrics say
    it, or as the TORCH_LOGS text shows the exception), and the user's line it failed at where
    torch recorded it (the metrics' fail_user_frame_filename and _lineno)."""

    fail_type: str
    fail_reason: str
    user_place: str | None = None  # `/job/train.py:100`

    @property
    def place(self) -> str | None:
        """The user's line it failed at: the one torch recorded, else the deepest of the user's
        own frames under the message's "from user code:"."""
        return self.user_place or user_place_in(self.fail_reason)


def user_place_in(text: str) -> str | None:
    """`file:line` of the deepest frame of the user's own code in a message's "from user code:"
    traceback (the frames of torch and the standard library left out), or None."""
    after = text.split("from user code:", 1)
    if len(after) < 2:
        return None
    found = None
    for line in after[1].split("\n"):
        if (m := _USER_CODE_FRAME.match(line)) and not is_library_path(m.group("path")):
            found = f"{m.group('path')}:{m.group('line')}"
        elif line.strip() and not line.startswith((" ", "\t")):
            break
    return found


_LIMIT_HIT = re.compile(r"hit config\.(?:recompile|cache_size)_limit|recompile_limit exceeded")
# torch raises Unsupported for it (`raise_unimplemented_cache_limit_exceeded`); the warning that is
# always logged does not name the class.
RECOMPILE_LIMIT = Failure("Unsupported", "Dynamo recompile limit exceeded")


def is_recompile_limit_message(text: str) -> bool:
    return bool(_LIMIT_HIT.search(text))


_EXCEPTION = re.compile(r"^(?:[A-Za-z_]\w*\.)*(?P<type>[A-Za-z_]\w*)(?::(?: (?P<message>.*))?)?$")
_MESSAGE_ENDS = ("Set TORCHDYNAMO_VERBOSE", "Traceback (most recent call last)",
                 "The above exception was the direct cause", "During handling of the above exception")


def failure_in(lines: list[str]) -> Failure | None:
    """The exception a Python traceback in these lines ends with (the last one of a chain):
    `torch._dynamo.exc.BackendCompilerFailed: backend='x' raised:` and the message lines after it
    give Failure("BackendCompilerFailed", "backend='x' raised:\nRuntimeError: ...")."""
    found = None
    for i, line in enumerate(lines):
        if not line.startswith("Traceback (most recent call last)"):
            continue
        j = i + 1
        while j < len(lines) and (lines[j][:1] in (" ", "\t") or not lines[j].strip()):
            j += 1  # the frames: `  File "...", line N, in f`, their code and `^^^` lines
        m = _EXCEPTION.match(lines[j]) if j < len(lines) else None
        if m is None:
            continue
        message = [m.group("message") or ""]
        for follow in lines[j + 1:]:
            if follow.startswith(_MESSAGE_ENDS):
                break
            message.append(follow)
        found = Failure(m.group("type"), "\n".join(message).strip("\n").rstrip())
    return found


_USER_CODE_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)')


def compiled_frame_in(lines: list[str]) -> tuple[str, str] | None:
    """(function, file:line) of the frame a torch.compile exception names under "from user code:"
    (the function being compiled, and the line it failed at), or None."""
    for i, line in enumerate(lines):
        if line.strip() == "from user code:" and i + 1 < len(lines):
            m = _USER_CODE_FRAME.match(lines[i + 1])
            if m:
                return m.group("fn"), f"{m.group('path')}:{m.group('line')}"
    return None


def failure_of_traceback(text: str) -> Failure:
    """A dynamo_error's (or a failed export's) traceback: its exception."""
    lines = text.split("\n")
    return failure_in(lines) or Failure("", next((ln.strip() for ln in lines if ln.strip()), ""))


_WONT_CONVERT = re.compile(r"^WON'T CONVERT (?P<fn>\S+) (?P<file>.+?) line (?P<line>\d+)")


def wont_convert(line: str) -> tuple[str, str] | None:
    """(function, file:line) of "WON'T CONVERT f /path/x.py line 12": Dynamo gave up on a frame
    (the line is the function's first, its decorator's)."""
    m = _WONT_CONVERT.match(line)
    return (m.group("fn"), f"{m.group('file')}:{m.group('line')}") if m else None
