"""Why the selected compile id recompiled: each failed guard, naming (Enter: jumping to) the
compile whose guard failed; and, for an earlier compile, which later compiles its guards sent."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.containers import Vertical
from textual.visual import VisualType
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tlview.domain.compile_node import CompileNode
from tlview.report.rich_text import source_block
from tlview.textsafe import visible
from tlview.ui.keys import RECOMPILE_LIST_BINDINGS
from tlview.ui.messages import JumpToCompile
from tlview.ui.pane import Pane, Selection
from tlview.ui.text_size import SteadyOptionList


class RecompileList(SteadyOptionList):
    """The reasons (Enter: to the compile whose guard failed); focused by Tab only when it has
    some (an empty list took a Tab and showed nothing focused)."""

    BINDINGS = RECOMPILE_LIST_BINDINGS


class RecompilesPane(Vertical, Pane):
    DEFAULT_CSS = """
    RecompilesPane > #recompile-head { height: auto; padding: 0 1; }
    RecompilesPane > OptionList { height: 1fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._targets: list[CompileNode | None] = []

    def compose(self):
        yield Static(id="recompile-head")
        yield RecompileList(id="recompile-list")

    def show(self, selection: Selection) -> None:
        head = self.query_one("#recompile-head", Static)
        options = self.query_one("#recompile-list", OptionList)
        options.clear_options()
        self._targets = []
        entry = selection.entry
        if entry is None or entry.node is None:
            head.update(Text("Select a compile id.", style="dim"))
            return
        node = entry.node
        reasons = node.reasons
        rows: list[Option] = []
        if reasons:
            said = Text(f"[{node.id}] recompiled: {len(reasons)} cached compile(s) rejected "
                        "this call. Enter jumps to the compile whose guard failed.", style="bold")
            assert node.compile is not None  # a node of the index: linked to its compile when it was made
            recompile = node.compile.verdict.recompile
            excerpt = selection.excerpt(recompile.source_place) if recompile is not None else None
            if excerpt is not None:
                said.append("\n")
                said.append_text(source_block(excerpt.as_dict(), indent="  "))
            head.update(said)
            for reason in reasons:
                label = Text()
                label.append(f"[{reason.failed_id or '?'}] ", style="bold cyan")
                first, _, rest = reason.body.partition("\n")
                label.append(visible(first), style="bold")
                if rest:
                    label.append("\n" + visible(rest), style="dim")
                self._targets.append(selection.index.failed_guard_target(node, reason))
                rows.append(Option(label))
        later = selection.index.recompiled_by(node)
        if later:
            if not reasons:
                head.update(Text(f"[{node.id}] is not a recompile. Its guards failed later for:",
                                 style="bold"))
            for other in later:
                why = next(r for r in other.reasons if r.failed_id == node.cid)
                label = Text()
                label.append(f"→ [{other.id}] ", style="bold cyan")
                label.append(visible(why.summary))
                self._targets.append(other)
                rows.append(Option(label))
        if not reasons and not later:
            head.update(Text(f"[{node.id}] did not recompile and no later compile replaced it.",
                             style="dim"))
        options.add_options(rows)
        options.can_focus = bool(rows)

    @on(OptionList.OptionSelected, "#recompile-list")
    def _jump(self, event: OptionList.OptionSelected) -> None:
        target = self._targets[event.option_index] if event.option_index < len(self._targets) else None
        if target is not None:
            self.post_message(JumpToCompile(target))

    def copy_text(self) -> str:
        options = self.query_one("#recompile-list", OptionList)
        return "\n".join(_plain(options.get_option_at_index(i).prompt) for i in range(options.option_count))


def _plain(prompt: VisualType) -> str:
    """An option's text: each prompt here is a Text (OptionList declares any visual)."""
    return prompt.plain if isinstance(prompt, Text) else str(prompt)
