"""Messages of the UI: workers report by these (never by writing the app's attributes), and
widgets post them with the model objects they are about."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import wraps

from textual.css.query import NoMatches
from textual.message import Message
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from tlview.diagnose.compare import Comparison
from tlview.diagnose.hang import JobVerdict
from tlview.diagnose.worst import WorstProblem
from tlview.domain.compile_node import CompileNode
from tlview.domain.rank_history import RankGroups
from tlview.index.index import Index
from tlview.views.filters import Filter
from tlview.views.tree import TreeModel


@dataclass
class IndexGrew(Message):
    """The index read more: `done` of `total` bytes. A burst of these coalesces into one (toolong)."""

    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexGrew)


@dataclass
class ComparisonReady(Message):
    """Both runs of --compare are read and matched."""

    comparison: Comparison
    before: Index
    after: Index
    flt: Filter | None = None  # what it kept of both runs (a newer filter makes it stale)


@dataclass
class IndexFinished(Message):
    """Every source was read to its end (not following); `ranks`: its ranks grouped by compile
    history (rank_history.py), decided in the worker (20,000 ranks: 0.3 s off the UI thread)."""

    ranks: RankGroups | None = None
    folded: TreeModel | None = None  # the tree of those groups, built there too (its filter's)


@dataclass
class JobDiagnosed(Message):
    """What happened to the job (hung, may hang, died), decided in the indexing worker once the
    logs were read (and, following, again as they grow); None: nothing happened to it. `worst`:
    the run's worst problem (the job's verdict first), decided there too."""

    verdict: JobVerdict | None
    worst: WorstProblem | None = None


@dataclass
class IndexReplaced(Message):
    """Following: a file was truncated or replaced, and the logs were indexed again from scratch."""

    index: Index
    messages: list[str] = field(default_factory=list)


@dataclass
class FollowState(Message):
    """Following: whether the follower caught up with the files, or what it waits for."""

    caught_up: bool
    waiting: str = ""
    ended: bool = False  # the input will not grow any more: everything is read and closed


@dataclass
class JobEnded(Message):
    """A `--run` job exited."""

    code: int
    folder: str


@dataclass
class PayloadMatches(Message):
    """The payload search of `flt` found these nodes; `note` says how far it got."""

    flt: Filter
    nodes: list[CompileNode]
    note: str


@dataclass
class JumpToCompile(Message):
    """Select this compile id in the tree (a recompile reason names the compile it came from)."""

    node: CompileNode


def while_shown(handler):
    """A message that arrives while the app shuts down finds its widgets gone: it is dropped."""
    @wraps(handler)
    def guarded(self, *args):
        try:
            return handler(self, *args)
        except NoMatches:
            return None
    return guarded


@dataclass
class WorkDone(Message):
    """A widget's thread worker ended: `error` is what it raised, or None (it worked). Textual's
    Worker.StateChanged stays with the widget (it does not bubble): a pane loader that failed was
    never shown."""

    widget: Widget
    error: BaseException | None


def work_done(widget: Widget, event: Worker.StateChanged) -> WorkDone | None:
    """What a widget running thread workers posts as one's state changes (its
    `on_worker_state_changed`): WorkDone once it ended, for the app."""
    if event.state in (WorkerState.ERROR, WorkerState.SUCCESS):
        return WorkDone(widget, event.worker.error if event.state is WorkerState.ERROR else None)
    return None
