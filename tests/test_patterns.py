"""Regular expressions compiled when first used (tlview/patterns.py): a start of tlview compiled
222 of them as its modules were imported, 12 ms of a 100 MB trace's --json."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tlview.patterns import lazy


def test_a_lazy_pattern_answers_as_the_compiled_one_once_used():
    source = r"(?P<word>[a-z]+)-(\d+)"
    pattern, compiled = lazy(source, re.IGNORECASE), re.compile(source, re.IGNORECASE)
    assert "search" not in vars(pattern)  # nothing compiled yet
    text = "Ab-12, cd-3 and EF-45"
    assert pattern.search(text).group("word") == compiled.search(text).group("word") == "Ab"
    assert "search" in vars(pattern)  # the compiled pattern's own method from now on
    assert pattern.findall(text) == compiled.findall(text)
    assert pattern.sub("x", text) == compiled.sub("x", text)
    assert [m.span() for m in pattern.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert pattern.match("no") is None and pattern.fullmatch("a-1") is not None
    assert (pattern.pattern, pattern.flags, pattern.groups) == (compiled.pattern, compiled.flags, compiled.groups)
    with pytest.raises(AttributeError):
        pattern.no_such_thing  # noqa: B018


def test_the_causes_of_problems_are_compiled_only_when_a_problem_asks():
    """Importing what --json needs leaves the rules of causes and a job's death uncompiled."""
    code = ("import tlview.cli, tlview.index.indexing, tlview.report.summary\n"
            "from tlview.domain import causes\n"
            "from tlview.diagnose import job_death\n"
            "rules = [p for _, p, _ in causes._RECOMPILE_RULES + causes._BREAK_RULES]\n"
            "rules += [v for v in vars(job_death).values() if type(v).__name__ == 'LazyPattern']\n"
            "print(len(rules), sum('search' in vars(p) for p in rules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) >= 20 and out[1] == "0"
