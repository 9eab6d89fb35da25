"""An input bar at the bottom (the filter, the search) that Enter closes at once.

Textual runs an Enter binding's action after the keys already queued behind it on the input, so
`Enter n` typed together put the `n` into the bar. Here Enter closes the bar as it comes, and the
keys queued behind it go to the widget that has the focus then."""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class BarInput(Input):
    def action_submit(self) -> None:
        """Close the bar and give the focus back, now (subclasses say to what)."""
        raise NotImplementedError

    async def _on_key(self, event: events.Key) -> None:
        if not self.display:  # closed by an Enter earlier in the queue: the key is for the focus
            event.stop()
            event.prevent_default()
            self.app.post_message(events.Key(event.key, event.character))
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()
            return
        await super()._on_key(event)
