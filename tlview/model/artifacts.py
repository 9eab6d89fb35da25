"""What a compile node points at on disk: artifacts (graphs, code, guards), dynamic-shape events,
TORCH_LOGS text records; and how a stack frame reads (`file:line in function`), written once.

Each of these keeps its source and record number; the text is read when a pane shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tlview.model.kinds import RecordKind
    from tlview.source.payload import LoadedPayload


def format_frame(filename: str, line, name) -> str:
    """How a stack frame reads everywhere: `/path/file.py:12 in forward`."""
    return f"{filename}:{line} in {name}"


def resolve_stack(source, frames) -> list[str]:
    """A stack as torch writes it (`[{"filename": 3, "line": 12, "name": "f"}, ...]`, file names
    by string-table id) as readable frames; `source` resolves the ids (a TraceFile)."""
    out = []
    for frame in frames if isinstance(frames, list) else []:
        if isinstance(frame, dict):
            filename = frame.get("filename")
            if source is not None and hasattr(source, "frame_filename"):
                filename = source.frame_filename(filename)
            out.append(format_frame(filename, frame.get("line"), frame.get("name")))
    return out


@dataclass(slots=True, eq=False)
class Artifact:
    """A record whose payload a pane can show (a graph, output code, guards, an artifact)."""

    name: str  # the record kind, the artifact's name, or the TORCH_LOGS artifact (`graph_code`)
    kind: "RecordKind"
    source: Any  # the TraceFile or TextLog that holds it
    rec: int  # record number in that source
    info: dict | None = None  # small metadata (e.g. the output code's file name)

    @property
    def label(self) -> str:
        """The name to show: DDP split children, dumps and output code say which one they are."""
        info = self.info or {}
        extra = info.get("name") if self.name == self.kind.name else None
        if extra is None and "filename" in info and self.kind.role.value == "code":
            extra = str(info.get("filename") or "").rsplit("/", 1)[-1][:10] or None
        return f"{self.name} {extra}" if extra else self.name

    @property
    def role(self):
        return self.kind.role

    @property
    def language(self) -> str | None:
        """How a pane highlights it: its kind's language, none for JSON and metadata."""
        return None if self.name.endswith(("_json", "_metadata")) else self.kind.language

    def load(self) -> "LoadedPayload":
        """Read the payload from disk now (lines, md5 check, problems)."""
        return self.source.load_payload(self.rec)


@dataclass(slots=True, eq=False)
class DynamicEvent:
    """A dynamic-shape event: from the trace (fields read from disk when asked) or a text line."""

    kind: str  # create_symbol, symbolic_shape_specialization, guard_added_fast, ...
    text: str | None  # the summary, known up front for text logs
    source: Any = None
    rec: int = -1

    @property
    def summary(self) -> str:
        if self.text is None:
            self.text = dynamic_summary(self.kind, self.fields())
        return self.text

    @property
    def is_guard(self) -> bool:
        return self.kind.startswith("guard_added")

    def fields(self) -> dict:
        """The event's metadata (symbol, sources, expr, user_stack, ...); {} for a text line."""
        if self.rec < 0 or not hasattr(self.source, "load_event"):
            return {}
        return self.source.load_event(self.rec)

    def user_stack(self) -> list[str]:
        return resolve_stack(self.source, self.fields().get("user_stack"))


def dynamic_summary(kind: str, info: dict) -> str:
    if kind == "create_symbol":
        return f"{info.get('symbol')} = {info.get('val')} for {info.get('source')} (range {info.get('vr')})"
    if kind == "create_unbacked_symbol":
        return f"{info.get('symbol')} (unbacked, range {info.get('vr')}) from {info.get('node_id') or ''}".rstrip()
    if kind == "symbolic_shape_specialization":
        sources = info.get("sources")
        where = ", ".join(map(str, sources)) if isinstance(sources, list) else ""
        return f"{info.get('symbol')} specialized to {info.get('value')} ({where}): {info.get('reason')}"
    if kind in ("guard_added_fast", "guard_added"):
        return f"guard added: {info.get('expr')}"
    return ", ".join(f"{k}={v}" for k, v in list(info.items())[:4] if not isinstance(v, (list, dict)))


@dataclass(slots=True, eq=False)
class TextRecord:
    """A group of TORCH_LOGS lines with one prefix (one logging call), for the Log pane: its place
    only (its lines are read from disk when shown)."""

    source: Any  # the TextLog
    rec: int
    channel: str  # artifact name (`recompiles`, `graph_breaks`) or the logger's area

    def load_text(self, limit: int = 8 << 20) -> str:
        """Its lines, read from disk (the first `limit` bytes of a huge one)."""
        return self.source.payload_text(self.rec, limit)
