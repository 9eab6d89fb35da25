"""An input bar at the bottom (the filter, the search) that Enter closes at once.

Textual runs an Enter binding's action after the keys already queued behind it on the input, so
`Enter n` typed together put the `n` into the bar. Here Enter closes the bar as it comes, and the
keys queued behind it go to the widget that has the focus then."""

from __future__ import annotations

from textual import events
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input


class BarInput(Input):
    # Input sets its virtual size to its text's width on every key, and Widget's virtual_size asks
    # for a new layout of the whole screen when it changes: a full render per character typed
    # (measured: 2 of them per key, 15 ms each). A bar's size is fixed by the CSS; only the
    # input itself (its horizontal scroll) reads the virtual size, so a repaint does.
    virtual_size = Reactive(Size(0, 0), layout=False)

    def action_submit(self) -> None:  # type: ignore[override]  # sync, not Input's async: _on_key calls it as Enter comes
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
