"""Free-text search (a regex: text_query.py) inside payloads (graphs, code, guards), read from disk one at a time.

Slow by nature on a big trace, so it is a generator a background worker drives, reporting
progress and stopping when asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tlview.domain.compile_node import CompileNode
from tlview.index.index import Index
from tlview.views.text_query import text_query


def search_payloads(index: Index, text: str, skip: Callable[[CompileNode], bool],
                    stop: Callable[[], bool]) -> Iterator[tuple[CompileNode | None, int, int]]:
    """Yield (node whose payloads match `text` or None, artifacts done, artifacts total)."""
    query = text_query(text)
    nodes = [n for n in index.iter_nodes() if not skip(n)]
    total = sum(len(n.artifacts) for n in nodes)
    done = 0
    for node in nodes:
        found = False
        for artifact in list(node.artifacts):
            if stop():
                return
            done += 1
            if not found:
                try:
                    found = query.found_in(artifact.load().text)
                except OSError:
                    continue
        yield (node if found else None), done, total
