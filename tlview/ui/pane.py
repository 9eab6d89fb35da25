"""What the detail side asks of every pane: show a selection, and give the text it shows (for `y`
and `e`). Panes are widgets of different bases (a scroll view, a tree, a container): this is their
common base, a Widget itself, so that the detail side reads a pane's widget state with its type.
It comes after the widget's class among a pane's bases: Textual takes a widget's default CSS
from its first base only (a Horizontal pane lost its layout when Pane came first)."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from rich.console import Console
from textual.widget import Widget
from textual.worker import Worker

from tlview.index.index import Index
from tlview.source.user_source import Excerpt, SourceFiles
from tlview.ui.loading_cover import LoadingCover
from tlview.ui.messages import work_done
from tlview.views.tree import TreeEntry


@dataclass(frozen=True)
class Selection:
    """What the panes show: an entry of the tree (or nothing) of an index, for a rank or all."""

    index: Index
    entry: TreeEntry | None
    rank: object = ...  # a rank number, None for rank-less logs, ... for all ranks
    sources: SourceFiles | None = field(default=None, compare=False)  # the user's files, for their lines

    def excerpt(self, place: tuple[str, int] | None) -> Excerpt | None:
        """The user's lines at a problem's place, where the file is here."""
        return self.sources.excerpt(*place) if self.sources is not None and place else None


def plain_text(renderable, width: int = 200) -> str:
    """What a rich renderable shows, as plain text (for `y` and `e`: no styles, no escapes)."""
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().split("\n")).strip("\n")


class Pane(Widget):
    _loading_cover: LoadingCover | None = None

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Each of the pane's thread workers, once ended, reaches the app (WorkDone)."""
        if (done := work_done(self, event)) is not None:
            self.post_message(done)
        if self._loading_cover is not None:
            self._loading_cover.changed(event.worker)

    def loading_view(self) -> Widget:
        """What the loading indicator covers while the pane's content is made: the pane."""
        return self

    @property
    def loading_cover(self) -> LoadingCover:
        """The loading indicator of the pane's loads (told by `loading_started`)."""
        if self._loading_cover is None:
            self._loading_cover = LoadingCover(self.loading_view())
        return self._loading_cover

    def loading_started(self, worker: Worker) -> None:
        """A worker that makes the pane's content began: the indicator is shown until it ends."""
        self.loading_cover.started(worker)

    def show(self, selection: Selection) -> None:
        raise NotImplementedError

    def copy_text(self) -> str | None:
        """The text this pane shows (what `y` copies and `e` opens), or None."""
        return None

    def leave(self) -> None:
        """Another pane is shown instead: said at once, where its Hide event comes after the
        frame that shows the other (a pane's thread then worked on meanwhile, and that frame,
        sharing the interpreter with it, took twice its time)."""
