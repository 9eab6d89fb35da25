"""What the explorer and the compare view share (tlview/ui/logs_app.py LogsApp)."""

from __future__ import annotations

import pytest

from tlview.ui.app import TlviewApp
from tlview.ui.compare_app import CompareApp
from tlview.ui.logs_app import LogsApp


@pytest.mark.parametrize("app", [TlviewApp, CompareApp])
def test_a_shared_handler_is_not_written_again(app):
    """Textual runs the `on_*` handler of every class along the MRO: one written again in a
    subclass would say each toast twice, or apply each filter twice."""
    shared = {name for name in vars(LogsApp) if name.startswith("on_")}
    assert shared, "LogsApp handles the footer's, the filter bar's and the search's messages"
    assert not shared & set(vars(app))


@pytest.mark.parametrize("app", [TlviewApp, CompareApp])
def test_each_app_says_what_logsapp_leaves_to_it(app):
    for name in ("index", "apply_filter", "action_jump"):
        assert name in vars(app), f"{app.__name__} lacks its own {name}"
