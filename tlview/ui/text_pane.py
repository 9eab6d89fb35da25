"""A pane that shows one text made from the selected entry, read from disk in a worker."""

from __future__ import annotations

from textual import work
from textual.containers import Vertical

from tlview.model.index import Index
from tlview.model.tree import TreeEntry
from tlview.ui.payload_view import PayloadView


class TextPane(Vertical):
    """Subclasses say what to show: `text_for` runs in a worker thread (it may read the disk)."""

    language: str | None = None
    empty_message = "select a compile id"

    def compose(self):
        yield PayloadView()

    def text_for(self, index: Index, entry: TreeEntry) -> str:
        raise NotImplementedError

    def show(self, index: Index, entry: TreeEntry | None) -> None:
        if entry is None or entry.node is None:
            self.query_one(PayloadView).set_text(self.empty_message, None)
            return
        self.load(index, entry)

    @work(thread=True, exclusive=True)
    def load(self, index: Index, entry: TreeEntry) -> None:
        text = self.text_for(index, entry)
        self.app.call_from_thread(self.query_one(PayloadView).set_text, text, self.language)

    def payload_text(self) -> str:
        return self.query_one(PayloadView).text
