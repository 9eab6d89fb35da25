"""The UI's search (tlview/ui/search.py) on a real log: what `/`, `n` and `N` find and where they go,
against an independent count (re), without starting the app (the app's own: test_ui_reading.py)."""

from __future__ import annotations

import re

import pytest
from conftest import CORPUS

from tlview.ui.search import MAX_LINE, Matches, display_line

LOG = (CORPUS / "recompiles" / "torch_logs.txt").read_text().split("\n")


def occurrences(query: str, flags: int = 0) -> list[tuple[int, int]]:
    """(line, column) of every match, counted as less does (non-overlapping, left to right)."""
    return [(number, m.start()) for number, line in enumerate(LOG)
            for m in re.finditer(re.escape(query), display_line(line), flags)]


@pytest.mark.parametrize(("query", "flags"), [("guard", re.IGNORECASE), ("Guard", 0), ("Recompiling", 0)])
def test_a_query_counts_every_occurrence_with_smart_case(query, flags):
    expected = occurrences(query, flags)
    found = Matches(query, LOG)
    assert expected and found.total == len(expected)
    assert found.lines == sorted({line for line, _ in expected})
    assert found.pattern.folds == (flags == re.IGNORECASE)  # a capital makes it case-sensitive


def test_n_visits_every_match_in_order_then_wraps():
    expected = occurrences("guard", re.IGNORECASE)
    found = Matches("guard", LOG)
    visited = []
    for _ in range(found.total):
        line, occurrence = found.position()
        visited.append((line, found.column(display_line(LOG[line]), occurrence)))
        wrapped = not found.move(1)
    assert visited == expected and wrapped  # the last `n` went back to the first
    assert found.current == 0
    assert not found.move(-1) and found.current == found.total - 1  # `N` from the first: the last


def test_the_first_move_goes_to_the_first_match_at_or_below_the_top():
    found = Matches("guard", LOG)
    top = found.lines[len(found.lines) // 2] - 1  # a line without a match, just above one
    assert not found.has_match(top)
    assert found.move(1, from_line=top)
    assert found.position() == (top + 1, 0)
    assert not found.move(1, from_line=len(LOG))  # below the last: wraps to the first
    assert found.current == 0


def test_spans_are_the_matches_of_a_line_and_one_is_current():
    found = Matches("guard", LOG)
    found.move(1)
    current = [(line, start) for line in found.lines
               for start, _end, is_current in found.spans(line, display_line(LOG[line])) if is_current]
    line, occurrence = found.position()
    assert current == [(line, found.column(display_line(LOG[line]), occurrence))]
    spans = found.spans(line, display_line(LOG[line]))
    assert all(display_line(LOG[line])[s:e].lower() == "guard" for s, e, _ in spans)
    no_match = next(number for number in range(len(LOG)) if not found.has_match(number))
    assert found.spans(no_match, "guard, drawn there or not") == []  # (a line without a match: no span)


def test_describe_says_where_the_current_match_is():
    found = Matches("guard", LOG)
    found.move(1)
    assert found.describe() == f"/guard: match 2 of {found.total:,}"
    assert Matches("no such text anywhere", LOG).describe() == "/no such text anywhere: no match"


def test_a_line_is_searched_as_drawn_cut_and_tabs_expanded():
    long = "x" * MAX_LINE + "needle"
    assert Matches("needle", [long]).total == 0  # past what is drawn
    assert display_line("a\tb") == "a   b"
    assert Matches("a   b", ["a\tb"]).total == 1


def regex_occurrences(pattern: str, flags: int = 0) -> list[tuple[int, int, int]]:
    """(line, start, end) of every match of the regex `pattern`, by re itself."""
    return [(number, m.start(), m.end()) for number, line in enumerate(LOG)
            for m in re.finditer(pattern, display_line(line), flags)]


@pytest.mark.parametrize(("query", "flags"), [(r"guard\w*", re.IGNORECASE), (r"Recompiling \w+", 0),
                                              (r"^V\d+", 0), ("triggered by[: ]", re.IGNORECASE)])
def test_a_query_is_a_regex_and_its_spans_are_the_regexs_matches(query, flags):
    expected = regex_occurrences(query, flags)
    found = Matches(query, LOG)
    assert expected and found.total == len(expected) and found.pattern.is_regex
    spans = [(line, start, end) for line in found.lines
             for start, end, _current in found.spans(line, display_line(LOG[line]))]
    assert spans == expected  # the highlights mark the regex's matches, not its text
    found.move(1)
    line, occurrence = found.position()
    shown = display_line(LOG[line])
    assert (line, found.column(shown, occurrence), found.column(shown, occurrence) +
            found.width(shown, occurrence)) == expected[1]


def test_a_query_that_is_not_a_regex_is_searched_as_its_text_and_says_so():
    found = Matches("guard(", ["a guard(x) and guard(y)", "guard"])
    assert not found.pattern.is_regex and found.total == 2 and found.lines == [0]
    assert found.describe() == "/guard( (not a regex: searching the text): match 1 of 2"
    assert Matches("guard", ["guard"]).describe() == "/guard: match 1 of 1"  # (a regex: nothing said)


def test_a_regex_that_matches_no_characters_finds_nothing_to_show():
    assert Matches("x*", ["abc", "axxb"]).total == 1  # the "xx", not an empty match at each place
    assert Matches("^", LOG[:50]).total == 0
