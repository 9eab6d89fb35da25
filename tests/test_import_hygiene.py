"""The core and the headless outputs never import Textual (checked in a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys

CORE_MODULES = [
    "tlview.cli", "tlview.model.index", "tlview.model.handlers", "tlview.model.filters",
    "tlview.source.trace_file", "tlview.source.text_log", "tlview.source.discover",
    "tlview.report.summary", "tlview.report.text_report",
]


def test_core_modules_do_not_import_textual():
    code = (
        "import sys\n"
        f"for name in {CORE_MODULES!r}: __import__(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_json_output_runs_without_textual(tmp_path):
    from conftest import CORPUS

    code = (
        "import sys, io, contextlib\n"
        "from tlview.cli import main\n"
        "buf = io.StringIO()\n"
        f"rc = main(['--json', {str(CORPUS / 'model' / 'trace')!r}])\n"
        "assert rc == 0\n"
        "print('textual' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
