"""What a record is to a person: the role every record kind has (index/kinds.py names the kinds)."""

from __future__ import annotations

from enum import Enum


class Role(Enum):
    """What a record is to a person."""

    START = "start"  # a compile begins: the user stack (dynamo_start)
    GRAPH = "graph"  # an FX graph: Dynamo, AOT, Inductor
    CODE = "code"  # generated code (inductor output code, dumped files)
    GUARDS = "guards"
    METRICS = "metrics"
    DYNAMIC = "dynamic"  # dynamic-shape events: symbols, specializations, guards added
    RECOMPILE = "recompile"  # why a compile recompiled
    BREAK = "break"  # a graph break
    FAILURE = "failure"  # an error inside a compile
    CACHE = "cache"  # cache hit / miss / bypass
    EXPORT = "export"  # torch.export records
    PERF = "perf"  # performance hints
    VERSION = "version"  # the torch version of the run
    STRING = "string"  # string-table entries
    SILENT = "silent"  # metadata only, counted (chromium_event, describe_*)
    ARTIFACT = "artifact"  # any other payload worth a look
    LOG = "log"  # TORCH_LOGS lines with no trace equivalent

    @property
    def in_graphs_pane(self) -> bool:
        return self in _GRAPHS_PANE


_GRAPHS_PANE = {Role.GRAPH, Role.CODE, Role.EXPORT, Role.CACHE, Role.ARTIFACT}
