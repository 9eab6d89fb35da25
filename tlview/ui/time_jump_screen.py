"""`t`: a jump to a time. A histogram of the run's compile ids and problems over its wall time
(one row of block characters each, across the screen), a cursor over its buckets (←/→, h/l), and
an input for a time (`HH:MM:SS`, `+90s`, `+2m`, `50%`). Enter gives the moment chosen (seconds
since the run's first compile) to the explorer, which moves its cursor there (jumping.py)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.containers import Vertical
from textual.events import Resize
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tlview.diagnose.compile_times import RunTimes, bars, bucket_counts, bucket_of, bucket_start, parse_moment
from tlview.ui.keys import TIME_JUMP_BINDINGS

LABELS = ("compile ids", "problems")
LABEL_WIDTH = max(len(label) for label in LABELS) + 2
NO_TIMES = ("This run's logs hold no times of its compile ids (no chromium events, compilation "
            "metrics' start times or TORCH_LOGS line times): there is no time to jump to.")


class TimeInput(Input):
    """A time's characters; h and l are left to the screen (they move the cursor): no time has them."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return character not in ("h", "l") and super().check_consume_key(key, character)


class TimeJumpScreen(ModalScreen[float | None]):
    BINDINGS = TIME_JUMP_BINDINGS
    DEFAULT_CSS = """
    TimeJumpScreen { align: center middle; }
    TimeJumpScreen > Vertical { width: 100%; height: auto; border: round $accent; background: $panel;
                                padding: 0 1; }
    TimeJumpScreen #time-said { color: $text-muted; }
    TimeJumpScreen Input { margin-top: 1; }
    """

    def __init__(self, times: RunTimes) -> None:
        super().__init__()
        self.times = times
        self.cursor = 0  # the bucket under the cursor
        self.buckets = 1

    def compose(self):
        with Vertical() as box:
            box.border_title = "jump to a time"
            box.border_subtitle = "←/→ h/l a bucket · Enter jumps · Esc closes"
            yield Static(id="time-histogram")
            yield Static(id="time-said")
            yield TimeInput(placeholder="Enter: the cursor's bucket; or HH:MM:SS, +90s, +2m, 50%",
                        restrict=r"[0-9:+.sm% ]*", id="time-input", disabled=not self.times.moments)

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._draw()

    def on_resize(self, event: Resize) -> None:
        self._draw()

    def _draw(self) -> None:
        histogram, said = self.query_one("#time-histogram", Static), self.query_one("#time-said", Static)
        times = self.times
        if not times.moments:
            histogram.update(Text(NO_TIMES))
            said.update("")
            return
        width = max(10, self.app.size.width - 4 - LABEL_WIDTH)  # (the border and padding)
        if width != self.buckets:  # resized: the cursor stays on its moment
            cursor_at = bucket_start(self.cursor, times.span_s, self.buckets)
            self.buckets = width
            self.cursor = bucket_of(cursor_at, times.span_s, width)
        compiles = bucket_counts((m.start_s for m in times.moments), times.span_s, width)
        problems = bucket_counts((m.start_s for m in times.moments if m.problem), times.span_s, width)
        text = Text()
        for label, counts, style in zip(LABELS, (compiles, problems), ("", "bold")):
            row = Text(bars(counts, max(compiles)), style=style)
            row.stylize("reverse", self.cursor, self.cursor + 1)
            text.append(label.ljust(LABEL_WIDTH), style="dim")
            text.append_text(row)
            text.append("\n")
        start, end = times.clock_text(0), times.clock_text(times.span_s)
        text.append(" " * LABEL_WIDTH + start + end.rjust(max(1, width - len(start))), style="dim")
        histogram.update(text)
        said.update(self._bucket_said(compiles[self.cursor], problems[self.cursor]))

    def _bucket_said(self, compiles: int, problems: int) -> str:
        times = self.times
        begins = bucket_start(self.cursor, times.span_s, self.buckets)
        ends = bucket_start(self.cursor + 1, times.span_s, self.buckets)
        return (f"{times.clock_text(begins)}–{times.clock_text(ends)} (+{begins:.1f}s): "
                f"{compiles} compile id{'s' if compiles != 1 else ''}, {problems} with a problem")

    def action_move_bucket(self, step: int) -> None:
        if self.times.moments:
            self.cursor = max(0, min(self.buckets - 1, self.cursor + step))
            self.query_one(Input).value = ""  # Enter takes the cursor's bucket
            self._draw()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.times.moments:
            return
        if not event.value.strip():
            self.dismiss(bucket_start(self.cursor, self.times.span_s, self.buckets))
            return
        try:
            self.dismiss(parse_moment(event.value, self.times))
        except ValueError as error:
            self.query_one("#time-said", Static).update(Text(str(error)))
