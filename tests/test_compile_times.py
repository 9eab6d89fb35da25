"""The jump to a time (`t`): the compile ids' times counted in buckets and drawn as blocks (core),
what a person types for a time, and the screen landing the tree's cursor on the right compile id."""

from __future__ import annotations

import pytest
from conftest import CORPUS, GENERATED, SIZE, plain, press, ready, type_in, until

from tlview.diagnose.compile_times import RunTimes, bars, bucket_counts, parse_moment, run_times
from tlview.index.indexing import open_index
from tlview.ui.app import TlviewApp
from tlview.ui.time_jump_screen import NO_TIMES, TimeJumpScreen

RECOMPILES = CORPUS / "recompiles" / "trace"


def test_bucket_counts_split_the_span_evenly_and_keep_its_end():
    assert bucket_counts([0.0, 1.9, 2.0, 5.5, 9.99, 10.0], 10.0, 5) == [2, 1, 1, 0, 2]
    assert bucket_counts([], 10.0, 3) == [0, 0, 0]
    assert bucket_counts([0.0, 0.0], 0.0, 4) == [2, 0, 0, 0]  # one moment: no span


def test_bars_are_as_high_as_their_share_of_the_highest():
    assert bars([0, 1, 2, 4, 8]) == " ▁▂▄█"
    assert bars([1, 1]) == "██"
    assert bars([3], top=12) == "▂"
    assert bars([1, 3]) == "▃█"  # rounded up: 2.7 eighths
    assert bars([1, 100]) == "▁█"  # the least is seen
    assert bars([0, 0]) == "  "


def test_what_a_person_types_for_a_time():
    times = RunTimes([], 200.0, origin=23 * 3600 + 59 * 60 + 50.0, clock="wall")  # 23:59:50
    assert parse_moment("+90s", times) == 90
    assert parse_moment("+90", times) == 90
    assert parse_moment("+2m", times) == 120
    assert parse_moment("50%", times) == 100
    assert parse_moment("00:00:10", times) == 20  # past midnight
    assert parse_moment("23:59:55", times) == 5
    assert times.clock_text(15) == "00:00:05"
    for bad in ("", "soon", "1:2", "+m"):
        with pytest.raises(ValueError):
            parse_moment(bad, times)


def test_the_times_of_a_run_its_compile_ids_and_problems():
    times = run_times(open_index(str(RECOMPILES)))
    assert [str(m.compile.key) for m in times.moments] == [
        "0/0", "0/1", "1/0", "1/1", "2/0", "2/1", "2/2", "3/0", "3/1", "3/2", "3/3", "3/4"]
    # the recompiles and [3/4]'s error; a frame's first compile had none
    assert [m.problem for m in times.moments] == [False, True, False, True, False, True, True, False, True,
                                                  True, True, True]
    assert times.clock_text(0) == "23:27:10" and round(times.span_s, 2) == 19.72


def test_every_rank_on_one_axis():
    times = run_times(open_index(str(GENERATED / "dist215" / "diverge4")))
    assert sorted({m.compile.group.rank for m in times.moments}) == [0, 1, 2, 3]
    assert str(times.moments[-1].compile.key) == "1/0" and times.moments[-1].compile.group.rank == 3


async def jump(app, pilot, *keys: str, typed: str = "") -> None:
    await press(pilot, "t")
    await until(pilot, lambda: isinstance(app.screen, TimeJumpScreen))
    await press(pilot, *keys)
    if typed:
        await type_in(pilot, typed)
    await press(pilot, "enter")
    await until(pilot, lambda: not isinstance(app.screen, TimeJumpScreen))


@pytest.mark.parametrize("typed, lands_on", [("+11s", "1/0"), ("50%", "0/1"), ("23:27:22", "1/1"),
                                             ("+0s", "0/0")])
async def test_a_typed_time_lands_on_the_first_compile_id_begun_then(typed, lands_on):
    app = TlviewApp(str(RECOMPILES))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await jump(app, pilot, typed=typed)
        assert app.tree.entry.node.id == lands_on and app.focused is app.tree


async def test_the_cursor_over_the_buckets_jumps_to_its_bucket():
    app = TlviewApp(str(RECOMPILES))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app, pilot)
        await press(pilot, "t")
        screen = app.screen
        assert isinstance(screen, TimeJumpScreen)
        histogram = plain(screen.query_one("#time-histogram"))
        assert "compile ids" in histogram and "problems" in histogram and "23:27:10" in histogram
        wanted = screen.buckets // 2  # about 9.9 s: the next compile id is [0/1], at 10.1 s
        await press(pilot, *["l"] * (wanted + 2), "h", "left")
        assert screen.cursor == wanted
        await press(pilot, "enter")
        assert app.tree.entry.node.id == "0/1"


async def test_multi_rank_times_land_on_the_rank_that_compiled_then():
    app = TlviewApp(str(GENERATED / "dist215" / "diverge4"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await jump(app, pilot, typed="+1s")
        assert (app.tree.entry.rank, app.tree.entry.node.id) == (3, "1/0")


async def test_a_run_with_no_times_says_so_and_esc_closes():
    app = TlviewApp(str(GENERATED / "export"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "t")
        screen = app.screen
        assert isinstance(screen, TimeJumpScreen)
        assert plain(screen.query_one("#time-histogram")).split() == NO_TIMES.split()
        await press(pilot, "escape")
        await until(pilot, lambda: not isinstance(app.screen, TimeJumpScreen))


async def test_a_bad_time_says_why_and_stays():
    app = TlviewApp(str(RECOMPILES))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "t")
        await type_in(pilot, "99")
        await press(pilot, "enter")
        assert isinstance(app.screen, TimeJumpScreen)
        assert "not a time" in plain(app.screen.query_one("#time-said"))
