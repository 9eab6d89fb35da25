"""The panes' tabs, in the order of their number keys: here, not in detail.py, so that the key
table (keys.py), which the pane widgets read, names them without importing the widgets."""

from __future__ import annotations

TABS = [  # id, title, what it shows, its pane class's module and name (imported when it is mounted)
    ("summary", "Summary", "status, where, why and what to do, times, counts", "summary_pane.SummaryPane"),
    ("graphs", "Graphs", "Dynamo, AOT and Inductor graphs and the output code", "graphs_pane.GraphsPane"),
    ("guards", "Guards", "the guard tree and the guards added while tracing", "guards_pane.GuardsPane"),
    ("recompiles", "Recompiles", "each failed guard; Enter goes to the compile it failed in",
     "recompiles_pane.RecompilesPane"),
    ("breaks", "Graph breaks", "reason, explanation, hints and user stack", "breaks_pane.BreaksPane"),
    ("dynamic", "Dynamic shapes", "symbols, specializations, guards added", "dynamic_pane.DynamicPane"),
    ("log", "Log", "the TORCH_LOGS text of the compile id", "log_pane.LogPane"),
    ("diff", "Diff", "a recompile against the compile whose guard failed", "diff_pane.DiffPane"),
    ("run", "Run", "costs, timeline, where ranks diverge", "run_pane.RunPane"),
    # the tenth, on `0` (the key after 9): the nine before keep the numbers users know
    ("perf", "Perf", "perf problems and fixes, CUDA-graph partitions, compile time", "perf_pane.PerfPane"),
]


def tab_key(number: int) -> str:
    """The key of the tab numbered `number` (from 1), as its label shows it: `1`-`9`, then `0`."""
    return str(number % 10)


def numbered_tabs() -> list[tuple[str, tuple[str, str, str, str]]]:
    """(key, tab) of each tab, in order."""
    return [(tab_key(number), tab) for number, tab in enumerate(TABS, 1)]
