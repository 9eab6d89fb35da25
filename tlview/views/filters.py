"""Filters over compile nodes: TORCH_LOGS category words, a rank, free text.

One filter serves `--filter`/`--rank` in the headless outputs and the `/` bar of the TUI. A
category is one of the model's own rules (compile_node.py), never a rule of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tlview.domain.compile_node import CompileNode
from tlview.domain.role import Role
from tlview.domain.verdict import Kind
from tlview.views.text_query import text_query


class FilterError(ValueError):
    pass


CATEGORIES: dict[str, Callable[[CompileNode], bool]] = {
    # the verdict's kinds: a compile (all its attempts) with such a problem
    "recompiles": lambda n: n.compile is not None and n.compile.verdict.has(Kind.RECOMPILE),
    "graph_breaks": lambda n: n.compile is not None and n.compile.verdict.has(Kind.GRAPH_BREAK),
    "guards": lambda n: bool(n.artifacts_in(Role.GUARDS)) or any(d.is_guard for d in n.dynamic),
    "dynamic": lambda n: bool(n.dynamic),
    "perf_hints": lambda n: bool(n.perf_hints),
    "output_code": lambda n: any(a.kind.name == "inductor_output_code" for a in n.artifacts),
    "errors": lambda n: n.compile is not None and n.compile.verdict.has(Kind.FAILURE),
    "restarts": lambda n: n.compile is not None and n.compile.verdict.has(Kind.RESTART),
    "skipped_frames": lambda n: n.compile is not None and n.compile.verdict.has(Kind.FRAME_SKIPPED),
    # the verdict's perf problems (perf_hints, above, is the raw TORCH_LOGS lines)
    Kind.PERF.word: lambda n: n.compile is not None and n.compile.verdict.has(Kind.PERF),
}
ALIASES = {"recompiles_verbose": "recompiles", "breaks": "graph_breaks",
           "graph_break": "graph_breaks", "failures": "errors", "error": "errors",
           "recompile": "recompiles", "guard": "guards", "dynamic_shapes": "dynamic",
           "restart": "restarts", "failure": "errors", "skipped": "skipped_frames",
           "eager": "skipped_frames", "frame_skipped": "skipped_frames"}


@dataclass(frozen=True)
class Filter:
    categories: tuple[str, ...] = ()
    rank: int | None = None
    text: str = ""
    payload_matches: frozenset = field(default_factory=frozenset)  # nodes whose payloads match `text`

    @classmethod
    def parse(cls, expression: str, rank: int | None = None, strict_words: bool = True) -> Filter:
        """`recompiles,graph_breaks rank:1 some text`: category words, `rank:N`, the rest is text.

        With strict_words (the command line), an unknown word is an error; in the TUI's filter
        bar words that are not categories are free text.
        """
        categories: list[str] = []
        text_parts: list[str] = []
        for token in expression.replace(",", " ").split():
            word = token.lower()
            if word.startswith("rank:"):
                try:
                    rank = int(word[5:])
                except ValueError:
                    raise FilterError(f"rank:{word[5:]} is not a rank number") from None
            elif word in CATEGORIES or word in ALIASES:
                categories.append(ALIASES.get(word, word))
            elif strict_words:
                raise FilterError(
                    f"unknown filter word {token!r}; valid: {', '.join(CATEGORIES)}, rank:N")
            else:
                text_parts.append(token)
        return cls(tuple(categories), rank, " ".join(text_parts))

    def describe(self) -> str:
        parts = list(self.categories)
        if self.rank is not None:
            parts.append(f"rank:{self.rank}")
        if self.text:
            parts.append(repr(self.text))
        return " ".join(parts)

    def expression(self) -> str:
        """What to type in the filter bar to get this filter."""
        return self.describe().replace("'", "")

    @property
    def active(self) -> bool:
        return bool(self.categories or self.rank is not None or self.text)

    def cycle_rank(self, ranks: list[int], step: int) -> Filter:
        """The rank switcher: all ranks -> rank 0 -> rank 1 -> ... -> all ranks."""
        choices = [None, *ranks]
        at = choices.index(self.rank) if self.rank in choices else 0
        return replace(self, rank=choices[(at + step) % len(choices)])

    def with_payload_matches(self, nodes) -> Filter:
        return replace(self, payload_matches=self.payload_matches | {id(n) for n in nodes})

    def same_query(self, other: Filter) -> bool:
        """The same words, rank and text (payload matches aside)."""
        return (self.categories, self.rank, self.text) == (other.categories, other.rank, other.text)

    def matches(self, node: CompileNode) -> bool:
        if self.rank is not None and node.rank != self.rank:
            return False
        if self.categories and not any(CATEGORIES[c](node) for c in self.categories):
            return False
        return not self.text or id(node) in self.payload_matches or matches_text(node, self.text)


def missing_rank(rank: int | None, ranks: list) -> str | None:
    """What to say when a rank asked for is not in the logs (None when it is, or none was asked)."""
    known = [r for r in ranks if r is not None]
    if rank is None or rank in known:
        return None
    if not known:
        return f"rank {rank}: these logs have no ranks (not a distributed run), so nothing matches"
    return f"rank {rank} is not in these logs; ranks: {', '.join(map(str, known))}"


def matches_text(node: CompileNode, text: str) -> bool:
    """Free text (a regex: text_query.py) against what the index holds in memory: id, location,
    reasons (not payloads)."""
    query = text_query(text)
    haystack = [node.id, node.location() or "", node.function() or ""]
    haystack += [r.text for r in node.reasons]
    for gb in node.breaks:
        haystack += [gb.reason, gb.detail or "", gb.location or "", gb.explanation or ""]
    failure = node.failure
    if failure is not None:
        haystack += [failure.fail_type, failure.fail_reason]
    haystack += node.errors + node.perf_hints + [d.summary for d in node.dynamic]
    haystack += [a.name for a in node.artifacts]
    return any(query.found_in(h) for h in haystack)
