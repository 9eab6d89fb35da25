"""How a run's cache hits, misses and bypasses (diagnose/caches.py) read in `--report`: the
totals per cache, then each compile id's lookups, then why caches were bypassed."""

from __future__ import annotations

from rich.text import Text

from tlview.diagnose.caches import outcome_words
from tlview.textsafe import one_line

COMPILES_LISTED = 30


def cache_lines(caches: dict | None, name_of) -> list[Text]:
    """`name_of(entry)` names a compile id as the report does (`[0/1]`, with its rank in a run of
    several). Nothing when the logs have no cache records."""
    if not caches or not caches["caches"]:
        return []
    head = Text("Caches", style="bold")
    head.append("  " + "; ".join(f"{c['label']}: {outcome_words(c)}" for c in caches["caches"].values()))
    out = [head]
    labels = {name: c["label"] for name, c in caches["caches"].items()}
    for entry in caches["compiles"][:COMPILES_LISTED]:
        line = Text(f"  {name_of(entry)} ", style="bold")
        line.append("; ".join(f"{labels.get(name, name)}: {outcome_words(counts)}"
                              for name, counts in entry["caches"].items()))
        out.append(line)
    if len(caches["compiles"]) > COMPILES_LISTED:
        out.append(Text(f"  … {len(caches['compiles']) - COMPILES_LISTED} more compile ids (--json: caches)",
                        style="dim"))
    for bypass in caches["bypass_reasons"]:
        line = Text(f"  bypassed ×{bypass['count']} ({labels.get(bypass['cache'], bypass['cache'])}): ",
                    style="yellow")
        line.append(one_line(bypass["reason"], 200))
        out.append(line)
    return out
