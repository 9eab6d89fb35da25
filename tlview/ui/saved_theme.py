"""The theme the user chose (the palette's Theme command), kept for the next start as harlequin
and posting keep theirs: in the user's config folder (the XDG rule: $XDG_CONFIG_HOME/tlview, else
~/.config/tlview), never in the folder being read."""

from __future__ import annotations

import json
import os
from pathlib import Path


def settings_path() -> Path:
    """`$XDG_CONFIG_HOME/tlview/settings.json`; a relative XDG_CONFIG_HOME is ignored (XDG's rule)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "tlview" / "settings.json"


def saved_theme() -> str | None:
    """The theme saved at an earlier start, or None (none saved, or not readable: the default)."""
    try:
        theme = json.loads(settings_path().read_text(encoding="utf-8")).get("theme")
    except (OSError, ValueError, AttributeError):
        return None
    return theme if isinstance(theme, str) else None


def save_theme(theme: str) -> str | None:
    """Keep `theme` for the next start; the reason it could not be, else None."""
    path = settings_path()
    try:
        try:
            settings = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            settings = {}
        if not isinstance(settings, dict):
            settings = {}
        settings["theme"] = theme
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        return f"{path}: {error.strerror or error}"
    return None
