"""Filters over compile nodes: TORCH_LOGS category words, a rank, free text.

One filter serves `--filter`/`--rank` in the headless outputs and the `/` bar of the TUI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from tlview.model.compile_node import CompileNode

if TYPE_CHECKING:
    from tlview.model.index import Index


class FilterError(ValueError):
    pass


def _has_artifact(node: CompileNode, *names: str) -> bool:
    return any(a.name in names or a.kind in names for a in node.artifacts)


def _graph_breaks(node: CompileNode) -> bool:
    return bool(node.effective_graph_breaks() or (node.metrics or {}).get("restart_reasons")
                or node.text_restarts)


def _errors(node: CompileNode) -> bool:
    return bool(node.errors or (node.metrics or {}).get("fail_type"))


CATEGORIES: dict[str, Callable[[CompileNode], bool]] = {
    "recompiles": lambda n: n.cid.is_recompile or bool(n.effective_recompile_reasons()),
    "graph_breaks": _graph_breaks,
    "guards": lambda n: _has_artifact(n, "dynamo_cpp_guards_str", "dynamo_guards") or any(
        d.kind.startswith("guard_added") for d in n.dynamic),
    "dynamic": lambda n: bool(n.dynamic),
    "perf_hints": lambda n: bool(n.perf_hints),
    "output_code": lambda n: _has_artifact(n, "inductor_output_code"),
    "errors": _errors,
}
ALIASES = {"recompiles_verbose": "recompiles", "breaks": "graph_breaks",
           "graph_break": "graph_breaks", "failures": "errors", "error": "errors",
           "recompile": "recompiles", "guard": "guards", "dynamic_shapes": "dynamic"}


@dataclass
class Filter:
    categories: list[str] = field(default_factory=list)
    rank: int | None = None
    text: str = ""
    payload_matches: set = field(default_factory=set)  # ids of nodes whose payloads hold `text`

    @classmethod
    def parse(cls, expression: str, rank: int | None = None, strict_words: bool = True) -> "Filter":
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
        return cls(categories, rank, " ".join(text_parts))

    def describe(self) -> str:
        parts = list(self.categories)
        if self.rank is not None:
            parts.append(f"rank:{self.rank}")
        if self.text:
            parts.append(repr(self.text))
        return " ".join(parts)

    @property
    def active(self) -> bool:
        return bool(self.categories or self.rank is not None or self.text)

    def matches(self, index: "Index", node: CompileNode) -> bool:
        if self.rank is not None and node.rank != self.rank:
            return False
        if self.categories and not any(CATEGORIES[c](node) for c in self.categories):
            return False
        if self.text and not (id(node) in self.payload_matches or matches_text(node, self.text)):
            return False
        return True


def matches_text(node: CompileNode, text: str) -> bool:
    """Free text against what the index holds in memory: id, location, reasons (not payloads)."""
    needle = text.lower()
    haystack = [node.id, node.location() or "", node.function() or ""]
    haystack += [r.text for r in node.effective_recompile_reasons()]
    for gb in node.effective_graph_breaks():
        haystack += [gb.reason, gb.detail or "", gb.location or "", gb.explanation or ""]
    metrics = node.metrics or {}
    haystack += [str(metrics.get("fail_type") or ""), str(metrics.get("fail_reason") or "")]
    haystack += node.errors + node.perf_hints + [d.summary for d in node.dynamic]
    haystack += [a.name for a in node.artifacts]
    return any(needle in h.lower() for h in haystack)
