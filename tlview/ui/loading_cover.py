"""Textual's loading indicator over a pane's view while a worker makes its content (issue #48:
Guards and Run stayed blank, with no spinner, for more than 1.5 s while they loaded).

Shown only once a load has taken SHOWN_AFTER: most loads take a few milliseconds, and a spinner
drawn and taken down at each move of the tree's cursor flickered over every pane. Taken down
when the newest load ended: its content arrived (a worker hands it over before it ends) or it
failed (the app shows the error: never a spinner forever)."""

from __future__ import annotations

from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker, WorkerState

SHOWN_AFTER = 0.25  # seconds a load runs before the indicator is shown
ENDED = (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)


class LoadingCover:
    """The indicator of one view, over it while any load it was told of runs."""

    def __init__(self, view: Widget) -> None:
        self.view = view
        self._running: set[Worker] = set()
        self._timer: Timer | None = None

    def started(self, worker: Worker) -> None:
        """A load began (on the UI thread, as its worker is made)."""
        self._running.add(worker)
        if self._timer is None and not self.view.loading:
            self._timer = self.view.set_timer(SHOWN_AFTER, self._show)

    def changed(self, worker: Worker) -> None:
        """A worker's state changed: one of the loads that ended is no longer waited for."""
        if worker.state in ENDED and worker in self._running:
            self._running.discard(worker)
            if not self._running:
                if self._timer is not None:
                    self._timer.stop()
                    self._timer = None
                self.view.loading = False

    @property
    def waiting(self) -> bool:
        """A load runs (shown or not yet)."""
        return bool(self._running)

    def _show(self) -> None:
        self._timer = None
        if self._running and self.view.is_attached:
            self.view.loading = True
