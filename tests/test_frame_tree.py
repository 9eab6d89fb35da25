"""The frame tree widget draws what its model holds: a line drawn of an earlier tree is never
taken for a new one's (Tree.clear() numbers the new nodes from 0 again)."""

from __future__ import annotations

from conftest import GENERATED, SIZE, ready, until

from tlview.ui.app import TlviewApp
from tlview.views.tree import TreeModel

HANG = GENERATED / "dist215" / "hang3"


def _first_line(app) -> str:
    return app.tree.render_line(0).text


async def test_a_new_tree_is_drawn_anew_though_its_nodes_have_the_old_ones_ids():
    app = TlviewApp(str(HANG))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        folded = app.model
        assert folded.folding is not None
        await until(pilot, lambda: "ranks 0-1 (2 alike)" in _first_line(app), what="the folded tree drawn")
        app.show_model(TreeModel(app.index, app.flt))  # every rank apart: the first is "rank 0"
        await pilot.pause()
        assert "rank 0  " in _first_line(app) and "alike" not in _first_line(app)
        app.show_model(folded)
        await pilot.pause()
        assert "ranks 0-1 (2 alike)" in _first_line(app)
