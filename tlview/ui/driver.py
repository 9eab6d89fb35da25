"""The terminal as tlview drives it: Textual's Linux driver, made safe for a terminal that goes
away and for a suspend (Ctrl+Z, `kill -TSTP`) and `fg`.

- Suspending is Textual's own: its SIGTSTP handler gives the terminal back (the main screen, the
  cursor shown, mouse reporting off) and stops the process. (In raw mode Ctrl+Z is a key, not a
  signal: keys.py binds it to App.action_suspend_process, which sends the SIGTSTP.)
- SIGCONT resumes only a process that suspended itself that way, and redraws the whole screen
  at once: Textual restarts application mode on an empty alternate screen, then paints only what
  changes next (the screen stayed blank until a key was pressed).
- Any other SIGCONT is ignored. The kernel sends one with the SIGHUP of a terminal that closed
  (an SSH drop, `tmux kill-server`): Textual restarted application mode on the dead terminal,
  its new writer thread died on EIO, and the 31st write blocked the app for good.
- Output to a lost terminal is dropped (EIO): Textual's writer thread would die of it, and then
  every write waits for a thread that is gone.
- In the background (`tlview ... &`, or `bg`) the terminal is another's: ending, tlview leaves its
  screen and modes alone (Textual's restore stopped it on SIGTTOU there, for good), and once an
  ending signal came (`kill %1`: SIGTERM, then SIGCONT) a SIGCONT resumes nothing.
- A terminal that hung up with no SIGHUP to tlview ends it as the SIGHUP would. The kernel sends
  SIGHUP only to the terminal's foreground job, and to an orphaned job that is stopped then; a
  job in the background whose shell left first (`& disown`, a script's) got none, and Textual's
  input thread read the hung-up terminal's endless end of input again and again: a tlview left
  so by a test ran at 92% of a core for 69 minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import termios
import threading

from textual.drivers.linux_driver import LinuxDriver

from tlview.ui import early_signals
from tlview.ui.keys_first import is_user_input


class _Output:
    """The file Textual's writer thread writes the screen to: an error (EIO once the terminal is
    gone) drops this write and every later one instead of ending the thread."""

    def __init__(self, file) -> None:
        self._file = file
        self.lost = False

    def write(self, text: str) -> None:
        if not self.lost:
            try:
                self._file.write(text)
            except (OSError, ValueError):
                self.lost = True

    def flush(self) -> None:
        if not self.lost:
            try:
                self._file.flush()
            except (OSError, ValueError):
                self.lost = True

    def fileno(self) -> int:
        return self._file.fileno()


HANG_UP_CHECK = 1.0  # seconds between two looks at whether the terminal hung up (a tcgetattr)


class TlviewDriver(LinuxDriver):
    def __init__(self, app, **kwargs) -> None:
        super().__init__(app, **kwargs)
        # (Textual declares a TextIOWrapper; its writer thread only writes, flushes and asks the fileno)
        self._file = _Output(self._file)  # type: ignore[assignment]  # duck-typed file, see above
        self._stopped = False  # suspended by our SIGTSTP handler, not resumed yet
        # (not Driver's own `_loop`, which it posts the input's messages to)
        self._redraw_loop: asyncio.AbstractEventLoop | None = None
        self._watch_ended: threading.Event | None = None  # set: the hang-up watch ends (application mode did)

    def start_application_mode(self) -> None:
        self._redraw_loop = asyncio.get_running_loop()  # for the redraw after a resume (signal handler)
        super().start_application_mode()
        if self.input_tty and self._watch_ended is None:
            self._watch_ended = threading.Event()
            threading.Thread(target=self._end_on_hang_up, args=(self._watch_ended,), daemon=True,
                             name="tlview-hang-up").start()

    def _end_on_hang_up(self, ended: threading.Event) -> None:
        """A terminal that hung up ends tlview as its SIGHUP would (the module's docstring): the
        app's handler of ending signals ends it cleanly, exit 128 + SIGHUP."""
        while not ended.wait(HANG_UP_CHECK) and not early_signals.ending.is_set():
            if not self._terminal_usable():
                os.kill(os.getpid(), signal.SIGHUP)
                return

    def process_message(self, message) -> None:
        # (the input thread) a key comes first from the moment it is read: keys_first.py
        if is_user_input(message) and hasattr(self._app, "user_input"):
            self._app.user_input()
        super().process_message(message)

    def write(self, data: str) -> None:
        # While suspended (or never resumed: the terminal went away meanwhile) no writer thread
        # runs: a write would wait on its full queue for good.
        if self._writer_thread is not None and self._writer_thread.is_alive():
            super().write(data)

    def _sigtstp_application(self, *args) -> None:
        self._stopped = True
        super()._sigtstp_application(*args)

    def stop_application_mode(self) -> None:
        if self._watch_ended is not None:  # (a suspend, or the end: a resume starts another)
            self._watch_ended.set()
            self._watch_ended = None
        if self._in_background():
            self.disable_input()  # (the screen and modes it set were given back when it stopped)
        else:
            super().stop_application_mode()

    def disable_input(self) -> None:
        if not self._in_background():
            super().disable_input()
            return
        # Textual's, less what touches the terminal (mouse reporting off, its input flushed)
        if self.exit_event.is_set():
            return
        with contextlib.suppress(ValueError):  # (not the main thread)
            signal.signal(signal.SIGWINCH, signal.SIG_DFL)
        self.exit_event.set()
        if self._key_thread is not None:
            self._key_thread.join()
        self.exit_event.clear()

    def _sigcont_application(self, *_) -> None:
        if early_signals.ending.is_set():
            return  # ending: nothing to resume, nor to stop again for (`kill %1` sends SIGCONT)
        if not self._stopped or not self._terminal_usable():
            return  # no suspend of ours to end, or the terminal is gone: the SIGHUP ends tlview
        if not self._auto_restart:
            self._stopped = False
            return  # inside App.suspend() (the pager): it restarts application mode itself
        if self._in_background():
            # `bg`: a job that draws on the terminal waits for `fg`, stopped (Textual would stop
            # it halfway through its start); `fg`'s SIGCONT runs this again.
            os.kill(os.getpid(), signal.SIGSTOP)
            return
        self._stopped = False
        self.resume_application_mode()
        if self._redraw_loop is not None:
            self._redraw_loop.call_soon_threadsafe(self._redraw)

    def _redraw(self) -> None:
        self._app.refresh(repaint=True, layout=True)

    def _in_background(self) -> bool:
        try:
            return self.input_tty and os.tcgetpgrp(self.fileno) != os.getpgrp()
        except OSError:
            return False

    def _terminal_usable(self) -> bool:
        if not self.input_tty:
            return True  # (nothing to ask)
        try:
            termios.tcgetattr(self.fileno)
        except (termios.error, OSError):
            return False
        return True
