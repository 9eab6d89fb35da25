"""Guards of the selected compile id: the C++ guard tree and the guards added, with user stacks."""

from __future__ import annotations

from tlview.model.index import Index
from tlview.model.tree import TreeEntry
from tlview.ui.text_pane import TextPane


def guards_text(entry: TreeEntry) -> str:
    """Read from disk: call from a worker thread."""
    node = entry.node
    parts = []
    for art in node.artifacts:
        if art.name in ("dynamo_cpp_guards_str", "dynamo_guards"):
            payload = art.load()
            parts.append(f"# {art.name}" + ("  (md5 mismatch)" if payload.md5_ok is False else ""))
            parts.append(payload.text)
    added = [d for d in node.dynamic if d.kind in ("guard_added_fast", "guard_added")]
    if added:
        parts.append(f"\n# guards added while tracing ({len(added)})")
        for event in added:
            fields = event.fields()
            parts.append(f"{fields.get('expr', event.summary)}")
            for frame in (fields.get("user_stack") or [])[-3:]:
                if isinstance(frame, dict):
                    name = node.stack_source.frame_filename(frame.get("filename")) if node.stack_source else frame.get("filename")
                    parts.append(f"    {name}:{frame.get('line')} in {frame.get('name')}")
    if not parts:
        return "no guards recorded for this compile id"
    return "\n".join(parts)


class GuardsPane(TextPane):
    language = "python"

    def text_for(self, index: Index, entry: TreeEntry) -> str:
        return guards_text(entry)
