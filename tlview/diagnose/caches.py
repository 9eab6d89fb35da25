"""Cache hits, misses and bypasses of a run (FX graph cache, AOTAutograd cache, ...), in total and
per compile id, for one rank or a whole run: a compile that missed a warm cache costs its whole
compile time again. ranks.py compares the same sequences between ranks.

From the `*_cache_hit/miss/bypass` artifacts the index attaches to compile ids; a bypass says why
in its payload (`cache_bypass_reason`), read here (a few small payloads).
"""

from __future__ import annotations

import orjson

from tlview.diagnose.stepping import stepping
from tlview.domain.artifacts import readable_name
from tlview.domain.role import Role
from tlview.index.registry import CACHE_OUTCOMES, cache_outcome

OUTCOMES = tuple(CACHE_OUTCOMES.values())  # hit, miss, bypass
REASONS_KEPT = 10  # distinct bypass reasons listed
_FIRST = {"fx_graph_cache": 0, "aotautograd_cache": 1}  # the caches every compile looks in, first


def cache_name(artifact_name: str) -> str:
    """`fx_graph_cache_miss` -> `fx_graph_cache`."""
    for suffix in CACHE_OUTCOMES:
        if artifact_name.endswith(suffix):
            return artifact_name[: -len(suffix)] + "_cache"
    return artifact_name


def cache_summary(index, rank=..., between=None) -> dict:
    """{"caches": {name: {label, hit, miss, bypass}}, "compiles": [{id, rank, process, caches}],
    "bypass_reasons": [{cache, reason, count}]}: empty when the logs have no cache records."""
    caches: dict[str, dict] = {}
    compiles: list[dict] = []
    reasons: dict[tuple[str, str], int] = {}
    for node in stepping(index.iter_nodes(rank), between):  # (between: stepping.py)
        per_node: dict[str, dict] = {}
        for artifact in node.artifacts_in(Role.CACHE):
            outcome = cache_outcome(artifact.name)
            if outcome is None:
                continue
            name = cache_name(artifact.name)
            total = caches.setdefault(name, {"label": readable_name(name), **dict.fromkeys(OUTCOMES, 0)})
            total[outcome] += 1
            own = per_node.setdefault(name, dict.fromkeys(OUTCOMES, 0))
            own[outcome] += 1
            if outcome == "bypass":
                key = (name, _bypass_reason(artifact))
                reasons[key] = reasons.get(key, 0) + 1
        if per_node:
            compiles.append({"id": node.id, "rank": node.rank, "process": node.group.pid,
                             "caches": per_node, "group": node.group})
    # the same order however the files were read (followed files interleave their records)
    order = {group: i for i, group in enumerate(index.groups())}
    compiles.sort(key=lambda c: order.get(c.pop("group"), len(order)))
    caches = dict(sorted(caches.items(), key=lambda kv: (_FIRST.get(kv[0], len(_FIRST)), kv[0])))
    ranked = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:REASONS_KEPT]
    return {"caches": caches, "compiles": compiles,
            "bypass_reasons": [{"cache": name, "reason": reason, "count": count}
                               for (name, reason), count in ranked]}


def outcome_words(counts: dict) -> str:
    """`2 hits, 4 misses` (outcomes that happened only; `no lookups` when none did)."""
    words = {"hit": ("hit", "hits"), "miss": ("miss", "misses"), "bypass": ("bypass", "bypasses")}
    parts = [f"{counts[o]} {words[o][counts[o] != 1]}" for o in OUTCOMES if counts.get(o)]
    return ", ".join(parts) or "no lookups"


def _bypass_reason(artifact) -> str:
    """Why a cache was bypassed, from its payload; `unknown` if it does not say."""
    try:
        loaded = artifact.load()
        info = orjson.loads(loaded.text)
    except (OSError, orjson.JSONDecodeError, ValueError, AttributeError):
        return "unknown"
    reason = info.get("cache_bypass_reason") if isinstance(info, dict) else None
    return str(reason).split("\n", 1)[0][:300] if reason else "unknown"
