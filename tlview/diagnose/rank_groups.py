"""Ranks with equal values grouped together: what every multi-rank diagnostic reports."""

from __future__ import annotations

import orjson


def group_ranks(values: dict) -> list[dict]:
    """{rank: value} -> [{"ranks": [...], "value": value}], ranks with equal values together, in
    the order of their lowest rank."""
    groups: dict = {}
    for rank, value in sorted(values.items(), key=lambda kv: (kv[0] is None, kv[0])):
        key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        groups.setdefault(key, {"ranks": [], "value": value})["ranks"].append(rank)
    return list(groups.values())


def group_by_key(keys: dict) -> list[list]:
    """{rank: hashable key} -> rank lists with equal keys (no JSON: for tuples of strings)."""
    groups: dict = {}
    for rank in sorted(keys):
        groups.setdefault(keys[rank], []).append(rank)
    return list(groups.values())


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 11th."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
