"""The right side: one tab per pane; only the visible pane is filled when the selection moves."""

from __future__ import annotations

from importlib import import_module

from textual import on
from textual.containers import Vertical
from textual.widget import AwaitMount, Widget
from textual.widgets import TabbedContent, TabPane, Tabs
from textual.widgets._tabs import Underline  # (Tabs exports no name for its underline)

from tlview.report.rich_text import missing_sources_notice
from tlview.ui.pane import Pane, Selection
from tlview.ui.payload_view import PayloadView, warm_up
from tlview.ui.tabs import TABS, numbered_tabs


def pane_class(pane) -> type[Pane]:
    """A pane's class, its module imported the first time: the panes not composed first are
    mounted after the first screen (COMPOSED_FIRST), and importing them before it took 23 ms."""
    if isinstance(pane, str):
        module, name = pane.split(".")
        pane = getattr(import_module(f"tlview.ui.{module}"), name)
    return pane


SHORT = {"summary": "Sum", "graphs": "Graph", "guards": "Guard", "recompiles": "Recomp",
         "breaks": "Break", "dynamic": "Dyn", "log": "Log", "diff": "Diff", "run": "Run", "perf": "Perf"}


def pane_title(widget) -> str | None:
    """The title of the pane `widget` is (its id is the tab's, with "-pane"), or None."""
    return next((title for tab_id, title, _, _ in TABS if getattr(widget, "id", None) == f"{tab_id}-pane"), None)


def tab_labels(width: int, active: str) -> list[str]:
    """The tab labels that fit in `width` columns: full, short, or numbers with the active tab
    named (at 80 columns every tab stays visible and reachable)."""
    forms = [[f"{n} {title}" for n, (_, title, _, _) in numbered_tabs()],
             [f"{n} {SHORT[tab_id]}" for n, (tab_id, *_) in numbered_tabs()],
             [f"{n} {SHORT[tab_id]}" if tab_id == active else n for n, (tab_id, *_) in numbered_tabs()]]
    for labels in forms:
        if sum(len(label) + 2 for label in labels) <= width:
            return labels
    return forms[-1]


# The Summary (shown first) is composed with the app; the others just after. (The Graphs pane
# came with the app too, its Select failing if mounted as the app ended: graphs_pane.GraphSelect.
# Its eight widgets were 30-50 ms of the main thread's time to the first screen.)
COMPOSED_FIRST = ("summary",)
MOUNT_LATER = 0.1  # seconds between two looks at whether the other panes may be mounted


class DetailPane(Vertical):
    ALLOW_MAXIMIZE = True  # `m` maximizes the panes with their tabs: 1-9 still switch

    def __init__(self, selection: Selection, mount_later=lambda: False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.selection = selection
        self._shown: dict[str, Selection] = {}
        self._mount_later = mount_later  # () -> True while the panes not shown wait (the logs' first read)
        self._lexer_built = False

    def compose(self):
        with TabbedContent(id="tabs"):
            for number, (tab_id, title, _, pane) in numbered_tabs():
                with TabPane(f"{number} {title}", id=tab_id):
                    if tab_id in COMPOSED_FIRST:
                        yield pane_class(pane)(id=f"{tab_id}-pane")

    def on_mount(self) -> None:
        self.call_after_refresh(self._mount_next_pane)

    def _unmounted(self):
        """(holder, pane class) of each pane not mounted yet; none once the app is ending."""
        if not self.is_attached or not self.app.is_running or self.app._exit_renderables:
            return []
        holders = ((self.query_one(f"#{tab_id}", TabPane), tab_id, pane) for tab_id, _, _, pane in TABS)
        return [(holder, tab_id, pane) for holder, tab_id, pane in holders if not holder.children]

    async def _mount_next_pane(self) -> None:
        """The panes not composed first, once the first screen is drawn (composing and styling
        all nine put 0.1-0.2 s in front of it), one between two frames: all at once, they took
        90 ms, and the first key pressed on a 10,000-id trace waited for them. Textual's Lazy
        does the same, but failed when the app ended before (a signal after the first screen)."""
        if unmounted := self._unmounted():
            if self._mount_later():
                # While the logs are first read: each mount laid out the whole screen, and the
                # seven took 150-200 ms of the main thread, which 10,000 compile ids, coming in
                # on two cores, waited for. A pane asked for meanwhile is mounted alone (pane()).
                self.set_timer(MOUNT_LATER, self._mount_next_pane)
                return
            holder, tab_id, pane = unmounted[0]
            await holder.mount(pane_class(pane)(id=f"{tab_id}-pane"))
            self.call_after_refresh(self._mount_next_pane)
        elif not self._lexer_built and self.is_attached and self.app.is_running:
            # the code panes' lexer, built before the first of them opens
            self._lexer_built = True
            self.run_worker(warm_up, name="lexer warm-up", thread=True, exit_on_error=False)

    @property
    def all_mounted(self) -> bool:
        return not self._unmounted()

    def _mount_pane(self, tab_id: str) -> None:
        """This pane, now (asked for before its turn)."""
        for holder, its_id, pane in self._unmounted():
            if its_id == tab_id:
                holder.mount(pane_class(pane)(id=f"{tab_id}-pane"))

    @property
    def active(self) -> str:
        return self.query_one("#tabs", TabbedContent).active

    @active.setter
    def active(self, tab_id: str) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        # Reading inside a pane, a digit goes on reading in the other. The focused view, hidden,
        # gave its focus to a sibling (the Graphs pane's list at 80 columns), and TabbedContent
        # showed that sibling's pane again: `9` from the output code at 80x24 stayed on Graphs.
        inside = self.has_focus_within and tabs.active != tab_id
        if inside:
            self.screen.set_focus(None)
        if tabs.active and tabs.active != tab_id and (shown := self.query(f"#{tabs.active}-pane")):
            shown.first(Pane).leave()
        tabs.active = tab_id
        self._underline_now(tabs)
        if inside:
            self.focus_pane()

    def _underline_now(self, tabs: TabbedContent) -> None:
        """The active tab underlined in the frame that shows its pane. Textual's Tabs moves the
        underline after that frame (call_after_refresh): a second frame, 30-45 ms after the key,
        that a key pressed next waited for, and then for the next 1/60 s tick (pane switches back
        to back took 27 or 44 ms). Tabs sets the same place after, and nothing changes then."""
        bar = tabs.query_one(Tabs)
        active = bar.active_tab
        if active is None or not active.region:  # (not laid out yet: Tabs does it after)
            return
        start, end = active.virtual_region.shrink(active.styles.gutter).column_span
        underline = bar.query_one(Underline)
        underline.highlight_start, underline.highlight_end = start, end

    def pane(self, tab_id: str | None = None) -> Pane:
        """The pane of a tab: one asked for before its turn is mounted now, and has its widgets
        once its Mount is handled (is_mounted; `pane_mounted` waits for it)."""
        tab_id = tab_id or self.active
        if not self.query(f"#{tab_id}-pane"):
            self._mount_pane(tab_id)
        return self.query_one(f"#{tab_id}-pane", Pane)

    async def pane_mounted(self, tab_id: str) -> Pane:
        """The pane of a tab, with its widgets."""
        pane = self.pane(tab_id)
        if not pane.is_mounted:
            assert isinstance(pane.parent, Widget)  # (mounted into its tab, which is one)
            await AwaitMount(pane.parent, [pane])
        return pane

    def main_view(self):
        """The active pane's main view (a payload, a table, a list): where its keys go."""
        pane = self.pane()
        views = [w for w in pane.walk_children() if w.focusable]
        target = next((w for w in views if isinstance(w, PayloadView)), None)
        return target or (pane if pane.focusable else next(iter(views), pane))

    def focus_pane(self) -> None:
        self.screen.set_focus(self.main_view())  # now: the next key goes there

    def show(self, selection: Selection) -> None:
        """Show a selection in the active pane now, in the others when their tab is opened."""
        self.selection = selection
        self._fill(self.active)

    def open(self, tab_id: str):
        """Show this tab with the selection now (not once the tab's activation comes): its pane."""
        self.active = tab_id
        self._fill(tab_id)
        return self.pane(tab_id)

    def _fill(self, tab_id: str) -> None:
        if not tab_id or self._shown.get(tab_id) == self.selection:
            return
        pane = self.pane(tab_id)
        if not pane.is_mounted:  # asked for before its turn (a key while the logs are first read):
            pane.call_later(self._fill, tab_id)  # shown once its widgets are there
            return
        self._shown[tab_id] = self.selection
        pane.show(self.selection)
        self._tell_missing_source()

    _told_missing_source = False

    def _tell_missing_source(self) -> None:
        """Once: the user's files whose lines a pane wanted are not here, and the flag for it."""
        sources = self.selection.sources
        if not self._told_missing_source and sources is not None and (said := missing_sources_notice(
                [{"path": p, "why": w} for p, w in sources.missing.items()])):
            self._told_missing_source = True
            self.app.notify(said, title="source", timeout=8, markup=False)

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        self._fill(event.pane.id or "")
        self._label_tabs()

    def on_resize(self) -> None:
        self._label_tabs()

    def _label_tabs(self) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        changed = False
        for (tab_id, *_), label in zip(TABS, tab_labels(self.size.width, self.active)):
            tab = tabs.get_tab(tab_id)
            if str(tab.label) != label:
                tab.label = label
                changed = True
        if changed:
            # Tabs moves its underline when a tab is relabelled, but before the new labels are laid
            # out (it stayed under the old width, now and then): move it once they are.
            self.call_after_refresh(self.call_after_refresh, self._underline_now, tabs)

    def refresh_entry(self) -> None:
        """What the selection shows grew (live): fill the active pane again."""
        self._shown.clear()
        self._fill(self.active)

    def copy_text(self) -> str | None:
        """The text the active pane shows (what `y` copies and `e` opens); None before it shows any."""
        pane = self.pane()
        return pane.copy_text() if pane.is_mounted else None
