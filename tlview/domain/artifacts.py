"""What a compile node points at on disk: artifacts (graphs, code, guards), dynamic-shape events,
TORCH_LOGS text records; how an artifact is named to a person ("output code · cxfl32xl42") and how
a stack frame reads (`file:line in function`), written once.

Each of these keeps its source and record number; the text is read when a pane shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from tlview.domain.places import resumed
from tlview.domain.role import Role

if TYPE_CHECKING:
    from tlview.source.payload import LoadedPayload


class ArtifactKind(Protocol):
    """What an artifact needs of its record kind (index/kinds.RecordKind is one): declared here so
    that the domain names no type of the index above it."""

    @property
    def name(self) -> str: ...
    @property
    def role(self) -> Role: ...
    @property
    def label(self) -> str: ...
    @property
    def text_names(self) -> tuple[str, ...]: ...
    @property
    def language(self) -> str | None: ...


def format_frame(filename: object, line: object, name: object) -> str:
    """How a stack frame reads everywhere: `/path/file.py:12 in forward`."""
    return f"{filename}:{line} in {name}"


def resolve_stack(source: object, frames: object) -> list[str]:
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


# `artifact` records whose names the registry has no row for, as a person says them. Any other
# name reads with its underscores as spaces (and its acronyms spelled as torch's docs spell them).
ARTIFACT_NAMES = {
    "aot_forward_graph_fw_metadata": "AOT forward graph metadata",
    "after_post_grad_graph": "graph after post-grad passes",
    "before_recompile_pre_grad": "pre-grad graph before recompile",
    "after_recompile_pre_grad": "pre-grad graph after recompile",
    "before_recompile_post_grad": "post-grad graph before recompile",
    "after_recompile_post_grad": "post-grad graph after recompile",
    # the AOT autograd runtime wrappers, written as code (torch >= 2.13)
    "compiled_function_forward": "AOT compiled forward",
    "compiled_function_backward": "AOT compiled backward",
    "backward_prologue": "AOT backward prologue",
    "backward_epilogue": "AOT backward epilogue",
    "compiled_fn_wrapper": "AOT compiled-function wrapper",
    "runtime_wrapper_orchestration": "AOT runtime wrapper",
    "output_alias_wrapper": "AOT output alias wrapper",
    "inductor_provenance_tracking_node_mappings": "Inductor provenance: node mappings",
    "inductor_provenance_tracking_kernel_stack_traces": "Inductor provenance: kernel stack traces",
    "inductor_post_to_pre_grad_nodes": "Inductor provenance: post-grad to pre-grad nodes",
    "inductor_triton_kernel_to_post_grad_nodes": "Inductor provenance: Triton kernels to post-grad nodes",
    "inductor_runtime_and_tensor_meta": "Inductor runtime and tensor metadata",
    "graph_execution": "graph execution order",
    "inductor_graph_execution": "Inductor graph run",
    "fx_graph_cache_hash": "FX graph cache key",
    "aotautograd_cache_hash": "AOTAutograd cache key",
    "torch._functorch.config": "functorch config",
    "torch._inductor.config": "Inductor config",
    "torch._dynamo.config": "Dynamo config",
}
_WORDS = {"fx": "FX", "aot": "AOT", "aotautograd": "AOTAutograd", "ddp": "DDP", "dynamo": "Dynamo",
          "inductor": "Inductor", "triton": "Triton", "cpp": "C++", "cuda": "CUDA", "json": "JSON",
          "fw": "forward", "bw": "backward", "fwd": "forward", "bwd": "backward"}
# Dynamo's bytecode dumps: `<code name>_ORIGINAL_BYTECODE`, a resumed frame's code name being
# `torch_dynamo_resume_in_<function>_at_<line>`.
_BYTECODE = re.compile(r"^(?P<code>.+)_(?P<which>ORIGINAL|MODIFIED)_BYTECODE$")


@lru_cache(maxsize=1024)  # a few dozen names, asked for whenever a list of artifacts is shown
def readable_name(name: str) -> str:
    """An artifact or record name as a person reads it: `fx_graph_cache_miss` -> "FX graph cache
    miss", `f_ORIGINAL_BYTECODE` -> "original bytecode · f"."""
    if known := ARTIFACT_NAMES.get(name):
        return known
    if m := _BYTECODE.match(name):
        resume = resumed(m.group("code"))
        code = f"resume in {resume.function} at line {resume.line}" if resume else m.group("code")
        return f"{m.group('which').lower()} bytecode · {code}"
    if not name.isidentifier():
        return name  # a module path or free text: as torch wrote it
    return " ".join(_WORDS.get(word, word) for word in name.split("_") if word) or name


@dataclass(slots=True, eq=False)
class Artifact:
    """A record whose payload a pane can show (a graph, output code, guards, an artifact)."""

    name: str  # the record kind, the artifact's name, or the TORCH_LOGS artifact (`graph_code`)
    kind: ArtifactKind
    source: Any  # the TraceFile or TextLog that holds it
    rec: int  # record number in that source
    info: dict[str, Any] | None = None  # small metadata (e.g. the output code's file name)

    @property
    def title(self) -> str:
        """What it is, as a person says it: its kind's label ("output code", "Dynamo output graph"
        for a trace record and its TORCH_LOGS twin alike), else its name made readable."""
        kind = self.kind
        if self.name == kind.name or self.name in kind.text_names or kind.name == "artifact:" + self.name:
            return kind.label
        return readable_name(self.name)

    @property
    def ident(self) -> str | None:
        """Which one it is, when there are several: a DDP child's or a dump's name, the output
        code's file hash (`cxfl32xl42`)."""
        info = self.info or {}
        ident = info.get("name") if self.name == self.kind.name else None
        if ident is None and "filename" in info and self.kind.role.value == "code":
            ident = str(info.get("filename") or "").rsplit("/", 1)[-1][:10] or None
        return str(ident) if ident is not None else None

    @property
    def label(self) -> str:
        """The name to show: what it is, then which one (`output code · cxfl32xl42`)."""
        ident = self.ident
        return f"{self.title} · {ident}" if ident else self.title

    @property
    def role(self) -> Role:
        return self.kind.role

    @property
    def language(self) -> str | None:
        """How a pane highlights it: its kind's language, none for JSON and metadata."""
        return None if self.name.endswith(("_json", "_metadata")) else self.kind.language

    def load(self) -> LoadedPayload:
        """Read the payload from disk now (lines, md5 check, problems)."""
        loaded: LoadedPayload = self.source.load_payload(self.rec)
        return loaded

    def content_key(self) -> str | None:
        """What makes two payloads equal without reading them: the md5 of a payload the scan
        verified (None when it was not, or for text)."""
        md5: str | None = self.source.verified_md5(self.rec)
        return md5


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

    def fields(self) -> dict[str, Any]:
        """The event's metadata (symbol, sources, expr, user_stack, ...); {} for a text line."""
        if self.rec < 0 or not hasattr(self.source, "load_event"):
            return {}
        event: dict[str, Any] = self.source.load_event(self.rec)
        return event

    def user_stack(self) -> list[str]:
        return resolve_stack(self.source, self.fields().get("user_stack"))


def dynamic_summary(kind: str, info: dict[str, Any]) -> str:
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
        text: str = self.source.payload_text(self.rec, limit)
        return text
