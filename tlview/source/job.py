"""`tlview --run -- COMMAND`: run a job with TORCH_TRACE set to a new folder, its TORCH_LOGS text
captured there, so tlview can follow it."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

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
            self.process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                                            stdout=self._stdout, stderr=self._stderr)
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
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._close()

    def _close(self) -> None:
        for f in (self._stdout, self._stderr):
            if not f.closed:
                f.close()
