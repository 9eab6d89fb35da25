"""The theme chosen is the theme of the next start (#48), kept in the user's config folder
($XDG_CONFIG_HOME/tlview), never in the folder being read; a folder that cannot be written is
said, and the app goes on."""

from __future__ import annotations

import shutil

from conftest import CORPUS, until

from tlview.ui.app import TlviewApp
from tlview.ui.saved_theme import saved_theme, settings_path


async def _choose_theme(folder: str, theme: str | None) -> tuple[str, TlviewApp]:
    """Start the explorer on `folder`, choose `theme` (None: none); the theme it started in."""
    app = TlviewApp(folder)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.tree.cursor_node is not None, what="the tree")
        started = app.theme
        if theme is not None:
            app.theme = theme
            await pilot.pause()
    return started, app


async def test_the_chosen_theme_is_the_next_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    run = tmp_path / "run"
    shutil.copytree(CORPUS / "model" / "trace", run)
    before = sorted(p.name for p in run.rglob("*"))
    started, _ = await _choose_theme(str(run), None)
    assert saved_theme() is None  # starting alone writes nothing
    assert started != "textual-light"
    await _choose_theme(str(run), "textual-light")
    assert settings_path() == tmp_path / "config" / "tlview" / "settings.json"
    assert saved_theme() == "textual-light"
    started, _ = await _choose_theme(str(run), None)
    assert started == "textual-light"
    assert sorted(p.name for p in run.rglob("*")) == before  # nothing in the folder being read


async def test_a_config_folder_that_cannot_be_written_is_said(tmp_path, monkeypatch):
    blocker = tmp_path / "config"
    blocker.write_text("a file where the folder would be")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocker))
    _, app = await _choose_theme(str(CORPUS / "model" / "trace"), "textual-light")
    said = [s for s in app.said if s.title == "theme"]
    assert said and "not kept" in said[0].message and str(blocker) in said[0].message
    assert app.return_code in (None, 0)


def test_a_relative_xdg_config_home_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/config")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert settings_path() == tmp_path / ".config" / "tlview" / "settings.json"
