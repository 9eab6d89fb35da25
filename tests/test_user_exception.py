"""An exception the user's own code raises inside a compiled function is told as the program's
error, not a tracing limit: the exception and the user's line, what Dynamo did with it (fell back
to eager, or raised torch._dynamo.exc.Unsupported from it where no graph break was allowed), and a
fix that fits. On real torch 2.15 runs (fixtures/generated/dist215, program_classify.py): a
RuntimeError on a Python float, a ValueError from a helper in another file, a custom exception
under fullgraph=True, one caught inside the compiled function, and rank 1 of 3 raising."""

from __future__ import annotations

import pytest
from conftest import GENERATED, json_for, run_cli

DIST = GENERATED / "dist215"


def _failures(doc: dict) -> list[tuple[dict, dict]]:
    return [(c, d) for c in doc["compiles"] for d in c["diagnosis"] if d["kind"] == "failure"]


@pytest.mark.parametrize("logs", ["trace", "torch_logs"])
@pytest.mark.parametrize(("run", "raised", "line"), [
    ("raise_runtime", "RuntimeError('eps must be positive, got 0.0')", "program_classify.py:41"),
    ("raise_helper", "ValueError(\"no entry 'gamma' in the table (has ['alpha', 'beta'])\")", "helpers_classify.py:7"),
])
def test_a_raise_that_fell_back_names_the_exception_the_line_and_the_fallback(run, raised, line, logs):
    failures = _failures(json_for(DIST / run / logs))
    assert failures
    for _, failure in failures:
        assert failure["cause"] == "user_exception"
        assert failure["why"] == (f"your code raised {raised} at {line}; Dynamo traced it, found no handler, "
                                  "fell back to eager and raised it there")
        assert failure["place"].endswith(line)
        assert "fullgraph" not in failure["why"] + failure["fix"]  # none was set
        assert failure["fix"].startswith(f"your code raises {raised.split('(')[0]} on this input")
        assert f"at line {line.rsplit(':', 1)[1]}" in failure["fix"]


def test_under_fullgraph_the_program_gets_unsupported_and_the_fix_says_so():
    [(compile_, failure)] = _failures(json_for(DIST / "raise_fullgraph" / "trace"))
    assert compile_["id"] == "0/1" and compile_["graph_breaks"] == []  # no fallback: no break logged
    assert failure["why"] == ("your code raised ConfigError('Patchify wants NCHW images, got 3 dims') at "
                              "program_classify.py:62; Dynamo traced it, found no handler and, allowed no "
                              "graph break (fullgraph=True or error_on_graph_break), raised "
                              "torch._dynamo.exc.Unsupported from it")
    assert failure["fix"].endswith("the program gets torch._dynamo.exc.Unsupported, not ConfigError (yours is its "
                                   "__cause__): an `except ConfigError` around the compiled call does not catch it")
    assert failure["registry"]["id"] == "gb0088"  # "Observed exception"


def test_the_text_alone_does_not_claim_what_it_does_not_tell():
    """The text logs no break record for a fullgraph compile, nor necessarily one for a fallback
    (TORCH_LOGS without graph_breaks): both outcomes are said, neither asserted."""
    [(_, failure)] = _failures(json_for(DIST / "raise_fullgraph" / "torch_logs"))
    assert failure["why"].startswith("your code raised ConfigError('Patchify wants NCHW images, got 3 dims') at "
                                     "program_classify.py:62; Dynamo traced it and found no handler: it falls back")
    assert "drop fullgraph" not in failure["fix"]


def test_an_exception_caught_inside_the_compiled_function_is_no_problem():
    doc = json_for(DIST / "raise_caught" / "trace")
    assert [c["status"] for c in doc["compiles"]] == ["ok"]
    assert doc["problems"] == [] and _failures(doc) == []


@pytest.mark.parametrize("logs", ["trace", "torch_logs"])
def test_the_rank_that_raised_is_told_with_its_exception_and_line(logs):
    doc = json_for(DIST / "rank_raises" / logs)
    [(compile_, failure)] = _failures(doc)
    assert compile_["rank"] == 1 and compile_["id"] == "0/1"
    assert failure["why"].startswith("your code raised RuntimeError('rank 1 found a NaN loss scale; refusing to "
                                     "step') at program_classify.py:79; Dynamo traced it, found no handler, fell back")
    _, out = run_cli("--report", str(DIST / "rank_raises" / logs))
    assert "fullgraph" not in out.split("Failures\n")[0]  # the report's own words, before torch's message
