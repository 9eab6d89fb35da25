"""tlview's `--json` divergence says what tlparse 0.4.3 `--all-ranks-html` says, on tlparse's own
multi-rank inputs and on real gloo runs made with torch 2.15 (fixtures/generated/dist215).

What tlparse said was recorded once, with fixtures/tools/tlparse_all_ranks.py (the command is in
each record): `fixtures/peer/tlparse-tests/all_ranks_expected.json`, and `tlparse` in each run's
expected.json. Neither torch nor tlparse runs here.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from conftest import FIXTURES, GENERATED, PEER, json_for

DIST = GENERATED / "dist215"
RUNS = ("agree2", "diverge4", "hang3")


def _records():
    peer = json.loads((PEER / "all_ranks_expected.json").read_text())["folders"]
    cases = [pytest.param(FIXTURES.parent / r["folder"], r, id=r["folder"].rsplit("/", 1)[-1] + (
        f"@{r['only_ranks'][0]}-{r['only_ranks'][-1]}" if r["only_ranks"] else "")) for r in peer]
    for run in RUNS:
        said = json.loads((DIST / run / "expected.json").read_text())["tlparse"]
        cases.append(pytest.param(DIST / run, said, id=run))
    return cases


CASES = _records()


@pytest.fixture(scope="module")
def divergence_of(tmp_path_factory):
    """The divergence of a case's folder (of some of its ranks' files, where tlparse read those)."""
    docs: dict = {}

    def of(folder, said) -> dict:
        only = said.get("only_ranks")
        key = (folder, tuple(only or ()))
        if key not in docs:
            read = folder
            if only:
                read = tmp_path_factory.mktemp("ranks")
                for path in folder.iterdir():
                    m = re.match(r"dedicated_log_torch_trace_rank_(\d+)", path.name)
                    if m and int(m[1]) in only:
                        shutil.copy(path, read)
            docs[key] = json_for(read)["divergence"]
        return docs[key]
    return of


@pytest.mark.parametrize("folder,said", CASES)
def test_compile_ids_and_cache_patterns(folder, said, divergence_of):
    div = divergence_of(folder, said)
    assert div["ranks"] == said["ranks"]
    assert bool(div["compile_ids"]) == said["compile_id_divergence"]
    assert sorted(g["ranks"] for g in div["cache_patterns"]) == said["cache_groups"]


@pytest.mark.parametrize("folder,said", CASES)
def test_collective_sequences_over_all_graphs_of_a_rank(folder, said, divergence_of):
    found = divergence_of(folder, said)["collective_sequences"]
    groups = sorted(g["ranks"] for g in found["groups"]) if found else []
    assert groups == said["collective_groups"]
    assert bool(groups) == said["collective_divergence"]


@pytest.mark.parametrize("folder,said", CASES)
def test_collective_schedules_per_compile_id(folder, said, divergence_of):
    """Per compile id, the schedules tlparse wrote to collective_schedules.json, grouped."""
    per_cid: dict = {}
    for s in said["collective_schedules"]:
        per_cid.setdefault(s["compile_id"], {})[s["rank"]] = s["ops"]
    differ = {cid for cid, by_rank in per_cid.items() if len({tuple(v) for v in by_rank.values()}) > 1}
    assert {e["id"] for e in divergence_of(folder, said)["collective_schedules"]} == differ


@pytest.mark.parametrize("folder,said", CASES)
def test_collectives_parity(folder, said, divergence_of):
    found = {(str(r), f"[{e['compile_id']}]", e["offset"], e["missing_waits"])
             for e in divergence_of(folder, said)["collectives_parity"] for r in e["ranks"]}
    assert found == {(rank, g["compile_id"], g["offset"], g["missing_waits"])
                     for rank, graphs in said["collectives_parity"].items() for g in graphs}


@pytest.mark.parametrize("folder,said", CASES)
def test_tensor_metadata(folder, said, divergence_of):
    found = divergence_of(folder, said)["tensor_meta"]
    assert (sorted(g["ranks"] for g in found["groups"]) if found else []) == said["tensor_meta_groups"]
    assert bool(found) == said["tensor_meta_divergence"]


@pytest.mark.parametrize("folder,said", CASES)
def test_runtime_estimates_fastest_and_slowest_rank(folder, said, divergence_of):
    found = divergence_of(folder, said)["runtime_estimates"]
    if len(said["ranks"]) < 2:  # tlview compares ranks only where there are two
        assert found is None
        return
    assert (found is not None) == said["runtime_trace"]
    if found is None:
        return
    assert found["mismatched_graph_counts"] == said["runtime_mismatched_graph_counts"]
    assert sorted(({"compile_id": g["compile_id"], "delta_ms": g["delta_ms"],
                    "fastest_rank": g["fastest"]["rank"], "fastest_ms": g["fastest"]["ms"],
                    "slowest_rank": g["slowest"]["rank"], "slowest_ms": g["slowest"]["ms"]}
                   for g in found["graphs"]), key=lambda g: g["compile_id"]) == \
        sorted(said["runtime_analysis"], key=lambda g: g["compile_id"])


@pytest.mark.parametrize("folder,said", CASES)
def test_graph_execution_order(folder, said, divergence_of):
    found = divergence_of(folder, said)["execution_order"]
    assert (found is not None) == said["exec_order_available"]
    if found is None:
        return
    assert found["order_differs"] == said["exec_order_differs"]
    assert found["schedule_mismatch_ranks"] == said["exec_order_schedule_mismatch_ranks"]
    assert found["cache_mismatch_ranks"] == said["exec_order_cache_mismatch_ranks"]


def test_the_cases_cover_every_diagnostic():
    """Each of tlparse's findings is met, and missed, by some case above (no vacuous agreement)."""
    said = [s for _, s, *_ in (c.values for c in CASES)]
    for key in ("compile_id_divergence", "cache_divergence", "collective_divergence", "tensor_meta_divergence",
                "runtime_mismatched_graph_counts", "exec_order_differs"):
        assert {bool(s[key]) for s in said} == {True, False}, key
    assert any(s["collectives_parity"] for s in said)
    assert any(g["delta_ms"] > 0 and g["fastest_rank"] != g["slowest_rank"]
               for s in said for g in s["runtime_analysis"])
    assert any(s["exec_order_schedule_mismatch_ranks"] for s in said)
