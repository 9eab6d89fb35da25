"""What `y` and `e` do with the text the active pane shows: copy it (OSC 52, which works over
SSH) or open it in the user's pager or editor."""

from __future__ import annotations

import os
import subprocess
import tempfile


class PayloadActions:
    """Mixed into the app: the actions on the active pane's text."""

    def action_copy_payload(self) -> None:
        text = self.detail.copy_text()
        if not text:
            self.notify("nothing to copy here", timeout=2)
            return
        self.copy_to_clipboard(text)
        self.notify(f"copied {text.count(chr(10)) + 1:,} lines (OSC 52)", timeout=2)

    def action_open_external(self) -> None:
        text = self.detail.copy_text()
        if not text:
            self.notify("nothing to open here", timeout=2)
            return
        command = os.environ.get("PAGER") or os.environ.get("EDITOR") or "less"
        # In the system temp folder: tlview never writes next to the logs it reads.
        with tempfile.NamedTemporaryFile("w", suffix=".py", prefix="tlview-", delete=False) as f:
            f.write(text)
        try:
            with self.suspend():
                subprocess.call([*command.split(), f.name])
        except Exception as exc:  # noqa: BLE001 - a missing pager is a message, not a crash
            self.notify(f"could not run {command}: {exc}", severity="error", markup=False)
        finally:
            os.unlink(f.name)
