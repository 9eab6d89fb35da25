"""Keys first: for a moment after a key or a click, the explorer's other work steps back.

Python runs one thread at a time. At 20,000 ranks a key pressed while the index filled in
waited its turn behind the indexing thread and the slices that show what it read: 150-320 ms on
2 cores. For KEYS_FIRST after a key, the slices wait (app.refresh_views) and the indexing thread
sleeps between files and parts (Indexer.defer), so the key is handled and drawn first.

The moment is taken where the key is read (the driver's input thread: `user_input`), not where
the app handles it: the key reached the app 120 ms after it was read, behind the slice running
then, the frame that slice drew and the other widgets' messages, each slowed by the indexing
thread holding the GIL (10 ms for messages that take 0.1 ms alone).
"""

from __future__ import annotations

import time

from textual import events
from textual.screen import Screen

KEYS_FIRST = 0.15  # seconds
READING = 0.5  # seconds since the last key while a person is still pressing keys
STEP_BACK = 0.01  # seconds a thread sleeps at a time while a key comes first
_USER_EVENTS = (events.Key, events.Click, events.MouseScrollDown, events.MouseScrollUp)


def is_user_input(event) -> bool:
    return isinstance(event, _USER_EVENTS)


class KeysFirst:
    """The moment of the last key or click, owned by the app: the driver, where it reads a key,
    and the app, where it handles one, call `user_input`; the slices, the tree's layouts and the
    indexing thread ask whether a key comes first (the app's `steps_back`)."""

    def __init__(self) -> None:
        self.key_at = 0.0  # time.monotonic() of the last key or click
        self.held_until = 0.0  # time.monotonic() until which the other threads step back (hold_back)
        self.frame_for_key = False  # a key's change is to be drawn as soon as the screen has it

    def user_input(self) -> None:
        """A key or click was read (any thread: one float is set)."""
        self.key_at = time.monotonic()

    def keys_first(self) -> bool:
        """A key came a moment ago: showing it comes before showing or reading more."""
        return time.monotonic() - self.key_at < KEYS_FIRST

    def reading(self) -> bool:
        """Keys keep coming: a person reads while the explorer fills in."""
        return time.monotonic() - self.key_at < READING

    def hold_back(self, seconds: float) -> None:
        """The UI thread is about to do work a key may land on (a layout of the tree and its
        frame): the other threads step back for `seconds`. Sharing the GIL with the indexing
        thread, a layout of 2,000 new ranks took 30-80 ms, against 10 ms alone."""
        self.held_until = time.monotonic() + seconds

    def holding(self) -> bool:
        """The UI holds the other threads back now (hold_back)."""
        return time.monotonic() < self.held_until


def step_back(app) -> None:
    """In a thread other than the UI's: sleep while a key comes first, or the UI holds it back
    (`app.steps_back()`)."""
    steps_back = getattr(app, "steps_back", None)
    while steps_back is not None and steps_back():
        time.sleep(STEP_BACK)


class KeyFrameScreen(Screen):
    """The explorer's screen: what a key changed is drawn as soon as the screen has it, not on
    the next tick of its update timer. Textual draws on a 60 Hz grid, and after a frame longer
    than 1/60 s (a pane switch lays out the whole screen: 15-30 ms here) the timer skips to the
    tick after the next: a key pressed soon after waited 17-33 ms for nothing (pane switches back
    to back took 17 or 45 ms, median 39). Other frames keep the timer and its cap: without it,
    frames drawn as soon as wanted slowed the 10,000-id tree from 1.7 to 2.5 s. Textual has no
    public call to draw now; this is its timer's own."""

    def __init__(self, keys: KeysFirst, **kwargs) -> None:
        super().__init__(**kwargs)
        self.key_moment = keys

    async def _on_idle(self, event: events.Idle) -> None:
        keys = self.key_moment
        if (keys.frame_for_key and self.is_current and not self.app._batch_count
                and (self._layout_required or self._dirty_widgets or self._repaint_required or self._scroll_required)):
            keys.frame_for_key = False
            self._on_timer_update()
        # (then Screen's own handler: nothing left to draw, it runs the after-refresh callbacks)
