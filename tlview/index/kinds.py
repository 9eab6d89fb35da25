"""Record kinds: what each kind of record is (its role), what reading it takes, how it is handled,
and where it shows. One table of them (registry.py) serves the trace scanner (which metadata to
parse), the text reader (which TORCH_LOGS artifact is which kind), the handlers, the panes and the
filters: adding a kind is one entry there and, if it needs one, one handler.

As tlparse has one parser per kind behind one trait (`StructuredLogParser`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from tlview.domain.role import Role

if TYPE_CHECKING:
    from tlview.domain.compile_node import CompileNode
    from tlview.index.index import Index
    from tlview.source.text_log import TextLines


_READ_FROM_DISK = {Role.GRAPH, Role.CODE, Role.GUARDS, Role.EXPORT, Role.ARTIFACT}


class Reads(Enum):
    """What the index needs of a record while indexing."""

    PLACE = "place"  # only where it is: metadata not parsed (a pane reads it from disk)
    METADATA = "metadata"  # its metadata, at once
    PAYLOAD = "payload"  # its metadata and payload text, when the record is complete


@dataclass(slots=True)
class Record:
    """One record as a handler sees it, from a trace or a text log."""

    source: Any  # TraceFile or TextLog
    rec: int  # record number in the source
    kind: RecordKind
    name: str  # the record kind, the artifact's name, or the TORCH_LOGS artifact name
    node: CompileNode | None
    meta: dict | None = None  # trace metadata (None for PLACE kinds and text)
    payload: str | None = None  # the payload (PAYLOAD kinds), or the text record's lines
    text: TextLines | None = None  # the text record (text logs only)

    @property
    def event(self) -> dict:
        """The value of the record's event key (`{"artifact": {...}}` -> `{...}`)."""
        value = (self.meta or {}).get(self.kind.event_key or self.name)
        return value if isinstance(value, dict) else {}


Handler = Callable[["Index", Record], None]


@dataclass(frozen=True, slots=True)
class RecordKind:
    name: str  # the trace's event key, `artifact:<name>` for an artifact record, or `text:<name>`
    role: Role
    label: str  # what a person reads ("AOT forward graph")
    handler: Handler
    reads: Reads = Reads.METADATA
    order: int = 1000  # where it comes in the Graphs pane: the order a user walks a compile
    text_names: tuple[str, ...] = ()  # TORCH_LOGS artifacts (`[__graph_code]`) that carry it
    language: str | None = "python"  # how a pane highlights its payload
    event_key: str | None = None  # the metadata key when it differs from `name` (artifacts)
    # of a lazy TORCH_LOGS record, the lines the reader counts as it passes them (the leaves of a
    # guard tree: the text's only guard count, its lines staying on disk)
    counted_lines: re.Pattern[str] | None = None

    def __reduce__(self):
        # Pickled as its name, unpickled by the registry's lookup (pickle imports its module):
        # a kind is one object of the registry's, also in a part sent by another process. Each
        # part sent its kinds whole, 16 of its 18 objects unpickled by Python code: half the
        # time of taking in 1,024 rank files' parts.
        return _LOOKUP[0], (self.name,)


_LOOKUP: list = []  # the registry's lookup of a kind by name (registry.kind_named), once it is made


@dataclass
class Registry:
    """The table of record kinds, looked up by trace kind, artifact name or TORCH_LOGS name."""

    kinds: Iterable[RecordKind]
    unknown: RecordKind  # a trace kind not in the table
    unknown_artifact: RecordKind  # an `artifact` record with a name not in the table
    cache: RecordKind  # an `artifact` record that tells a cache hit, miss or bypass
    text_log: RecordKind  # a TORCH_LOGS line of no known artifact
    cache_outcome: Callable[[str], str | None]  # hit / miss / bypass of an artifact name
    _by_name: dict = field(default_factory=dict)
    _by_text: dict = field(default_factory=dict)
    _by_artifact: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.kinds = list(self.kinds)
        for kind in self.kinds:
            self._by_name[kind.name] = kind
            for text_name in kind.text_names:
                self._by_text[text_name] = kind

    def named(self, name: str) -> RecordKind:
        """The kind of this `RecordKind.name`."""
        for fallback in (self.unknown, self.unknown_artifact, self.cache, self.text_log):
            if fallback.name == name:
                return fallback
        return self._by_name[name]

    def unpickles_kinds(self, lookup) -> None:
        """Kinds are unpickled by `lookup(name)`, a module-level function that gives this
        registry's kind (one object per kind, also after a pickle)."""
        _LOOKUP[:] = [lookup]

    def trace_kind(self, kind: str) -> RecordKind:
        return self._by_name.get(kind) or self.unknown

    def artifact(self, name: str) -> RecordKind:
        kind = self._by_artifact.get(name)
        if kind is None:
            kind = self._by_name.get("artifact:" + name)
            if kind is None:
                kind = self.cache if self.cache_outcome(name) else self.unknown_artifact
            if len(self._by_artifact) < 4096:  # names repeat; a bound against odd input
                self._by_artifact[name] = kind
        return kind

    def text_kind(self, channel: str) -> RecordKind:
        return self._by_text.get(channel) or self.text_log

    def by_reads(self, reads: Reads) -> frozenset[str]:
        return frozenset(k.name for k in self.kinds if k.reads is reads and ":" not in k.name)

    def counted_text_lines(self) -> dict[str, re.Pattern[str]]:
        """TORCH_LOGS channel -> the pattern of its lines counted while they are read."""
        return {name: kind.counted_lines for kind in self.kinds if kind.counted_lines is not None
                for name in kind.text_names}

    def lazy_text_channels(self) -> frozenset[str]:
        """TORCH_LOGS artifacts whose lines stay on disk: what a pane reads back (graphs, code,
        guards) and tracing noise. The handler gets only their first line."""
        return frozenset(name for kind in self.kinds
                         if kind.reads is Reads.PLACE or kind.role in _READ_FROM_DISK
                         for name in kind.text_names)
