"""Following a live job in the explorer: news told as toasts, the cursor on the newest compile id
until the user moves, "+N new", a re-indexed folder, the job's end. The explorer owns one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events

from tlview.textsafe import one_line
from tlview.ui.keys import USER_MOVES
from tlview.ui.messages import FollowState, IndexReplaced, JobEnded
from tlview.views.tree import TreeModel

if TYPE_CHECKING:
    from tlview.ui.app import TlviewApp

TOASTS_AT_ONCE = 3


class Following:
    def __init__(self, app: TlviewApp) -> None:
        self.app = app

    def index_replaced(self, message: IndexReplaced) -> None:
        """A file was truncated or replaced and everything was indexed again."""
        app = self.app
        app.show_model(TreeModel(message.index, app.flt, live=True))
        app.events.take(message.index.take_changes(), tell=False)  # what is there again is not news
        for text in message.messages:
            app.notify(text, title="indexed again", severity="warning", timeout=6, markup=False)
        app.refresh_views()

    def follow_state(self, message: FollowState) -> None:
        app = self.app
        if message.ended and app.nothing_came is not None and app.nothing_came():
            app.nothing_came_in = True
            app.exit(return_code=2)  # nothing to read: the launcher tells why
        app.caught_up = message.caught_up
        if message.ended:
            # nothing is compiling any more: the newest compile without metrics is just missing
            app.auto_follow = False
            app.show_model(TreeModel(app.index, app.flt, live=False))
            app.set_facts(waiting=message.waiting, live="ended")
        else:
            app.set_facts(waiting=message.waiting)
        app.refresh_views()

    def job_ended(self, message: JobEnded) -> None:
        self.app.notify(f"the job exited with code {message.code}; its logs stay in {message.folder}",
                        title="job finished", timeout=10, markup=False)

    def tell_news(self, changes) -> None:
        """Toast what is news in the changed compiles (the model decides what is)."""
        app = self.app
        news, new_ids = app.events.take(changes, tell=app.caught_up)
        if not app.auto_follow and app.caught_up:
            app.new_unseen += new_ids
        for event in news[:TOASTS_AT_ONCE]:
            app.notify(one_line(event.message, 200), title=event.title, markup=False,
                       severity=event.severity, timeout=5)
        if len(news) > TOASTS_AT_ONCE:
            app.notify(f"and {len(news) - TOASTS_AT_ONCE} more", timeout=5)

    def user_event(self, event: events.Event) -> None:
        """A user who moves in the tree is reading: stop moving the cursor to the newest compile id."""
        moved = isinstance(event, events.Click) or isinstance(event, events.Key) and event.key in USER_MOVES
        if self.app.auto_follow and self.app.caught_up and moved:
            self.app.auto_follow = False

    def toggle(self) -> None:
        app = self.app
        if app.live is None:
            app.notify("not following: open with --follow to watch a running job", timeout=3)
            return
        app.new_unseen = 0
        app.auto_follow = not app.auto_follow
        app.refresh_views()
