"""What `y` and `e` do with the text the active pane shows: copy it (OSC 52, which works over
SSH) or open it in the user's pager or editor."""

from __future__ import annotations

import os
import subprocess
import tempfile

from textual.app import App

from tlview.ui.detail import DetailPane


class PayloadActions:
    """The actions on the active pane's text, for either app (which owns one)."""

    def __init__(self, app: App) -> None:
        self.app = app

    def copy(self) -> None:
        text = self.app.query_one(DetailPane).copy_text()
        if not text:
            self.app.notify("nothing to copy here", timeout=2)
            return
        self.app.copy_to_clipboard(text)
        self.app.notify(f"copied {text.count(chr(10)) + 1:,} lines (OSC 52)", timeout=2)

    def open_external(self) -> None:
        text = self.app.query_one(DetailPane).copy_text()
        if not text:
            self.app.notify("nothing to open here", timeout=2)
            return
        command = os.environ.get("PAGER") or os.environ.get("EDITOR") or "less"
        # In the system temp folder: tlview never writes next to the logs it reads.
        with tempfile.NamedTemporaryFile("w", suffix=".py", prefix="tlview-", delete=False) as f:
            f.write(text)
        try:
            with self.app.suspend():
                subprocess.call([*command.split(), f.name])
        except Exception as exc:  # noqa: BLE001 - a missing pager is a message, not a crash
            self.app.notify(f"could not run {command}: {exc}", severity="error", markup=False)
        finally:
            os.unlink(f.name)
