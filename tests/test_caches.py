"""Cache hits, misses and bypasses in --json, --report and --report --markdown, for a run of one
process as for ranks: counted against the `*_cache_*` artifact records of the files themselves."""

from __future__ import annotations

import json
import re
from collections import Counter

from conftest import CORPUS, GENERATED, PEER, json_for, run_cli

CACHE_HIT_MISS = PEER / "inputs" / "cache_hit_miss.log"
ARTIFACT = re.compile(rb'(?m)^V[^\n]*\] (\{"artifact": \{"name": "(\w+)_(hit|miss|bypass)"[^\n]*)$')


def cache_records(*paths) -> Counter:
    """(rank, compile id, cache, outcome) of every cache artifact record, read with a regex."""
    counts: Counter = Counter()
    for path in paths:
        for match in ARTIFACT.finditer(path.read_bytes()):
            meta = json.loads(match.group(1))
            cid = f"{meta['frame_id']}/{meta['frame_compile_id']}" + (
                f"_{meta['attempt']}" if meta.get("attempt") else "")
            counts[(meta.get("rank"), cid, match.group(2).decode(), match.group(3).decode())] += 1
    return counts


def flattened(caches: dict) -> Counter:
    return Counter({(c["rank"], c["id"], name, outcome): n for c in caches["compiles"]
                    for name, counts in c["caches"].items() for outcome, n in counts.items() if n})


def test_one_process_hits_misses_and_bypasses_in_json():
    caches = json_for(CACHE_HIT_MISS)["caches"]
    assert flattened(caches) == cache_records(CACHE_HIT_MISS)
    assert caches["caches"] == {
        "fx_graph_cache": {"label": "FX graph cache", "hit": 1, "miss": 2, "bypass": 0},
        "aotautograd_cache": {"label": "AOTAutograd cache", "hit": 0, "miss": 0, "bypass": 3},
    }
    assert caches["bypass_reasons"] == [{"cache": "aotautograd_cache", "count": 3,
                                         "reason": "Unsupported call_function target flex_attention. "}]


def test_one_process_in_the_report():
    code, out = run_cli("--report", str(CACHE_HIT_MISS))
    assert code == 0
    assert "Caches  FX graph cache: 1 hit, 2 misses; AOTAutograd cache: 3 bypasses" in out
    assert "  [1/0] FX graph cache: 1 hit, 2 misses; AOTAutograd cache: 3 bypasses" in out
    assert "bypassed ×3 (AOTAutograd cache): Unsupported call_function target flex_attention." in out


def test_one_process_in_markdown():
    code, out = run_cli("--report", "--markdown", str(CACHE_HIT_MISS))
    assert code == 0
    assert "## Caches\n\nFX graph cache: 1 hit, 2 misses; AOTAutograd cache: 3 bypasses.\n" in out
    assert "- `[1/0]` FX graph cache: 1 hit, 2 misses; AOTAutograd cache: 3 bypasses" in out


def test_every_corpus_run_counts_as_its_files():
    for scenario in ("model", "graph_breaks", "recompiles", "dynamic_shapes"):
        trace = CORPUS / scenario / "trace"
        caches = json_for(trace)["caches"]
        assert flattened(caches) == cache_records(*trace.glob("*.log")), scenario
        assert caches["caches"]["fx_graph_cache"]["miss"] > 0


def test_ranks_each_counted_and_one_rank_kept():
    trace = CORPUS / "distributed" / "trace"
    caches = json_for(trace)["caches"]
    assert flattened(caches) == cache_records(*trace.glob("*.log"))
    assert caches["caches"]["fx_graph_cache"] == {"label": "FX graph cache", "hit": 2, "miss": 16, "bypass": 0}
    rank1 = json_for(trace, "--rank", "1")["caches"]
    assert {c["rank"] for c in rank1["compiles"]} == {1}
    assert rank1["caches"]["fx_graph_cache"]["hit"] == 2
    _code, out = run_cli("--report", str(trace))
    assert "  [4/0] rank 1 AOTAutograd cache: 3 bypasses; FX graph cache: 2 hits, 4 misses" in out


def test_no_cache_records_no_section():
    doc = json_for(GENERATED / "multi_rank4" / "trace")
    assert doc["caches"] == {"caches": {}, "compiles": [], "bypass_reasons": []}
    code, out = run_cli("--report", str(GENERATED / "multi_rank4" / "trace"))
    assert code == 0 and "Caches" not in out
