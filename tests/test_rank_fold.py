"""--report and markdown fold alike ranks by the rank groups themselves (report/rank_fold.py), so
one TORCH_LOGS text of many ranks (`torchrun --tee 3 ... 2>&1 | tee output.txt`) folds as a
file per rank does: as many tables as --json has groups (real gloo runs, program_groups.py)."""

from __future__ import annotations

import re

import pytest
from conftest import GENERATED, json_for, run_cli

DIST = GENERATED / "dist215"
_TABLE_TITLE = re.compile(r"^(?:ranks?|\d[\d,]* ranks) \d")


def titles(out: str) -> list[str]:
    return [line for line in out.splitlines() if _TABLE_TITLE.match(line)]


@pytest.mark.parametrize("run", ["reshape3", "swap5"])
def test_one_text_of_many_ranks_prints_a_table_a_group(run):
    text = DIST / run / "output.txt"
    groups = json_for(text)["rank_groups"]
    assert len(json_for(text)["ranks"]) > len(groups) >= 2
    code, out = run_cli("--report", str(text))
    assert code == 0
    assert sorted(titles(out)) == sorted(g["title"] for g in groups)
    code, out = run_cli("--report", "--markdown", str(text))
    assert code == 0
    for group in groups:
        if group["count"] > 1:  # the rank that stands for them is named by them all
            assert f"] {group['said']}" in out


def test_the_text_alone_groups_by_what_it_tells():
    """Text logs tell no collectives: swap5's rank 3 (another collective, the same compile history)
    is among the alike there; rank 4, which compiled one more function, is not."""
    assert [(g["ranks"], g["alike"]) for g in json_for(DIST / "swap5" / "output.txt")["rank_groups"]] == [
        ("0-3", True), ("4", False)]
