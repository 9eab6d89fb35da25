"""The compare view's tree: the problems gone, new and the same, each with the compile ids it was
seen at in each run (the leaves). It reads the comparison (diagnose.compare), and decides nothing."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets.tree import TreeNode

from tlview.diagnose.compare import ComparedProblem, Comparison, Occurrence
from tlview.report.rich_text import short_path
from tlview.textsafe import one_line, visible_name
from tlview.ui.detail import DetailPane
from tlview.ui.keys import COMPARE_TREE_BINDINGS
from tlview.ui.tree_keys import KeyedTree

GROUPS = (("gone", "Gone", "green"), ("new", "New", "red"), ("same", "Same", "yellow"))


@dataclass(frozen=True)
class Seen:
    """A leaf: one occurrence of a problem, in the run it was seen in."""

    run: str  # "before" or "after"
    occurrence: Occurrence


class CompareTree(KeyedTree):
    BINDINGS = COMPARE_TREE_BINDINGS

    def __init__(self, **kwargs) -> None:
        super().__init__("problems", **kwargs)
        self.show_root = False
        self.guide_depth = 3

    def show(self, comparison: Comparison) -> None:
        """The comparison's problems; what stayed is folded (what changed comes first). The cursor
        stays on the problem it was on when it is still there (a filter changed), else the first."""
        was = self._problem_key(self.cursor_node)
        self.clear()
        for group, title, style in GROUPS:
            problems = getattr(comparison, group)
            branch = self.root.add(Text(f"{title} ({len(problems)})", style=f"bold {style}"),
                                   data=group, expand=True)
            for problem in problems:
                item = branch.add(problem_label(problem, self._room()), data=problem,
                                  expand=group != "same")
                for run, found in (("before", problem.before), ("after", problem.after)):
                    for occurrence in found:
                        item.add_leaf(f"{run}: [{occurrence.compile_id}]", data=Seen(run, occurrence))
        problems = [node for group in self.root.children for node in group.children]
        here = next((n for n in problems if self._problem_key(n) == was), None)
        self.select(here or next(iter(problems), None) or next(iter(self.root.children), None))

    def _room(self) -> int:
        """Columns for a problem's label: less its guide, its fold icon and the scrollbar, when
        shown (a label cut for a scrollbar never shown lost its last word to an ellipsis)."""
        return self.size.width - self.guide_depth - 2 - self.scrollbar_size_vertical

    def on_resize(self) -> None:
        for group in self.root.children:
            for item in group.children:
                if item.data is None:
                    continue
                label = problem_label(item.data, self._room())
                if label.plain != str(item.label):  # (a Text is its plain text as a str)
                    item.set_label(label)

    @staticmethod
    def _problem_key(node: TreeNode | None) -> tuple | None:
        problem = node.data if node is not None else None
        if isinstance(problem, ComparedProblem):
            return problem.kind, problem.cause, problem.function, problem.location
        return None

    @property
    def seen(self) -> Seen | None:
        """The occurrence the cursor is on: a leaf's, or a problem's first (the newest run's)."""
        data = self.cursor_node.data if self.cursor_node is not None else None
        if isinstance(data, ComparedProblem):
            return Seen("after", data.after[0]) if data.after else Seen("before", data.before[0])
        return data if isinstance(data, Seen) else None

    def leaves(self) -> list[TreeNode]:
        """Every occurrence, in tree order (folded ones too)."""
        return [leaf for group in self.root.children for item in group.children for leaf in item.children]

    def in_order(self) -> list[TreeNode]:
        """Every node, groups, problems and occurrences, in tree order (folded ones too)."""
        return [node for group in self.root.children
                for node in (group, *(n for item in group.children for n in (item, *item.children)))]

    def select(self, node: TreeNode | None) -> None:
        """The cursor on `node`, its branch unfolded."""
        if node is None:
            return
        parent = node.parent
        while parent is not None and parent is not self.root:
            parent.expand()
            parent = parent.parent
        self.get_node_at_line(0)  # lays the lines out now: the node has its line, the cursor moves at once
        self.move_cursor(node)

    def open_node(self, node: TreeNode) -> bool:
        """Enter on a problem or an occurrence: into the pane, as on a compile id of the explorer."""
        if not isinstance(node.data, (ComparedProblem, Seen)):
            return False
        self.app.query_one(DetailPane).focus_pane()
        return True


def problem_label(problem: ComparedProblem, room: int) -> Text:
    """`2 → 0  graph break print_or_logging in step at compare.py:15`: how many times before and
    after first; within `room` columns, `2 → 0  graph break [0/0] in step` (the rest is above the
    panes): the first compile id it was seen at tells apart rows of one kind and function. What
    still does not fit ends in an ellipsis."""
    label = Text(f"{len(problem.before)} → {len(problem.after)}  ")
    label.append(problem.noun, style="bold")
    wide = label.copy()
    wide.append(f" {visible_name(problem.cause)} in {visible_name(problem.function)} at "
                f"{visible_name(short_path(problem.location))}")
    if wide.cell_len <= room:
        return wide
    first = (problem.before or problem.after)[0]  # the first row under it
    label.append(f" [{first.compile_id}] in {visible_name(problem.function)}")
    if label.cell_len > room > 0:
        label.truncate(room, overflow="ellipsis")
    return label


def problem_text(problem: ComparedProblem) -> Text:
    """Above the panes: the problem the cursor is on, and why (what to do is in the Summary, for
    the compile shown)."""
    # (a trace names the function and the place: made visible, as in the explorer)
    text = Text(f"{problem.noun} ({visible_name(problem.cause)}) in {visible_name(problem.function)}",
                style="bold")
    where = visible_name(short_path(problem.location))
    if problem.location_before and problem.location_after and problem.location_before != problem.location_after:
        where += f" (was {visible_name(short_path(problem.location_before))})"
    text.append(f" at {where}\n")
    text.append(f"why: {one_line(problem.why, 300)}")
    return text


def seen_text(seen: Seen) -> Text:
    return Text(f"{seen.run} run: [{seen.occurrence.compile_id}]  {one_line(seen.occurrence.why, 300)}")
