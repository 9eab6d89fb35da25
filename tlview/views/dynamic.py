"""A compile id's dynamic-shape events grouped by kind, in the order a person reads them: what
became symbolic and what got specialized first, then the guards those added, then the rest,
folded. Tracing a model logs a thousand `expression_created` around its two `create_symbol`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tlview.domain.artifacts import DynamicEvent
from tlview.index.registry import KINDS

# The events that say what shapes are, read first in this order: symbols, what specialized them,
# and the data-dependent errors (draft_export reports each `propagate_real_tensors_provenance`
# as an issue found, so it is not folded away).
PRIMARY = ("create_symbol", "create_unbacked_symbol", "symbolic_shape_specialization",
           "guard_on_data_dependent_error", "propagate_real_tensors_provenance")
# What those shapes cost at run time: next, open.
GUARDS = ("guard_added_fast", "guard_added")
# Any other kind (expression_created, ...) is bookkeeping: shown folded, one line with its count.
_RANK = {kind: i for i, kind in enumerate(PRIMARY + GUARDS)}


def dynamic_rank(kind: str) -> int:
    """Where a kind of event comes: primary kinds first, guards next, the rest after."""
    return _RANK.get(kind, len(_RANK))


def is_folded(kind: str) -> bool:
    return kind not in _RANK


def dynamic_label(kind: str) -> str:
    """What a kind of event is, as the registry says it ("symbol created")."""
    record_kind = KINDS.trace_kind(kind)
    return kind if record_kind is KINDS.unknown else record_kind.label


@dataclass(eq=False)
class DynamicGroup:
    """The events of one kind (kinds that read alike, `guard_added_fast` and `guard_added`, share
    one), in the order torch logged them."""

    label: str
    kinds: list[str]
    folded: bool
    events: list[DynamicEvent] = field(default_factory=list)


def group_dynamic(events: list[DynamicEvent]) -> list[DynamicGroup]:
    """Events by kind: primary kinds, then guards, then the rest folded (in the order first seen)."""
    groups: dict[str, DynamicGroup] = {}
    first: dict[str, tuple[int, int]] = {}
    for i, event in enumerate(events):
        label = dynamic_label(event.kind)
        group = groups.get(label)
        if group is None:
            group = groups[label] = DynamicGroup(label, [], is_folded(event.kind))
            first[label] = (dynamic_rank(event.kind), i)
        if event.kind not in group.kinds:
            group.kinds.append(event.kind)
            first[label] = min(first[label], (dynamic_rank(event.kind), i))
            group.folded = group.folded and is_folded(event.kind)
        group.events.append(event)
    return sorted(groups.values(), key=lambda g: first[g.label])
