"""The tests' deadlines stretch with the machine's load (issue #46: waits that held on a quiet
machine timed out beside a CPU hog)."""

from __future__ import annotations

import conftest
from conftest import Deadline, load_factor


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_busy_machine_stretches_a_deadline_by_its_run_queue_per_core(monkeypatch):
    monkeypatch.setattr(conftest.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(conftest.os, "getloadavg", lambda: (6.0, 0.0, 0.0))
    assert load_factor() == 3.0
    clock = Clock()
    deadline = Deadline(10, clock)
    clock.now += 29
    assert not deadline.passed()
    clock.now += 2
    assert deadline.passed()


def test_a_quiet_machine_keeps_the_deadline_and_a_stretch_is_bounded(monkeypatch):
    monkeypatch.setattr(conftest.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(conftest.os, "getloadavg", lambda: (0.3, 0.0, 0.0))
    clock = Clock()
    deadline = Deadline(10, clock)
    clock.now += 10.5
    assert deadline.passed()
    monkeypatch.setattr(conftest.os, "getloadavg", lambda: (500.0, 0.0, 0.0))
    assert load_factor() == 8.0


def test_load_that_rises_during_a_wait_stretches_it(monkeypatch):
    monkeypatch.setattr(conftest.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(conftest.os, "getloadavg", lambda: (1.0, 0.0, 0.0))
    clock = Clock()
    deadline = Deadline(10, clock)
    monkeypatch.setattr(conftest.os, "getloadavg", lambda: (8.0, 0.0, 0.0))
    clock.now += 30
    assert not deadline.passed()  # 10 s x 4
    monkeypatch.setattr(conftest.os, "getloadavg", lambda: (1.0, 0.0, 0.0))
    assert not deadline.passed()  # the most load seen holds
