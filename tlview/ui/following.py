"""Following a live job in the explorer: news told as toasts, the cursor on the newest compile id
until the user moves, "+N new", a re-indexed folder, the job's end. Mixed into the app."""

from __future__ import annotations

from textual import events

from tlview.textsafe import one_line
from tlview.ui.keys import USER_MOVES
from tlview.ui.messages import FollowState, IndexReplaced, JobEnded, while_shown
from tlview.views.tree import TreeModel

TOASTS_AT_ONCE = 3


class Following:
    @while_shown
    def on_index_replaced(self, message: IndexReplaced) -> None:
        """A file was truncated or replaced and everything was indexed again."""
        self.show_model(TreeModel(message.index, self.flt, live=True))
        self.events.take(message.index.take_changes(), tell=False)  # what is there again is not news
        for text in message.messages:
            self.notify(text, title="indexed again", severity="warning", timeout=6, markup=False)
        self.refresh_views()

    @while_shown
    def on_follow_state(self, message: FollowState) -> None:
        if message.ended and self.nothing_came is not None and self.nothing_came():
            self.nothing_came_in = True
            self.exit(return_code=2)  # nothing to read: the launcher tells why
        self.caught_up = message.caught_up
        if message.ended:
            # nothing is compiling any more: the newest compile without metrics is just missing
            self.auto_follow = False
            self.show_model(TreeModel(self.index, self.flt, live=False))
            self._set_facts(waiting=message.waiting, live="ended")
        else:
            self._set_facts(waiting=message.waiting)
        self.refresh_views()

    def on_job_ended(self, message: JobEnded) -> None:
        self.notify(f"the job exited with code {message.code}; its logs stay in {message.folder}",
                    title="job finished", timeout=10, markup=False)

    def tell_news(self, changes) -> None:
        """Toast what is news in the changed compiles (the model decides what is)."""
        news, new_ids = self.events.take(changes, tell=self.caught_up)
        if not self.auto_follow and self.caught_up:
            self.new_unseen += new_ids
        for event in news[:TOASTS_AT_ONCE]:
            self.notify(one_line(event.message, 200), title=event.title, markup=False,
                        severity=event.severity, timeout=5)
        if len(news) > TOASTS_AT_ONCE:
            self.notify(f"and {len(news) - TOASTS_AT_ONCE} more", timeout=5)

    async def on_event(self, event: events.Event) -> None:
        # A user who moves in the tree is reading: stop moving the cursor to the newest compile id.
        moved = isinstance(event, events.Click) or isinstance(event, events.Key) and event.key in USER_MOVES
        if self.auto_follow and self.caught_up and moved:
            self.auto_follow = False
        await super().on_event(event)

    def watch_auto_follow(self) -> None:
        self._set_facts()  # live / paused

    def action_toggle_follow(self) -> None:
        if self.live is None:
            self.notify("not following: open with --follow to watch a running job", timeout=3)
            return
        self.new_unseen = 0
        self.auto_follow = not self.auto_follow
        self.refresh_views()
