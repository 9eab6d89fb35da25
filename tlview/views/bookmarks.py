"""The compile ids a person marked in this session (less `m`/`'`): by their tree keys, which a
filter, a rank switch or a rebuilt tree keep; nothing is written anywhere."""

from __future__ import annotations

from tlview.views.tree import TreeEntry, TreeModel

MARK = "◆"  # before a bookmarked row's label


class Bookmarks:
    def __init__(self) -> None:
        self.keys: set[tuple] = set()

    def __contains__(self, key: tuple) -> bool:
        return key in self.keys

    def __len__(self) -> int:
        return len(self.keys)

    def toggle(self, key: tuple) -> bool:
        """Mark the entry with `key`, or unmark it if marked; True: it is marked now."""
        if key in self.keys:
            self.keys.discard(key)
            return False
        self.keys.add(key)
        return True

    def shown(self, model: TreeModel) -> list[TreeEntry]:
        """The marked entries the tree shows, in tree order."""
        return model.matching(self.marks)

    def marks(self, entry: TreeEntry) -> bool:
        return entry.key in self.keys
