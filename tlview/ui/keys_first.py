"""Keys first: for a moment after a key or a click, the explorer's other work steps back.

Python runs one thread at a time. At 20,000 ranks a key pressed while the index filled in
waited its turn behind the indexing thread and the slices that show what it read: 150-320 ms on
2 cores. For KEYS_FIRST after a key, the slices wait (app.refresh_views) and the indexing thread
sleeps between files and parts (Indexer.defer), so the key is handled and drawn first.
"""

from __future__ import annotations

import time

from textual import events

KEYS_FIRST = 0.15  # seconds
_USER_EVENTS = (events.Key, events.Click, events.MouseScrollDown, events.MouseScrollUp)


class KeysFirst:
    """Mixed into the App: it sees every event first."""

    key_at = 0.0  # time.monotonic() of the last key or click

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, _USER_EVENTS):
            self.key_at = time.monotonic()
        await super().on_event(event)

    def keys_first(self) -> bool:
        """A key came a moment ago: showing it comes before showing or reading more."""
        return time.monotonic() - self.key_at < KEYS_FIRST
