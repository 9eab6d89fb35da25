"""An ending signal that comes while the explorer starts (its pool already running, its app not yet)
ends it at once, with 128 + its number and no traceback: Python's own SIGINT raised
KeyboardInterrupt wherever the main thread was, and where it was swallowed the explorer came up
and stayed (about 1 full run in 3 under load failed test_terminal_session's signal while the pool
indexes)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tlview.ui import early_signals

STARTS = """
import os, signal, sys
from tlview.ui import early_signals
early_signals.catch()
os.kill(os.getpid(), {sig})
print("still running")
"""


@pytest.mark.parametrize("sig", early_signals.ENDING_SIGNALS)
def test_a_signal_while_the_explorer_starts_ends_it(sig):
    done = subprocess.run([sys.executable, "-c", STARTS.format(sig=int(sig))], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 128 + sig, done.stderr
    assert "still running" not in done.stdout and "Traceback" not in done.stderr


def test_signals_are_the_app_s_once_it_runs():
    assert signal.SIGINT in early_signals.ENDING_SIGNALS
    from tlview.ui import launch

    assert launch.ENDING_SIGNALS == early_signals.ENDING_SIGNALS
