"""PyTorch's own graph-break registry: since 2.7 every graph break names its entry (`gb0170`, in the
link at the end of its message), and torch ships the registry (torch/_dynamo/graph_break_registry.json:
its type, explanation and hints). tlview ships those words for every id of torch 2.13 and 2.15
(`graph_break_registry.json` beside this file, made by fixtures/tools/make_graph_break_registry.py),
and reads a break's class from its entry, not from the message's phrasing.

A break's family is decided from PyTorch's words for its entry: its type and explanation, and the
standard hints it carries (graph_break_hints.py: a user error, a Dynamo bug, a fundamental
limit, a graph break caused by an earlier one). Every entry has one (tests/test_causes.py checks
all 593); an entry of no narrower family is `unsupported_construct`, in PyTorch's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import orjson

from tlview.patterns import lazy

# The families, each with the line of why a view shows before PyTorch's own words.
FAMILIES = {
    "explicit_graph_break": "a call to torch._dynamo.graph_break() breaks the graph on purpose",
    "frame_skipped": "Dynamo gave up the whole frame: it runs eagerly",
    "print_or_logging": "a print or logging call inside the compiled code",
    "backward_in_compiled": "loss.backward() (or autograd.grad) inside the compiled function",
    "data_dependent_branch": "Python control flow on a tensor's value (if tensor.sum() > 0)",
    "item_or_tolist": "a tensor turned into a Python number or list (.item() / .tolist())",
    "dynamic_output_shape": "an op whose output size depends on the data",
    "skipped_or_c_function": "a function Dynamo skips or cannot trace (a C function, a skipped module, "
                             "a disabled function)",
    "user_exception": "the user's code raised an exception inside the compiled code",
    "dynamo_bug": "PyTorch calls this break likely a Dynamo bug",
    "unsupported_construct": "a Python construct Dynamo does not support here",
}

# (family, PyTorch's words for the entry that put it there); the first that matches wins. Written
# over the registry's types and explanations (all 593 ids of torch 2.13 and 2.15), not over
# messages: the words of an entry do not move between versions the way messages do.
_FAMILY_RULES = [
    ("explicit_graph_break", r"Call to `torch\._dynamo\.(?:graph_break|skip_frame|step_unsupported)\(\)`"),
    ("frame_skipped", r"Skipping the frame|skip frame due"),  # (gb7000: "graph break in loop ... Skipping the frame")
    ("backward_in_compiled", r"backward\(\)|Tensor\.backward|autograd\.grad\b|_autograd_grad"),
    ("data_dependent_branch", r"Data-dependent branching|Data-dependent assertion|data-dependent branch"),
    ("item_or_tolist", r"Tensor\.item\(\)|tolist\(\)|^Data dependent operator|unbacked SymInt"),
    ("dynamic_output_shape", r"^Dynamic shape operator"),
    # (not the `tp_*`/`nb_*` slots Dynamo's own object model lacks: `Missing tp_iternext` is a
    # generator's next(), a construct)
    ("skipped_or_c_function", (r"marked as skipped|torch\.compiler\.disable|implemented in C/C\+\+|"
                               r"not implemented in python|^Call to a time function|^Unsupported function call|"
                               r"isinstance\(\) called on user defined object with C")),
    ("user_exception", (r"^Observed exception|from user code|^Assertion failed|^Failed to raise exception|"
                        r"^Caught non-Exception value|^Exception with")),
]
_FAMILY_PATTERNS = [(family, lazy(words, re.IGNORECASE)) for family, words in _FAMILY_RULES]


@dataclass(frozen=True, slots=True)
class RegistryEntry:
    gb_id: str  # `gb0170`
    type: str  # PyTorch's type of the break: `Data-dependent branching`
    explanation: str  # PyTorch's explanation (its template: `{fn}` stands for what the message names)
    standard_hints: tuple[str, ...]  # user_error, dynamo_bug, fundamental, supportable, earlier_break, ...
    family: str  # one of FAMILIES


def family_of(gb_type: str, explanation: str, standard_hints: tuple[str, ...] | list[str]) -> str:
    """The family of an entry, from PyTorch's words for it."""
    text = f"{gb_type}\n{explanation}"
    for family, pattern in _FAMILY_PATTERNS:
        if pattern.search(gb_type) or pattern.search(text):
            return family
    if list(standard_hints) == ["dynamo_bug"]:
        return "dynamo_bug"
    return "unsupported_construct"


@lru_cache(maxsize=1)
def _raw() -> dict[str, dict[str, Any]]:
    """PyTorch's words for every id; read once, when a break first names one (120 KB: 2 ms)."""
    path = resources.files("tlview.domain").joinpath("graph_break_registry.json")
    raw: dict[str, dict[str, Any]] = orjson.loads(path.read_bytes())
    return raw


def registry() -> dict[str, RegistryEntry]:
    """Every entry, by id (the family of each decided: 55 ms for all 593, so a run decides only
    the ids its breaks name, in `entry`)."""
    return {gb_id: found for gb_id in _raw() if (found := entry(gb_id)) is not None}


# `.../gb/gb0170.html` in the message's link (torch 2.8 and newer), or a bare `gb0170`.
_GB_ID = lazy(r"\b(gb\d{4})\b", re.IGNORECASE)


def gb_ids_in(text: str | None) -> list[str]:
    """The registry ids a message names, in order, each once (a failure's reason names the break
    and then, where it could not be handled, the break that gave up: `gb0109` then `gb7000`)."""
    return list(dict.fromkeys(m.lower() for m in _GB_ID.findall(text or "")))


@lru_cache(maxsize=1024)
def entry(gb_id: str | None) -> RegistryEntry | None:
    """The entry of an id; None for no id, or an id of a torch newer than the registry shipped."""
    raw = _raw().get(gb_id.lower()) if gb_id else None
    if raw is None or gb_id is None:  # (no raw without an id)
        return None
    return RegistryEntry(gb_id.lower(), raw["type"], raw["explanation"], tuple(raw["standard_hints"]),
                         family_of(raw["type"], raw["explanation"], raw["standard_hints"]))


def entry_in(text: str | None) -> RegistryEntry | None:
    """The entry of the first id a message names that the registry knows."""
    for gb_id in gb_ids_in(text):
        if (found := entry(gb_id)) is not None:
            return found
    return None
