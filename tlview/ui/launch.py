"""Starting the explorer: on a path, or live (`--follow PATH`, `--follow -`, `--demo`, `--run`).

A signal that ends tlview (SIGTERM from `kill` or a job scheduler, SIGHUP from a closed SSH
session or terminal, SIGINT from `kill -INT`, SIGQUIT from Ctrl+\\) ends the app as `q` does, so
the terminal is given back: the alternate screen left, mouse reporting off, the cursor shown.
Python's default would leave the shell in the alternate screen with the mouse still reporting.
If that clean exit is not done within GRACE seconds (a terminal that takes no more output, a
thread stuck in its work), tlview ends anyway: the pool's processes killed, the terminal's modes
reset where that cannot block, exit 128 + N. Ctrl+Z and `kill -TSTP` suspend it (driver.py).
"""

from __future__ import annotations

import asyncio
import os
import select
import shutil
import signal
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

from textual.app import App
from textual.driver import Driver

from tlview.index.pool import stop_pools
from tlview.ui import early_signals
from tlview.ui.app import TlviewApp
from tlview.views.filters import Filter

ENDING_SIGNALS = early_signals.ENDING_SIGNALS
# Seconds an ending signal leaves the app to end cleanly (it takes about 0.5 s while a big trace
# is indexed): tlview must be gone within 2 s. TLVIEW_GRACE overrides it (tests).
GRACE = float(os.environ.get("TLVIEW_GRACE", "").strip() or 1.2)
# What the driver's stop_application_mode writes: mouse reporting (pixels too), bracketed paste,
# in-band resize and focus events off, line wrap on, the keyboard protocol popped, the main
# screen, the cursor shown.
RESET = ("\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?1016l\x1b[?2004l\x1b[?2048l\x1b[?7h\x1b[<u"
         "\x1b[?1049l\x1b[?25h\x1b[?1004l")


def run_app(path: str, flt: Filter, latest: bool = False, source_roots=()) -> int:
    return run_until_signalled(TlviewApp(path, flt, latest=latest, source_roots=source_roots))


def run_compare(before: str, after: str, latest: bool = False, flt: Filter | None = None) -> int:
    from tlview.ui.compare_app import CompareApp

    return run_until_signalled(CompareApp(before, after, latest, flt))


# While a thread works (indexing, a pane's loader), the UI thread waits this long at most for
# Python's lock each time it wants it back (Python's default: 5 ms), after every select and every
# write to the terminal. Keys pressed while 10,000 compile ids came in: median 75-92 ms, against
# 105-126 ms at 5 ms (bench/ranks.py --explorer).
UI_SWITCH_INTERVAL = 0.001


def run_until_signalled(app: App[int]) -> int:
    """Run the app (the explorer or the compare view); a signal in ENDING_SIGNALS makes it exit
    cleanly with 128 + its number (or past GRACE, ends it)."""
    driver: type[Driver] | None
    try:
        from tlview.ui.driver import TlviewDriver

        driver = TlviewDriver
    except ImportError:  # no termios (Windows): Textual's own driver
        driver = None
    if driver is not None and app.driver_class is driver.__base__:
        app.driver_class = driver  # (not one chosen with TEXTUAL_DRIVER)
    told, tell = os.pipe()  # the signal's number goes to the thread that keeps the deadline
    threading.Thread(target=_end_after_grace, args=(told, _terminal_modes()), daemon=True,
                     name="tlview-deadline").start()
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(UI_SWITCH_INTERVAL)
    try:
        return asyncio.run(_run(app, tell))
    finally:
        sys.setswitchinterval(switch_interval)
        # The app and its threads are done (the job of --run gets its own time to end, after):
        # the thread reads the end of the pipe and leaves.
        os.close(tell)


class _UnwaitedExecutor(ThreadPoolExecutor):
    """The loop's default executor, where Textual runs thread workers (a pane's loader). At its
    end asyncio.run waits for them: a Run pane of 20,000 ranks still loading held `q` for 2.3 s.
    They are left to the process's end instead (cli.entry ends it at once)."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=False, cancel_futures=True)


async def _run(app: App[int], tell: int) -> int:
    loop = asyncio.get_running_loop()
    loop.set_default_executor(_UnwaitedExecutor())
    received: list[int] = []

    def on_signal(sig: int, _frame) -> None:
        # A Python handler, not loop.add_signal_handler: it runs in the main thread even while the
        # loop is stuck (waiting on a lock lets handlers run), so the deadline is always set. It
        # may run inside any code: os.write and call_soon_threadsafe take no lock.
        if not received:
            received.append(sig)
            os.write(tell, bytes([sig]))
            early_signals.ending.set()
            # A job in the background (`tlview ... &`, or `bg`) that ends: no output to the
            # terminal, nor a change of its modes, may stop it on its way out (SIGTTOU, SIGTTIN).
            for stop in (signal.SIGTTOU, signal.SIGTTIN):
                signal.signal(stop, signal.SIG_IGN)
        loop.call_soon_threadsafe(lambda: app.exit(return_code=128 + sig))  # the shell's "ended by N"

    early_signals.ending.clear()  # (an app before this one, in the same process, may have ended)
    previous = {}
    for sig in ENDING_SIGNALS:
        try:
            previous[sig] = signal.signal(sig, on_signal)
        except (ValueError, OSError):
            pass  # not the main thread: Python's defaults stay
    if previous:  # (and the stops on_signal ignores)
        previous.update({stop: handler for stop in (signal.SIGTTOU, signal.SIGTTIN)
                         if (handler := signal.getsignal(stop)) is not None})
    try:
        await app.run_async()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 + received[0] if received else app.return_code or 0


def _terminal_modes():
    """The terminal's modes before the app (None: no terminal), to put back at a forced end."""
    try:
        import termios

        return termios.tcgetattr(sys.__stdin__.fileno())
    except Exception:  # noqa: BLE001 - no termios, no stdin, not a terminal
        return None


def _end_after_grace(told: int, modes) -> None:
    """(a thread) Once told a signal's number, end the process if the app is not done in GRACE
    seconds: the main thread may be stuck on a write to a terminal that takes no more, or wait
    for a thread stuck in its work."""
    sig = os.read(told, 1)
    if sig and not select.select([told], [], [], GRACE)[0]:
        last_words = threading.Thread(target=_leave_things_clean, args=(modes,), daemon=True)
        last_words.start()
        last_words.join(0.3)  # (nothing there should block; if it does, leave anyway)
        os._exit(128 + sig[0])
    os.close(told)


def _leave_things_clean(modes) -> None:
    stop_pools()  # else they index on, alone, for seconds
    try:
        fd = os.open("/dev/tty", os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return  # the terminal is gone
    try:
        if os.tcgetpgrp(fd) != os.getpgrp():
            return  # in the background: the terminal is another's (and SIGTTOU would stop tlview)
        if modes is not None:
            import termios

            termios.tcsetattr(fd, termios.TCSANOW, modes)
        os.write(fd, RESET.encode())  # (a terminal that takes no more: EAGAIN)
    except Exception:  # noqa: BLE001, S110 - a full or dead terminal: nothing more to do for it
        pass
    finally:
        os.close(fd)


def run_live(flt: Filter, path: str | None = None, demo: bool = False, run: list[str] | None = None,
             poll: bool = False, logs: str = "") -> int:
    """`--follow PATH`, `--follow -` (stdin), `--demo` and `--run -- COMMAND`."""
    name = None  # what the status line calls the input
    cleanup = []
    job = None
    copy = None  # stdin's copy
    ended = None  # when the input will not grow any more
    if demo:
        from tlview.source.replay import Replay

        path = folder = tempfile.mkdtemp(prefix="tlview-demo-")
        replay = Replay(folder).start()
        name = "demo"
        cleanup += [replay.stop, lambda: shutil.rmtree(folder, ignore_errors=True)]
    elif run is not None:
        from tlview.source.job import Job

        try:
            job = Job(run, logs)
        except OSError as exc:
            from tlview.source.discover import NoLogsError

            raise NoLogsError(f"cannot run {run[0]}: {exc.strerror or exc}") from None
        path, name = job.folder, " ".join(run)[:60]
        cleanup.append(job.stop)
        ended = lambda: job.process.poll() is not None
    elif path == "-":
        from tlview.source.stdin_log import StdinCopy

        copy = StdinCopy()
        path, name = copy.path, "stdin"
        cleanup.append(copy.remove)
        ended = copy.done.is_set
    assert path is not None  # --follow PATH, or made above: --demo's folder, --run's, stdin's copy
    app = TlviewApp(path, flt, follow=True, poll=poll, job=job, input_ended=ended, name=name,
                    private_path=copy is not None,
                    nothing_came=(lambda: copy.why_nothing() is not None) if copy is not None else None)
    if copy is not None:
        # The pipe's first line tells trace from text; the follower takes the copy as that kind
        # (it is empty until then: the follower waits).
        live = app.live
        assert live is not None  # follow=True: the app made its LiveIndex
        copy.start(on_kind=lambda told: setattr(live.follower, "kind", told))
    try:
        code = run_until_signalled(app)
    finally:
        for step in cleanup:
            step()
    if job is not None:
        print(f"tlview: the job's logs are in {job.folder}")
    if copy is not None and app.nothing_came_in:
        from tlview.source.discover import NoLogsError

        raise NoLogsError(copy.why_nothing())
    return code
