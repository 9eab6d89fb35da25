"""`tlview --run -- COMMAND`: run a job with TORCH_TRACE set to a new folder, its TORCH_LOGS text
captured there, so tlview can follow it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from tlview.source.child_env import users_environment


class Job:
    def __init__(self, command: list[str], logs: str) -> None:
        self.command = command
        self.folder = tempfile.mkdtemp(prefix="tlview-run-")
        env = users_environment(TORCH_TRACE=self.folder, TORCH_LOGS=logs)
        # Every process of the job has this in its environment (unless it changed it): a
        # daemon that left the group (double fork + setsid) is known by it once it is ours.
        self._mark = b"TORCH_TRACE=" + os.fsencode(self.folder)
        # Linux: the job's orphans (that daemon) come to tlview, not to init, while it runs.
        self._was_reaper = _is_child_subreaper()  # (then it stays one after the job)
        self._reaper = self._was_reaper or _child_subreaper(True)
        # The job writes its own output into the folder it was given (tlview only reads it).
        # (open while the job runs, closed by _close: no `with`)
        self._stdout = open(os.path.join(self.folder, "stdout.txt"), "wb")  # noqa: SIM115
        self._stderr = open(os.path.join(self.folder, "torch_logs.txt"), "wb")  # noqa: SIM115
        try:
            # A group of its own: what the job starts (a shell wrapper's python, a launcher's
            # workers) ends with it (`sh -c 'python job.py'` left python running after `q`).
            self.process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                                            stdout=self._stdout, stderr=self._stderr,
                                            start_new_session=True)
        except OSError:
            self._close()
            if self._reaper and not self._was_reaper:
                _child_subreaper(False)
            shutil.rmtree(self.folder, ignore_errors=True)  # ours, and empty: nothing ran
            raise

    def poll(self) -> int | None:
        code = self.process.poll()
        if code is not None:
            self._close()
        return code

    def stop(self) -> None:
        """End the job and every process of its group (TERM, then KILL after 5 s), and on Linux
        the processes it started that left its group (a `setsid` daemon): they lived on."""
        escaped = self._escaped()
        self._signal_group(signal.SIGTERM)
        _signal_each(escaped, signal.SIGTERM)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + 5
        while ((self._group_alive() or any(_alive(pid) for pid in escaped))
               and time.monotonic() < deadline):
            time.sleep(0.05)  # (the group's other processes have no handle to wait on)
            self._reap(escaped)
        self._signal_group(signal.SIGKILL)
        if self.process.poll() is None:
            self.process.wait()
        if self._reaper:
            killed: set[int] = set()
            deadline = time.monotonic() + 5
            # (each round's orphans are the next round's: a tree, level by level; one that
            # cannot be killed, a setuid program's, is tried once)
            while (escaped := self._escaped() - killed) and time.monotonic() < deadline:
                _signal_each(escaped, signal.SIGKILL)
                killed |= escaped
                while any(_alive(pid) for pid in escaped) and time.monotonic() < deadline:
                    time.sleep(0.01)
                self._reap(escaped)
            if not self._was_reaper:
                _child_subreaper(False)
            self._reaper = False
        self._close()

    def _escaped(self) -> set[int]:
        """The job's processes now, outside its own (its pid's descendants, and orphans given
        to tlview that have the job's environment), and all below them; Linux only."""
        if not self._reaper:
            return set()
        parents = _parents()
        me, job = os.getpid(), self.process.pid
        roots = {job} if self.process.returncode is None else set()
        roots |= {pid for pid, ppid in parents.items() if ppid == me and pid != job and self._marked(pid)}
        found, level = set(), roots
        while level:
            found |= level
            level = {pid for pid, ppid in parents.items() if ppid in level} - found
        return found - {job, me}

    def _marked(self, pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                return self._mark in f.read().split(b"\0")
        except OSError:
            return False

    @staticmethod
    def _reap(pids: set[int]) -> None:
        """Wait for those that ended and became tlview's children (orphans come to a subreaper)."""
        for pid in pids:
            try:
                os.waitpid(pid, os.WNOHANG)
            except (ChildProcessError, OSError):
                pass  # not ours (its parent is alive), or already waited for

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


_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def _child_subreaper(on: bool) -> bool:
    """Make tlview the one that orphans of its descendants are given to (Linux), or stop."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _is_child_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        flag = ctypes.c_int(0)
        done = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER + 1, ctypes.byref(flag), 0, 0, 0)
        return done == 0 and flag.value != 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """Every process's parent, from /proc/PID/stat."""
    parents: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return parents
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and fields[0] != b"Z":
            parents[int(name)] = int(fields[1])
    return parents


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _signal_each(pids: set[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
