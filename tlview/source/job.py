"""`tlview --run -- COMMAND`: run a job with TORCH_TRACE set to a new folder, its TORCH_LOGS text
captured there, so tlview can follow it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time

from tlview.source.child_env import users_environment


class Job:
    def __init__(self, command: list[str], logs: str) -> None:
        self.command = command
        self.folder = tempfile.mkdtemp(prefix="tlview-run-")
        env = users_environment(TORCH_TRACE=self.folder, TORCH_LOGS=logs)
        # The job writes its own output into the folder it was given (tlview only reads it).
        self._stdout = open(os.path.join(self.folder, "stdout.txt"), "wb")
        self._stderr = open(os.path.join(self.folder, "torch_logs.txt"), "wb")
        try:
            # A group of its own: what the job starts (a shell wrapper's python, a launcher's
            # workers) ends with it (`sh -c 'python job.py'` left python running after `q`).
            self.process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                                            stdout=self._stdout, stderr=self._stderr,
                                            start_new_session=True)
        except OSError:
            self._close()
            shutil.rmtree(self.folder, ignore_errors=True)  # ours, and empty: nothing ran
            raise

    def poll(self) -> int | None:
        code = self.process.poll()
        if code is not None:
            self._close()
        return code

    def stop(self) -> None:
        """End the job and every process of its group (TERM, then KILL after 5 s)."""
        self._signal_group(signal.SIGTERM)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + 5
        while self._group_alive() and time.monotonic() < deadline:
            time.sleep(0.05)  # (the group's other processes have no handle to wait on)
        self._signal_group(signal.SIGKILL)
        if self.process.poll() is None:
            self.process.wait()
        self._close()

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass  # all gone

    def _group_alive(self) -> bool:
        try:
            os.killpg(self.process.pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def _close(self) -> None:
        for f in (self._stdout, self._stderr):
            if not f.closed:
                f.close()
