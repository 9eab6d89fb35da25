"""A compile killed mid-way (torchrun's SIGTERM) reads as not finished from its TORCH_LOGS text as
from its trace: the text logged the backend's call ("Step 2: calling compiler function") and never
its return nor Dynamo's end of the compile ("run_gc_after_compile"). Real gloo runs of
fixtures/generated/dist215/program_deaths.py (torch 2.15)."""

from __future__ import annotations

from conftest import GENERATED, json_for

DIST = GENERATED / "dist215"


def _statuses(path) -> dict[tuple[int | None, str], str]:
    return {(c["rank"], c["id"]): c["status"] for c in json_for(path)["compiles"]}


def test_a_compile_killed_by_sigterm_is_missing_in_its_text_as_in_its_trace():
    run = DIST / "raise_out2"  # rank 0 was compiling `layer` when torchrun sent it SIGTERM
    trace = _statuses(run / "trace")
    assert trace == {(0, "0/0"): "missing"}
    assert _statuses(run / "torchrun_tee.txt") == trace  # every rank in one stream
    assert _statuses(run / "torch_logs" / "rank_0.txt") == trace  # the rank's own stderr


def test_text_and_trace_agree_on_compiles_that_finished():
    """Compiles that ended (ok, a graph break, restarts) keep their status in the text."""
    for name, text in (("timeout6", "torchrun_tee.txt"), ("raise_in3", "torchrun_tee.txt")):
        trace = _statuses(DIST / name / "trace")
        assert "missing" not in trace.values() and len(trace) >= 6
        assert _statuses(DIST / name / text) == trace
