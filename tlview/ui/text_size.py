"""A scrolling view's text size, with its scrollbars decided at once, and updated only when a size
changes."""

from __future__ import annotations

from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.widgets import OptionList


def size_the_text(view: ScrollView, size: Size) -> None:
    """Set `view`'s virtual size, and whether it needs scrollbars now: left to the layout that
    follows, the text was drawn at full width, then a frame later (60 ms on a 10 MB trace) drawn
    again one column narrower, with the scrollbar, and its thumb a frame after that. Textual has
    no public call for it."""
    view.virtual_size = size
    view._scroll_update(size)  # (what the layout does: scrollbars shown, and their thumbs sized)


def make_scrollbars(view: ScrollView) -> None:
    """Textual makes a view's scrollbars the first time it shows them, and starts them then: they
    were drawn in two frames of their own after the text (147 and 158 ms after the key that first
    opened the Guards pane on a 10 MB trace, the text at 111 ms). Made while the app is idle, they
    are ready when the text comes."""
    for make in (lambda: view.vertical_scrollbar, lambda: view.horizontal_scrollbar,
                 lambda: view.scrollbar_corner):
        make()


class SizesSeen:
    """A scroll view's scrollbars updated when a size changed, not at every layout of the screen
    (the tree, the payload and report views, the option lists each own one).

    Textual's ScrollView compares the virtual size the compositor gives it (its region) with its
    own (its lines), which differ at every layout: it updated its scrollbars, and they were drawn
    again, at each whole-screen layout (a pane switch lays out the screen), 1.3-1.9 ms a
    scrollbar, in the frame after the switch, which the next key waited for. Now only when its
    size, its container's or its own virtual size changed since the last time: the view's
    `_size_updated` asks `changed` first."""

    def __init__(self) -> None:
        self._seen: tuple[Size, Size, Size] | None = None

    def changed(self, size: Size, container_size: Size, virtual_size: Size) -> bool:
        seen = (size, container_size, virtual_size)
        if seen == self._seen:
            return False
        self._seen = seen
        return True


class SteadyOptionList(OptionList):
    """An OptionList drawn again on a resize only when its size changed: Textual's clears its
    caches at every Resize, and a pane shown again gets one (its list the same size), so its
    list was drawn again in a frame of its own after the pane's first, which a key pressed next
    waited for."""

    _size_drawn: Size | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._sizes_seen = SizesSeen()

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return (self._sizes_seen.changed(size, container_size, self.virtual_size)
                and super()._size_updated(size, virtual_size, container_size, layout))

    def _on_resize(self, event: events.Resize) -> None:  # type: ignore[override]  # (Textual passes the event)
        if event.size == self._size_drawn:
            event.prevent_default()  # (OptionList's own handler, which clears its caches)
        self._size_drawn = event.size
