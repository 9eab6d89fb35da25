"""Graphs and code of the selected compile id: pick one from the list, read it from disk, show it."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.containers import Horizontal, Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tlview.model.compile_node import Artifact
from tlview.model.index import Index
from tlview.model.tree import TreeEntry
from tlview.textsafe import visible
from tlview.ui.payload_view import PayloadView

# The order a user walks a compile: Dynamo -> AOT -> Inductor -> code.
GRAPH_ORDER = [
    "dynamo_output_graph", "optimize_ddp_split_graph", "optimize_ddp_split_child",
    "compiled_autograd_graph", "before_pre_grad_graph", "after_pre_grad_graph",
    "inductor_pre_grad_graph", "aot_joint_graph", "before_joint_graph", "after_joint_graph",
    "aot_forward_graph", "aot_backward_graph", "aot_inference_graph", "before_post_grad_graph",
    "inductor_post_grad_graph", "inductor_output_code", "fx_graph_runnable", "graph_dump",
    "dump_file", "exported_program",
]
NOT_GRAPHS = {"recompile_reasons", "dynamo_graph_break_reason", "dynamo_cpp_guards_str",
              "dynamo_guards", "compilation_metrics", "bwd_compilation_metrics"}


def graph_artifacts(entry: TreeEntry) -> list[Artifact]:
    """Graphs and code first in compile order, then the other artifacts."""
    nodes = [entry.node] if entry.node is not None else []
    arts = [a for n in nodes for a in n.artifacts if a.name not in NOT_GRAPHS]
    rank = {name: i for i, name in enumerate(GRAPH_ORDER)}
    return sorted(arts, key=lambda a: (rank.get(a.name, len(rank)), a.rec))


class GraphsPane(Horizontal):
    DEFAULT_CSS = """
    GraphsPane > OptionList { width: 34; }
    GraphsPane #graph-info { height: 1; color: $text-muted; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._artifacts: list[Artifact] = []

    def compose(self):
        yield OptionList(id="graph-list")
        with Vertical():
            yield Static(id="graph-info")
            yield PayloadView(id="graph-view")

    def show(self, index: Index, entry: TreeEntry | None) -> None:
        self._artifacts = graph_artifacts(entry) if entry is not None else []
        options = self.query_one("#graph-list", OptionList)
        options.clear_options()
        options.add_options([Option(Text(visible(a.label), no_wrap=True, overflow="ellipsis"), id=str(i))
                             for i, a in enumerate(self._artifacts)])
        view = self.query_one("#graph-view", PayloadView)
        if self._artifacts:
            options.highlighted = 0
        else:
            view.set_text("", None)
            self.query_one("#graph-info", Static).update(
                Text("no graphs for this entry" if entry is not None else "", style="dim"))

    @on(OptionList.OptionHighlighted, "#graph-list")
    def _picked(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index < len(self._artifacts):
            self.load(self._artifacts[event.option_index])

    @work(thread=True, exclusive=True, group="graph-load")
    def load(self, artifact: Artifact) -> None:
        if hasattr(artifact.source, "load_payload_lines"):
            lines, payload = artifact.source.load_payload_lines(artifact.rec)  # big ones in steps
        else:
            payload = artifact.load()
            lines = payload.text.split("\n")
        language = None if artifact.name.endswith(("_json", "_metadata")) or "cache" in artifact.name else "python"
        info = Text(f"{visible(artifact.label)}  {len(lines):,} lines")
        if payload.md5_ok is False or payload.problems:
            info.append("  ⚠ " + "; ".join(payload.problems), style="bold red")
        self.app.call_from_thread(self._loaded, lines, language, info)

    def _loaded(self, lines: list[str], language: str | None, info: Text) -> None:
        self.query_one("#graph-view", PayloadView).set_lines(lines, language)
        self.query_one("#graph-info", Static).update(info)

    def payload_text(self) -> str:
        return self.query_one("#graph-view", PayloadView).text
