"""A scroll view's scrollbars updated only when a size changed (tlview/ui/text_size.py SizesSeen)."""

from __future__ import annotations

from textual.geometry import Size

from tlview.ui.text_size import SizesSeen


def test_sizes_seen_again_are_no_change():
    seen = SizesSeen()
    sizes = (Size(80, 20), Size(80, 20), Size(120, 900))
    assert seen.changed(*sizes)  # the first layout
    assert not seen.changed(*sizes)  # a whole-screen layout, the view's sizes as they were


def test_any_one_size_changed_is_a_change():
    size, container, virtual = Size(80, 20), Size(80, 20), Size(120, 900)
    seen = SizesSeen()
    seen.changed(size, container, virtual)
    others = ((Size(81, 20), container, virtual), (size, Size(80, 21), virtual), (size, container, Size(120, 901)))
    for changed in others:
        assert seen.changed(*changed)
        assert seen.changed(size, container, virtual)  # and back
