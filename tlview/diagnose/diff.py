"""A recompile against the compile whose guard failed: the failed guard, the inputs that changed
(from describe_tensor / describe_source records), and diffs of the guards and of the graphs.

Reads records from disk (describe_* records, guard and graph payloads): call it from a worker.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from tlview.domain.compile_node import CompileNode
from tlview.domain.reasons import Failure, RecompileReason
from tlview.index.index import Index

TENSOR_FIELDS = ("dtype", "size", "stride", "requires_grad", "device", "is_leaf", "ndim")
_GUARD_COMMENT = re.compile(r"\s+#.*$")
_ADDRESS = re.compile(r"0x[0-9a-f]+")
# A traced graph's generated name (`__compiled_fn_8_6197cc34_...`) and the file of GraphModule in
# TORCH_LOGS text differ between any two compiles: not a difference of the graph.
_GRAPH_NAME = re.compile(r"__compiled_fn_\w+")
_GRAPH_HEADER = ("TRACED GRAPH",)


@dataclass
class InputChange:
    source: str  # L['x']
    field: str
    before: Any  # a list for size and stride (indexed by `dims`), else a value
    after: Any
    # (dataclasses.field: `field` in this class names the input's field)
    dims: list[int] = dataclasses.field(default_factory=list)  # for size/stride: the indices that changed


@dataclass
class RecompileDiff:
    node: CompileNode
    against: CompileNode | None
    reason: RecompileReason | None
    inputs_before: dict[str, dict]
    inputs_after: dict[str, dict]
    changes: list[InputChange]
    guard_diff: list[str]
    graph_diff: list[str]
    failure: Failure | None = None  # the recompile's own compile failed: it has no guards to compare
    failure_why: str = ""


def inputs_of(index: Index, node: CompileNode) -> dict[str, dict]:
    """{source: tensor description} from the describe records of a compile (all its attempts)."""
    nodes = node.compile.attempts if node.compile else [node]
    tensors: dict[tuple, dict] = {}
    sources: dict[tuple, str] = {}
    for attempt in nodes:
        for source, rec, kind in index.records_of(attempt):
            if kind not in ("describe_tensor", "describe_source"):
                continue
            info = source.load_event(rec)
            key = (info.get("describer_id"), info.get("id"))
            if kind == "describe_tensor":
                tensors.setdefault(key, info)
            elif isinstance(info.get("source"), str):
                sources.setdefault(key, info["source"])
    out = {}
    for key, name in sources.items():
        if key in tensors and name not in out:
            desc = {f: tensors[key].get(f) for f in TENSOR_FIELDS if f in tensors[key]}
            desc.setdefault("requires_grad", False)  # torch writes it only when true
            out[name] = desc
    return out


_VALUE_GUARD = re.compile(r"(?:EQUALS_MATCH|CONSTANT_MATCH|ID_MATCH|TYPE_MATCH): (.+?) == (.+)$")


def _guard_values(lines: list[str]) -> dict[str, str]:
    values = {}
    for line in lines:
        m = _VALUE_GUARD.search(line)
        if m:
            values[m.group(1).strip()] = m.group(2).strip()
    return values


def _changes(before: dict[str, dict], after: dict[str, dict]) -> list[InputChange]:
    changes = []
    for name in sorted(set(before) & set(after)):
        for f in TENSOR_FIELDS:
            old, new = before[name].get(f), after[name].get(f)
            if old == new:
                continue
            dims = []
            if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
                dims = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
            changes.append(InputChange(name, f, old, new, dims))
    for name in sorted(set(after) - set(before)):
        changes.append(InputChange(name, "input", None, "new"))
    return changes


def _payload_lines(node: CompileNode, kind: str, clean=None) -> list[str]:
    """The lines of this compile id's payloads of one kind (a trace's record, or the TORCH_LOGS
    text that carries the same thing), else of another attempt of its compile."""
    attempts = [node] + [a for a in (node.compile.attempts if node.compile else []) if a is not node]
    for attempt in attempts:
        lines = [line for art in attempt.artifacts if art.kind.name == kind
                 for line in art.load().lines]
        if lines:
            return [clean(line) for line in lines] if clean else lines
    return []


def _clean_guard(line: str) -> str:
    """Guards without their source comments and object addresses: what differs is the guard."""
    line = _GUARD_COMMENT.sub("", line)
    line = _ADDRESS.sub("0x…", line)
    return "" if line.startswith(("Guard latency", "Guard eval latency")) else line


def _clean_graph(line: str) -> str:
    if line.startswith(_GRAPH_HEADER):
        return ""
    line = _GRAPH_NAME.sub("__compiled_fn", line)
    at = line.find(" class GraphModule(")
    return line[at + 1:] if at > 0 else line


def recompile_diff(index: Index, node: CompileNode, reason: RecompileReason | None = None) -> RecompileDiff:
    """Against the compile the verdict measures the recompile against (the guard that failed in
    the latest compile of the frame), or the one `reason` names."""
    compile_ = node.compile
    assert compile_ is not None  # a node of the index: linked to its compile when it was made
    recompile = compile_.verdict.recompile
    if reason is None and recompile is not None and recompile.logged:
        reason, against = recompile.evidence, recompile.against
    else:
        against = index.failed_guard_target(node, reason) if reason else None
    after = inputs_of(index, node)
    before = inputs_of(index, against) if against else {}
    guards = graph = []
    changes = _changes(before, after)
    # A compile that failed (the recompile limit, an error while tracing) installed no guards:
    # diffed, every guard of the other would read as deleted.
    failed = compile_.verdict.failure
    failure = failed.evidence if failed is not None else None
    if against is not None and failure is None:
        old_guards = [g for g in _payload_lines(against, "dynamo_cpp_guards_str", _clean_guard) if g]
        new_guards = [g for g in _payload_lines(node, "dynamo_cpp_guards_str", _clean_guard) if g]
        guards = list(difflib.unified_diff(old_guards, new_guards, f"[{against.id}] guards",
                                           f"[{node.id}] guards", lineterm="", n=1))
        old_values, new_values = _guard_values(old_guards), _guard_values(new_guards)
        for name in sorted(set(old_values) & set(new_values)):  # Python scalars: the guarded values
            if old_values[name] != new_values[name] and "0x" not in old_values[name]:
                changes.append(InputChange(name, "value", old_values[name], new_values[name]))
        graph = list(difflib.unified_diff(
            [g for g in _payload_lines(against, "dynamo_output_graph", _clean_graph) if g],
            [g for g in _payload_lines(node, "dynamo_output_graph", _clean_graph) if g],
            f"[{against.id}] dynamo_output_graph", f"[{node.id}] dynamo_output_graph", lineterm="", n=2))
    return RecompileDiff(node, against, reason, before, after, changes, guards, graph, failure,
                         failed.why if failed is not None else "")


def describe_change(change: InputChange) -> str:
    if change.field == "input":
        return f"{change.source}: a new input"
    if change.dims:
        dims = ", ".join(f"index {i}: {change.before[i]} -> {change.after[i]}" for i in change.dims)
        return f"{change.source} {change.field} {dims}  ({change.before} -> {change.after})"
    return f"{change.source} {change.field}: {change.before} -> {change.after}"


FAILURE_LINES = 8  # of the failure's message: its explanation and hints, not a whole traceback


def wrap_prose(line: str, width: int) -> list[str]:
    """A message line in lines of at most `width` columns. Continuation lines are indented past
    the line's own indent, so they never start with the `+`, `-` or `!` the diff highlighter
    colours (and read as part of the line above)."""
    if len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
    # a long word (a URL, a path) stays whole: cut, it could not be copied
    return textwrap.wrap(line, max(width, len(indent) + 20), subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [line]


def diff_lines(diff: RecompileDiff, width: int) -> list[str]:
    """The diff as the Diff pane shows it: the failed guard, what failed, the inputs that changed,
    the guard and graph diffs. Message lines wrap at `width`; diff lines stay whole (a guard is
    read and compared as one line)."""
    node, against = diff.node, diff.against
    prose = [f"# [{node.id}] against [{against.id}], whose guard failed:" if against else
             f"# [{node.id}] recompiled, but the compile whose guard failed is not in these logs.",
             f"!!! {diff.reason.summary}" if diff.reason else "!!! (no recompile reason)", ""]
    if diff.failure is not None:
        failure = diff.failure
        # the message up to its first blank line: what failed, the explanation, the hints
        message = failure.fail_reason.strip("\n").split("\n\n", 1)[0].split("\n")
        first = f"{failure.fail_type}: {message[0].strip()}" if message else failure.fail_type
        prose.append(f"# [{node.id}] failed: {diff.failure_why}")
        prose += [f"  {first}".rstrip()] + [f"  {ln.rstrip()}" for ln in message[1:FAILURE_LINES]]
        prose += [(f"  A compile that fails installs no guards and keeps no graph: there is nothing "
                   f"of [{node.id}] to compare with [{against.id if against else '?'}]."), ""]
    prose.append("# inputs that changed")
    prose += [f"  {describe_change(c)}" for c in diff.changes] or ["  (none found in the describe records)"]
    lines = [wrapped for line in prose for wrapped in wrap_prose(line, width)]
    if diff.failure is not None or against is None:
        return lines
    lines += ["", "# guards"]
    lines += diff.guard_diff or ["  (the same guards)"]
    lines += ["", "# Dynamo output graph"]
    lines += diff.graph_diff or ["  (the same graph)"]
    return lines
