"""tlview never creates, writes, locks or deletes anything in the folder it reads."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from conftest import CORPUS, SIZE, press, ready, run_cli, until

from tlview.ui.app import TlviewApp


def _state(folder) -> dict:
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.stat(path)
            digest = hashlib.md5(Path(path).read_bytes()).hexdigest() if os.path.isfile(path) else "dir"
            out[os.path.relpath(path, folder)] = (digest, st.st_size, st.st_mtime_ns, st.st_mode)
    return out


async def test_headless_and_tui_leave_the_folder_as_it_was(tmp_path):
    folder = tmp_path / "scenario"
    shutil.copytree(CORPUS / "graph_breaks", folder)
    for root, dirs, files in os.walk(folder):
        for name in files:
            os.chmod(os.path.join(root, name), 0o444)
        os.chmod(root, 0o555)  # no write permission anywhere
    before = _state(folder)
    try:
        assert run_cli("--json", str(folder))[0] == 0
        assert run_cli("--report", str(folder))[0] == 0
        app = TlviewApp(str(folder))
        async with app.run_test(size=SIZE) as pilot:
            await ready(app, pilot)
            for key in ("2", "3", "4", "5", "6", "7", "8", "9", "b", "r"):
                await press(pilot, key)
        live = TlviewApp(str(folder), follow=True)
        async with live.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: live.caught_up and len(live.model.compile_entries()) == 15)
        # a slice's timer that fires once the app has ended finds no views, and says nothing (under
        # a CPU hog it fired after the screen was gone: NoMatches ended the test)
        live._views_next = True
        live._next_slice()
        after = _state(folder)
    finally:
        for root, dirs, files in os.walk(folder):
            os.chmod(root, 0o755)
    assert after == before
