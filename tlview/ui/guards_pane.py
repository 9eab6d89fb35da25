"""Guards of the selected compile id: the guard tree (trace or TORCH_LOGS text) and the guards
added while tracing, with their user stacks."""

from __future__ import annotations

from tlview.domain.role import Role
from tlview.ui.pane import Selection
from tlview.ui.text_pane import TextPane


def guards_text(selection: Selection) -> str:
    """Read from disk: call from a worker thread. A compile's are those of its attempt that
    built guards (after a restart, not the first attempt's: it built none)."""
    entry = selection.entry
    assert entry is not None and entry.node is not None  # TextPane.show asks only for an entry with a node
    if entry.kind == "compile":
        assert entry.compile is not None  # a compile entry has its Compile (views/tree.py)
        node = entry.compile.attempt_with_guards()
    else:
        node = entry.node
    parts = [f"# the guards of {node.id}, the attempt that compiled"] if node is not entry.node else []
    named = None
    for art in node.artifacts_in(Role.GUARDS):
        payload = art.load()
        # one header for the pieces of one block (TORCH_LOGS text logs a guard tree from several
        # places: its header, its lines, its latency), and for each bad one
        if art.name != named or payload.md5_ok is False:
            parts.append(f"# {art.name}" + ("  (md5 mismatch)" if payload.md5_ok is False else ""))
        named = art.name
        parts.append(payload.text)
    added = [d for d in node.dynamic if d.is_guard]
    if added:
        parts.append(f"\n# guards added while tracing ({len(added)})")
        for event in added:
            parts.append(str(event.fields().get("expr", event.summary)))
            parts += [f"    {frame}" for frame in event.user_stack()[-3:]]
    if not parts:
        return "no guards recorded for this compile id"
    return "\n".join(parts)


class GuardsPane(TextPane):
    language = "python"

    def text_for(self, selection: Selection) -> str:
        return guards_text(selection)
