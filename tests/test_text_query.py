"""The query both searches take (views/text_query.py): a regex with smart case, a text that is not
a regex searched as the text it is; on the filter of the tree (views/filters.py) and the search
of payloads (views/search.py) of a real run."""

from __future__ import annotations

import re

import pytest
from conftest import CORPUS

from tlview.index.indexing import open_index
from tlview.views.filters import Filter
from tlview.views.search import search_payloads
from tlview.views.text_query import TextQuery

RUN = CORPUS / "recompiles" / "trace"


def test_a_query_is_a_regex_with_smart_case():
    assert TextQuery(r"size\s+mismatch").spans("a SIZE  mismatch") == [(2, 16)]  # lower case: any case
    assert TextQuery("Size").spans("size Size") == [(5, 9)]  # a capital: that case only
    assert TextQuery(r"l\[\d\]").found_in("L[0] == 3")
    assert not TextQuery(r"L\[\d\]").found_in("l[0] == 3")
    assert TextQuery("a|b").count("abcab") == 4


def test_a_text_that_is_not_a_regex_is_searched_as_the_text():
    query = TextQuery("f(x")
    assert not query.is_regex and query.spans("call f(x) then F(X)") == [(5, 8), (15, 18)]
    assert TextQuery("[").found_in("a[0]") and TextQuery("*x").count("*x *X") == 2


def test_matches_of_no_characters_are_no_matches():
    assert not TextQuery("^").found_in("abc") and TextQuery("b*").spans("abbc") == [(1, 3)]
    assert TextQuery("(?=b)|c").spans("abc") == [(2, 3)]  # the empty match before b skipped


def test_a_character_that_lowers_to_two_keeps_the_spans_where_they_are():
    text = "İstanbul guard"  # "İ".lower() is two characters: a lowered text shifts every span
    assert TextQuery("guard").spans(text) == [(9, 14)]


@pytest.mark.parametrize("expression", [r"size mismatch at index \d", "(dtype|requires_grad) mismatch"])
def test_the_tree_filter_keeps_the_compile_ids_the_regex_matches(expression):
    index = open_index(str(RUN))
    nodes = list(index.iter_nodes())
    pattern = re.compile(expression, re.IGNORECASE)
    with_reason = [n.id for n in nodes if any(pattern.search(r.text) for r in n.reasons)]
    kept = [n.id for n in nodes if Filter.parse(pattern.pattern, strict_words=False).matches(n)]
    assert with_reason and kept == with_reason
    assert not [n for n in nodes if Filter.parse("size mismatch at index \\d[", strict_words=False).matches(n)]


def test_a_search_in_payloads_finds_the_regexs_matches():
    index = open_index(str(RUN))
    pattern = re.compile(r"f32\[\d+, \d+, \d+\]", re.IGNORECASE)
    expected = [n.id for n in index.iter_nodes() if any(pattern.search(a.load().text) for a in n.artifacts)]
    found = [n.id for n, _done, _total in search_payloads(index, r"f32\[\d+, \d+, \d+\]", lambda n: False,
                                                                 lambda: False)
             if n is not None]
    assert 0 < len(expected) < len(list(index.iter_nodes())) and found == expected
    as_text = [n for n, _d, _t in search_payloads(index, r"f32[\d+", lambda n: False, lambda: False)
               if n is not None]
    assert not as_text  # not a regex: the text itself, which no payload holds


def test_a_compile_id_in_brackets_is_that_text_not_a_class_of_its_characters():
    """`/[3/2]` in the Run pane found every "2" and "/" (a regex class): a compile id in
    brackets is searched as written, the rest of the query still a regex."""
    assert TextQuery("[3/2]").spans("2 / [3/2]") == [(4, 9)]
    assert TextQuery("[0/0_1]").count("[0/0] [0/0_1]") == 1
    assert TextQuery(r"\[3/2\] rank \d").spans("[3/2] rank 1") == [(0, 12)]  # escaped by hand too
    assert TextQuery("[3/2] rank [0-9]").spans("[3/2] rank 7, [3/2] rank x") == [(0, 12)]
    assert TextQuery("x[0-9]").count("x1 x2 x[0-9]") == 2  # a class that is no compile id stays one
