"""The reading keys of the panes drawn as one text (Summary, Graph breaks, Run): those of the
payload views (j/k, g/G, space), so that every pane reads the same way."""

from __future__ import annotations

from tlview.ui.binding_help import key

SCROLL_BINDINGS = [
    key("j", "scroll_down", "Down", "Reading", "scroll down / up", "view-down", show=False),
    key("k", "scroll_up", "Up", "Reading", "scroll down / up", "view-up", show=False),
    key("g", "scroll_home", "Top", "Reading", "top / bottom of the payload", "view-top", show=False),
    key("G", "scroll_end", "Bottom", "Reading", "top / bottom of the payload", "view-bottom", show=False),
    key("space", "page_down", "Page down", "Reading", "page down", "view-page", show=False),
]
