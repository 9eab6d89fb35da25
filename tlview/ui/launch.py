"""Starting the explorer: on a path, or live (`--follow PATH`, `--follow -`, `--demo`, `--run`)."""

from __future__ import annotations

import shutil
import tempfile

from tlview.model.filters import Filter
from tlview.ui.app import TlviewApp


def run_app(path: str, flt: Filter, latest: bool = False) -> int:
    app = TlviewApp(path, flt, latest=latest)
    app.run()
    return app.return_code or 0


def run_live(flt: Filter, path: str | None = None, demo: bool = False, run: list[str] | None = None,
             poll: bool = False, logs: str = "") -> int:
    """`--follow PATH`, `--follow -` (stdin), `--demo` and `--run -- COMMAND`."""
    kind = None
    name = None  # what the status line calls the input
    cleanup = []
    job = None
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
        from tlview.source.discover import TEXT
        from tlview.source.stdin_log import StdinCopy

        copy = StdinCopy()
        path, kind, name = copy.path, TEXT, "stdin"
        cleanup.append(copy.remove)
        ended = copy.done.is_set
    app = TlviewApp(path, flt, follow=True, poll=poll, kind=kind, job=job, input_ended=ended, name=name)
    try:
        app.run()
    finally:
        for step in cleanup:
            step()
    if job is not None:
        print(f"tlview: the job's logs are in {job.folder}")
    return app.return_code or 0
