"""A pane that shows one text made from the selection, read from disk in a worker."""

from __future__ import annotations

from textual import on, work
from textual.containers import Vertical
from textual.worker import Worker, WorkerState

from tlview.ui.pane import Pane, Selection
from tlview.ui.payload_view import HIGHLIGHT_BLOCK, PayloadView, first_block


class TextPane(Vertical, Pane):
    """Subclasses say what to show: `text_for` runs in a worker thread (it may read the disk)."""

    language: str | None = None
    empty_message = "select a compile id"

    def compose(self):
        yield PayloadView()

    def text_for(self, selection: Selection) -> str:
        raise NotImplementedError

    def show(self, selection: Selection) -> None:
        if selection.entry is None or selection.entry.node is None:
            self.query_one(PayloadView).set_text(self.empty_message, None)
            return
        self.loading_started(self.load(selection))

    def loading_view(self) -> PayloadView:
        return self.query_one(PayloadView)

    @on(Worker.StateChanged)
    def _show_failed_load(self, event: Worker.StateChanged) -> None:
        # (not on_worker_state_changed: Pane's, which Textual would run as well)
        if event.state is WorkerState.ERROR and event.worker.group == "pane-load":
            error = event.worker.error
            self.query_one(PayloadView).set_text(f"could not load this pane: {type(error).__name__}: {error}", None)

    # a failure is shown (app._worker_changed)
    @work(thread=True, exclusive=True, group="pane-load", exit_on_error=False)
    def load(self, selection: Selection) -> None:
        text = self.text_for(selection)
        head = first_block(text.split("\n", HIGHLIGHT_BLOCK), self.language)
        self.app.call_from_thread(self.query_one(PayloadView).set_text, text, self.language, head)

    def copy_text(self) -> str:
        return self.query_one(PayloadView).text
