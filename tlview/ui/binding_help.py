"""A key binding that says what it does (its tooltip) and in which section of the help it
belongs: every widget's keys are made with `key`, so the footer, `?` and the palette agree."""

from __future__ import annotations

from textual.binding import Binding

# Sections of the help screen, by binding id (not Binding.group: the footer would merge the keys).
HELP_SECTIONS: dict[str, str] = {}


def key(keys: str, action: str, description: str, section: str, tooltip: str, id: str, **kwargs) -> Binding:
    HELP_SECTIONS[id] = section
    return Binding(keys, action, description, tooltip=tooltip, id=id, **kwargs)
