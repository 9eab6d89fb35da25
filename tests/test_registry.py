"""The table of record kinds, on real traces: every kind and TORCH_LOGS artifact tlview meets is
in it, and what the table says is what readers and panes do."""

from __future__ import annotations

import re

from conftest import CORPUS, GENERATED

from tlview.domain.role import Role
from tlview.index.indexing import open_index
from tlview.index.kinds import Reads
from tlview.index.registry import KINDS, LAZY_KINDS, LAZY_TEXT_CHANNELS, SILENT_KINDS


def test_silent_kinds_are_read_for_their_place_only():
    assert SILENT_KINDS <= LAZY_KINDS
    assert {"chromium_event", "describe_tensor"} <= SILENT_KINDS
    assert all(KINDS.trace_kind(k).reads is Reads.PLACE for k in LAZY_KINDS)


def test_text_artifacts_map_to_the_kinds_their_trace_twins_have():
    assert KINDS.text_kind("graph_code") is KINDS.trace_kind("dynamo_output_graph")
    assert KINDS.text_kind("guards") is KINDS.trace_kind("dynamo_cpp_guards_str")
    assert KINDS.text_kind("output_code") is KINDS.trace_kind("inductor_output_code")
    assert KINDS.text_kind("recompiles") is KINDS.artifact("recompile_reasons")
    assert KINDS.text_kind("graph_breaks") is KINDS.artifact("dynamo_graph_break_reason")
    assert {"graph_code", "output_code", "guards", "trace_bytecode"} <= LAZY_TEXT_CHANNELS
    assert not {"recompiles", "graph_breaks", "perf_hints", "dynamo"} & LAZY_TEXT_CHANNELS


def test_every_text_tag_of_the_corpus_is_a_known_kind():
    tags = set()
    for text in CORPUS.glob("*/torch_logs.txt"):
        tags |= set(re.findall(r"\] (?:\[[!0-9/_]+\] )?\[__(\w+)\]", text.read_text()))
    unknown = {t for t in tags if KINDS.text_kind(t) is KINDS.text_log}
    assert unknown == set()


def test_torch_2_15_runtime_wrappers_come_with_the_code():
    """torch 2.15 merged six runtime-wrapper artifacts into `aot_autograd_runtime_wrappers`:
    one row in the table gives it a label and its place after the output code."""
    index = open_index(str(GENERATED / "torch215" / "recompiles" / "trace"))
    node = index.node(None, "0/0")
    shown = sorted((a for a in node.artifacts if a.kind.role.in_graphs_pane), key=lambda a: (a.kind.order, a.rec))
    names = [a.name for a in shown]
    assert names.index("aot_autograd_runtime_wrappers") == names.index("inductor_output_code") + 2
    wrappers = shown[names.index("aot_autograd_runtime_wrappers")]
    assert (wrappers.kind.role, wrappers.kind.label) == (Role.CODE, "AOT runtime wrappers")
    assert "runtime_wrapper" in wrappers.load().text  # a section header of the merged artifact
    assert index.unknown_kinds == {}
