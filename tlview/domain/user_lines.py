"""The user's own line of a problem whose message names none, read from what else torch logged of
the compile (from disk, once a view asks: the verdict of 10,000 compiles reads nothing):

- a recompile's failed guard read a value (`batch.mask`, `len(batch)`, an input tensor): the
  compile it failed against logged its guard tree, each guard with the user's line that
  installed it (`# if batch.mask is not None:  # job/train.py:21 in forward`);
- a compile of torch's own code (a compiled `Adam.step`, after torch.optim's deliberate break):
  the deepest of the user's frames in the stack that led to it;
- an input tensor whose guards torch placed in its own code (a conv's `F.conv2d`): the user's line
  where it first enters the traced graph (the graph's `# File: train.py:29 in serve, code: ...`
  comment above its first use), else the user's line that called the compiled function with it.

torch 2.14 and newer write most guards' user stack in the recompile reason itself, and a failure's
line in its metrics: those come first, in the verdict (verdict.py).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tlview.domain.reasons import is_library_path
from tlview.domain.role import Role

if TYPE_CHECKING:
    from tlview.domain.compile_node import CompileNode

_GUARD_COMMENT = re.compile(r"#[^#\n]*#\s*(?P<path>\S+\.py):(?P<line>\d+) in \S+")
_FRAME = re.compile(r"^(?P<path>.+?):(?P<line>\d+) in (?P<fn>.+)$")


def sources_of(expression: str) -> list[str]:
    """How the guard tree writes the expression a reason names (`batch.mask` -> `L['batch'].mask`,
    a global `G['SCALE']`): torch 2.13-2.15 shorten `L['x']` to `x` in a reason, not in the tree."""
    head, sep, rest = expression.partition(".")
    bracket = head.find("[")
    base, index = (head[:bracket], head[bracket:]) if bracket > 0 else (head, "")
    if not base.isidentifier() or base.startswith("___"):
        return [expression]
    tail = index + (sep + rest if sep else "")
    return [f"L['{base}']{tail}", f"G['{base}']{tail}", expression]


def guard_line(node: CompileNode, expression: str, compile_file: str) -> str | None:
    """The user's line of the first guard on `expression` in the guard tree of `node` (the
    compile whose guard failed), or None: no tree logged, or only torch's lines."""
    variants = sources_of(expression)
    if node.compile is None:  # (the index links each node to its compile)
        return None
    for artifact in node.compile.attempt_with_guards().artifacts_in(Role.GUARDS):
        try:
            text = artifact.load().text
        except OSError:
            return None
        for line in text.split("\n"):
            if not any(f"{v}," in line or f"{v})" in line or f"{v} " in line for v in variants):
                continue
            if (m := _GUARD_COMMENT.search(line)) and (place := _users(m.group("path"), m.group("line"),
                                                                        compile_file)):
                return place
    return None


def _users(path: str, line: str, compile_file: str) -> str | None:
    """`path:line` where it is the user's (a path torch cut short completed from the compiled
    file's), else None."""
    if path.startswith("/"):
        return None if is_library_path(path) else f"{path}:{line}"
    if compile_file.endswith(path.lstrip(".")):
        return f"{compile_file}:{line}"
    return None


def stack_lines(node: CompileNode, outside_the_frame: bool = False) -> list[tuple[str, int]]:
    """(file, line) of the user's own frames of the stack that led to a compile, outermost first;
    `outside_the_frame`: without the compiled frame itself (the stack's last)."""
    started = next((n for n in node.compile.attempts if n.start is not None), node) if node.compile else node
    try:
        frames = started.full_stack()  # (a restarted attempt has no dynamo_start: its first has)
    except OSError:
        return []
    if outside_the_frame:
        frames = frames[:-1]
    found = []
    for frame in frames:
        if (m := _FRAME.match(frame)) and not is_library_path(m.group("path")):
            found.append((m.group("path"), int(m.group("line"))))
    return found


def deepest_user_line(node: CompileNode) -> str | None:
    """The innermost of the user's frames in the compile's stack (for a compile of torch's own
    code: the user's call that led into it)."""
    frames = stack_lines(node)
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else None


def caller_line(node: CompileNode) -> str | None:
    """The user's line that called the compiled function (the user's frame around it)."""
    frames = stack_lines(node, outside_the_frame=True)
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else None


_GRAPH_PLACE = re.compile(r"#\s*File: (?P<path>\S+\.py):(?P<line>\d+) in ")


def graph_input_line(node: CompileNode, name: str) -> str | None:
    """The user's line where input `name` is first used in the graph the compile traced (Dynamo
    names the input `L_x_` and its first use `l_x_`; each op carries its user line as a comment)."""
    local = "l_" + re.sub(r"\W+", "_", name).strip("_") + "_"
    use = re.compile(rf"\b{re.escape(local)}\b")
    if node.compile is None:  # (the index links each node to its compile)
        return None
    for artifact in node.compile.attempt_with_graphs().artifacts_in(Role.GRAPH):
        if artifact.name != "dynamo_output_graph":
            continue
        try:
            text = artifact.load().text
        except OSError:
            return None
        place = None
        for line in text.split("\n"):
            if (m := _GRAPH_PLACE.search(line)) and not is_library_path(m.group("path")):
                place = f"{m.group('path')}:{m.group('line')}"
            elif place and use.search(line) and f"{local} = " not in line.split(":", 1)[0]:
                return place
    return None
