"""An ending signal (SIGTERM, SIGHUP, SIGINT, SIGQUIT) that comes while the explorer starts, before
its app runs and takes them (launch._run): the explorer ends at once, with its pool, and 128 + the
signal's number, as the app would (the terminal is not the app's yet: nothing to give back).

The explorer starts its indexing pool before Textual is imported (index/early_part.py,
parallel.start_early). Python's own SIGINT raised KeyboardInterrupt wherever the main thread was
then, and where something swallowed it the explorer came up and stayed (test_terminal_session's
signal while the pool indexes failed about 1 full run in 3 under load). No Textual here: it is
imported before it.
"""

from __future__ import annotations

import os
import signal
import threading

from tlview.index.pool import stop_pools

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)
# Set once the app got an ending signal (launch._run): from then on nothing stops tlview or
# resumes its screen (`kill %1` sends a stopped job SIGTERM, then SIGCONT: driver.py).
ending = threading.Event()


def _end(sig: int, _frame) -> None:
    stop_pools()  # (else they index on, alone, for seconds)
    os._exit(128 + sig)


def catch() -> None:
    """From now until the app takes them, an ending signal ends the explorer at once."""
    for sig in ENDING_SIGNALS:
        try:
            signal.signal(sig, _end)
        except (ValueError, OSError):
            pass  # not the main thread: Python's defaults stay
