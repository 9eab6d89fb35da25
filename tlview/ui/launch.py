"""Starting the explorer: on a path, or live (`--follow PATH`, `--follow -`, `--demo`, `--run`).

A signal that ends tlview (SIGTERM from `kill` or a job scheduler, SIGHUP from a closed SSH
session or terminal, SIGINT from `kill -INT`, SIGQUIT from Ctrl+\\) ends the app as `q` does, so
the terminal is given back: the alternate screen left, mouse reporting off, the cursor shown.
Python's default would leave the shell in the alternate screen with the mouse still reporting.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import tempfile

from tlview.model.filters import Filter
from tlview.ui.app import TlviewApp

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)


def run_app(path: str, flt: Filter, latest: bool = False) -> int:
    return run_until_signalled(TlviewApp(path, flt, latest=latest))


def run_compare(before: str, after: str, latest: bool = False, keep=None) -> int:
    from tlview.ui.compare_app import CompareApp

    return run_until_signalled(CompareApp(before, after, latest, keep))


def run_until_signalled(app: TlviewApp) -> int:
    """Run the app; a signal in ENDING_SIGNALS makes it exit cleanly with 128 + its number."""
    return asyncio.run(_run(app))


async def _run(app: TlviewApp) -> int:
    loop = asyncio.get_running_loop()
    received: list[int] = []

    def on_signal(sig: int) -> None:
        received.append(sig)
        app.exit(return_code=128 + sig)  # the shell's convention for "ended by signal N"

    installed = []
    for sig in ENDING_SIGNALS:
        try:
            loop.add_signal_handler(sig, on_signal, sig)
            installed.append(sig)
        except (ValueError, RuntimeError, NotImplementedError):
            pass  # not the main thread, or no signals here: Python's defaults stay
    try:
        await app.run_async()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
    return 128 + received[0] if received else app.return_code or 0


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

        path = tempfile.mkdtemp(prefix="tlview-demo-")
        replay = Replay(path).start()
        name = "demo"
        cleanup += [replay.stop, lambda: shutil.rmtree(path, ignore_errors=True)]
    elif run is not None:
        from tlview.source.job import Job

        try:
            job = Job(run, logs)
        except OSError as exc:
            from tlview.source.discover import NoLogsError

            raise NoLogsError(f"cannot run {run[0]}: {exc.strerror or exc}") from None
        path, name = job.folder, " ".join(run)[:60]
        cleanup.append(job.stop)
        ended = lambda: job.process.poll() is not None  # noqa: E731
    elif path == "-":
        from tlview.source.stdin_log import StdinCopy

        copy = StdinCopy()
        path, name = copy.path, "stdin"
        cleanup.append(copy.remove)
        ended = copy.done.is_set
    app = TlviewApp(path, flt, follow=True, poll=poll, job=job, input_ended=ended, name=name,
                    private_path=copy is not None,
                    nothing_came=(lambda: copy.why_nothing() is not None) if copy is not None else None)
    if copy is not None:
        # The pipe's first line tells trace from text; the follower takes the copy as that kind
        # (it is empty until then: the follower waits).
        copy.start(on_kind=lambda told: setattr(app.live.follower, "kind", told))
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
