"""The chronological compile timeline: when each rank compiled what, from chromium events (else
compilation metrics, else TORCH_LOGS line times), checked against the raw trace files read
independently here; and the Run pane drawing it, driven with Pilot on the 4-rank gloo run."""

from __future__ import annotations

import re

from conftest import CORPUS, GENERATED, SIZE, plain, press, ready, until

from tlview.diagnose.timeline import compile_timeline
from tlview.index.indexing import open_index
from tlview.report.timeline_look import timeline_lines

MULTI = GENERATED / "multi_rank4" / "trace"
RECORDS = re.compile(rb"(?m)^(?=V\d{4} )")


def dynamo_starts(path) -> list[tuple[float, str]]:
    """(µs, compile id) of every `dynamo` begin event of a trace file, read with a regex: each is
    a compile's outermost span, in the order torch wrote them."""
    out = []
    for record in RECORDS.split(path.read_bytes()):
        if record.startswith(b"V") and b'{"chromium_event"' in record.split(b"\n", 1)[0]:
            payload = record.split(b"\n", 1)[1]
            if re.search(rb'"name": "dynamo",', payload) and b'"ph": "B"' in payload:
                ts = float(re.search(rb'"ts": ([\d.]+)', payload).group(1))
                out.append((ts, re.search(rb'"compile_id": "([^"]+)"', payload).group(1).decode()))
    return out


def rank_file(rank: int):
    return next(MULTI.glob(f"*rank_{rank}_*.log"))


def test_every_rank_in_chronological_order_from_chromium_events():
    timeline = compile_timeline(open_index(str(MULTI)))
    assert timeline["clock"] == "wall" and timeline["origin_text"].endswith("UTC")
    assert [lane["label"] for lane in timeline["lanes"]] == ["rank 0", "rank 1", "rank 2", "rank 3"]
    assert {lane["clock"] for lane in timeline["lanes"]} == {"chromium"}
    starts = [row["start_s"] for row in timeline["rows"]]
    assert starts == sorted(starts) and starts[0] == 0.0
    first = min(ts for r in range(4) for ts, _ in dynamo_starts(rank_file(r)))
    for rank in range(4):
        expected = dynamo_starts(rank_file(rank))
        compiles = [row for row in timeline["rows"] if row["rank"] == rank and row["what"] == "compile"]
        assert [row["id"] for row in compiles] == [cid for _, cid in expected]
        for row, (ts, _) in zip(compiles, expected):
            assert abs(row["start_s"] - (ts - first) / 1e6) < 1e-5
        assert all(row["ended"] and row["seconds"] > 0 for row in compiles)
    # the divergences of the run, on the clock: rank 1 recompiled, rank 2 broke, rank 3 extra_stats
    by = {(row["rank"], row["id"], row["what"]): row for row in timeline["rows"]}
    assert by[(1, "0/1", "compile")]["function"] == "forward"
    assert by[(2, "1/0", "compile")]["status"] == "break"
    assert by[(3, "2/0", "compile")]["function"] == "extra_stats"
    assert (0, "0/0", "backward") in by
    # every chromium_event record was read, none skipped
    records = sum(p.read_bytes().count(b'{"chromium_event"') for p in MULTI.glob("*.log"))
    assert timeline["chromium_events"] == records == 245
    assert timeline["chromium_events_skipped"] == 0


def test_one_rank():
    timeline = compile_timeline(open_index(str(MULTI)), rank=2)
    assert [lane["label"] for lane in timeline["lanes"]] == ["rank 2"]
    assert [r["id"] for r in timeline["rows"] if r["what"] == "compile"] == ["0/0", "1/0", "2/0"]


def test_torch_logs_text_alone_uses_line_times():
    timeline = compile_timeline(open_index(str(GENERATED / "multi_rank4" / "torch_logs.txt")))
    assert timeline["clock"] == "text" and timeline["chromium_events"] == 0
    assert [lane["label"] for lane in timeline["lanes"]] == ["rank 0", "rank 1", "rank 2", "rank 3"]
    assert timeline["origin_text"] == "11-22 04:24:15"  # the log's own clock, no time zone
    rank1 = [r["id"] for r in timeline["rows"] if r["rank"] == 1]
    assert rank1 == ["0/0", "1/0", "0/1"]
    text = "\n".join(line.plain for line in timeline_lines(timeline, 100))
    assert "TORCH_LOGS line times" in text


def test_graph_breaks_text_matches_its_trace():
    """The same run as a trace and as `+dynamo` text: compile ids in the same order, start times
    within the text's millisecond resolution (plus the few ms between a span and its first line)."""
    trace = compile_timeline(open_index(str(CORPUS / "graph_breaks" / "trace")))
    text = compile_timeline(open_index(str(CORPUS / "graph_breaks" / "torch_logs.txt")))
    assert [r["id"] for r in trace["rows"]] == [r["id"] for r in text["rows"]]
    for a, b in zip(trace["rows"], text["rows"]):
        assert abs(a["start_s"] - b["start_s"]) < 0.05


def _without(tmp_path, source, kinds: tuple[bytes, ...]):
    records = RECORDS.split(next(source.glob("*.log")).read_bytes())
    kept = [r for r in records if not any(k in r.split(b"\n", 1)[0] for k in kinds)]
    path = tmp_path / "dedicated_log_torch_trace_x.log"
    path.write_bytes(b"".join(kept))
    return path


def test_a_trace_without_chromium_events_uses_compilation_metrics(tmp_path):
    path = _without(tmp_path, CORPUS / "model" / "trace", (b'{"chromium_event"',))
    timeline = compile_timeline(open_index(str(path)))
    assert timeline["clock"] == "wall" and timeline["lanes"][0]["clock"] == "metrics"
    assert [(r["id"], r["what"]) for r in timeline["rows"]] == [("0/0", "compile"), ("0/0", "backward"),
                                                                ("0/1", "compile")]
    full = compile_timeline(open_index(str(CORPUS / "model" / "trace")))
    for a, b in zip(full["rows"], timeline["rows"]):  # the two clocks agree within a compile's setup
        assert abs(a["seconds"] - b["seconds"]) < 0.5 * a["seconds"] + 0.1


def test_no_time_at_all_says_so(tmp_path):
    path = _without(tmp_path, CORPUS / "model" / "trace",
                    (b'{"chromium_event"', b'compilation_metrics"'))
    timeline = compile_timeline(open_index(str(path)))
    assert timeline["rows"] == [] and timeline["clock"] is None
    text = "\n".join(line.plain for line in timeline_lines(timeline))
    assert "no times are known" in text


def test_broken_chromium_events_are_skipped_and_counted(tmp_path):
    data = rank_file(0).read_bytes()
    # a torn event (the writer lost a line) and one that is not an object
    data = data.replace(b'"name": "bytecode_tracing",', b'"name": "bytecode_tracing"', 1)
    data = data.replace(b'\t"name": "entire_backward_compile",\n\t"ts"', b'\t"name": [,\n\t"ts"', 1)
    (tmp_path / "dedicated_log_torch_trace_rank_0_x.log").write_bytes(data)
    timeline = compile_timeline(open_index(str(tmp_path)))
    assert timeline["chromium_events_skipped"] == 2
    assert timeline["chromium_events"] == 44 - 2
    compiles = [r["id"] for r in timeline["rows"] if r["what"] == "compile"]
    assert compiles == ["0/0", "1/0"]


async def test_the_run_pane_shows_every_rank_on_a_chronological_timeline():
    from tlview.ui.app import TlviewApp

    app = TlviewApp(str(MULTI))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "9")
        body = app.query_one("#run-body")
        await until(pilot, lambda: "Compile timeline" in plain(body), what="the timeline")
        text = plain(body)
        lines = text.splitlines()
        for rank in range(4):
            assert any(line.startswith(f"  rank {rank}│") for line in lines), f"no lane for rank {rank}"
            header = next(i for i, line in enumerate(lines) if line.startswith(f"rank {rank}  "))
            section = []
            for line in lines[header + 1:]:
                if not line.strip():
                    break
                section.append(line)
            rows = [re.search(r"\[(\S+)\] (\w+)\s+\+([\d.]+) s", line) for line in section]
            rows = [m for m in rows if m]
            starts = [float(m.group(3)) for m in rows]
            assert starts == sorted(starts), f"rank {rank} is not in time order"
            assert [m.group(1) for m in rows if m.group(2) == "compile"] == \
                [cid for _, cid in dynamo_starts(rank_file(rank))]
        assert text.index("Compile timeline") < text.index("Compile time by compile id (longest first)")
        assert "Stack trie" in text
        await press(pilot, "right_square_bracket", "right_square_bracket")  # rank 1 only
        await until(pilot, lambda: app.flt.rank == 1)
        await until(pilot, lambda: "rank 1  3 compiles" in plain(body) and "rank 0  " not in plain(body),
                    what="rank 1's timeline")
        assert "[0/1] compile" in plain(body)


def test_events_of_every_wrong_shape_never_crash(tmp_path):
    from synthetic_chromium import EVENTS, write_trace

    write_trace(tmp_path / "in")
    index = open_index(str(tmp_path / "in"))
    assert not [p for p in index.problems if p.kind == "md5 mismatch"]  # written as torch writes
    timeline = compile_timeline(index)
    assert timeline["chromium_events"] == sum(ok for _, _, ok, _ in EVENTS) == 5
    assert timeline["chromium_events_skipped"] == 3
    rows = {(r["id"], r["what"]): r for r in timeline["rows"]}
    assert rows[("0/0", "compile")]["ended"] and rows[("0/0", "compile")]["seconds"] == 2.0
    assert not rows[("0/0", "x")]["ended"]  # began on a thread that is a list, never ended
    text = "\n".join(line.plain for line in timeline_lines(timeline, 120))
    assert "not ended" in text and "3 chromium events skipped" in text


async def test_the_timeline_fits_an_80_column_terminal():
    from tlview.ui.app import TlviewApp

    app = TlviewApp(str(MULTI))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await press(pilot, "9")
        pane = app.query_one("#run-pane")
        body = app.query_one("#run-body")
        await until(pilot, lambda: "Compile timeline" in plain(body), what="the timeline")
        await until(pilot, lambda: pane._shown is not None and pane._shown[2] == pane._width(),
                    what="the timeline drawn for the pane's width")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: "  rank 3│" in plain(body), what="rank 3's lane")
        text = plain(body)
        timeline = text[text.index("Compile timeline"):text.index("Frames whose recompiles")]
        lines = [line for line in timeline.splitlines() if "│" in line]  # lanes, axes, bars
        assert len(lines) == (1 + 4) + 4 + (3 + 4 + 4 + 4)
        assert max(len(line.rstrip()) for line in lines) <= body.size.width
        assert sum(line.startswith("  rank ") for line in lines) == 4


def test_following_a_writer_reads_only_what_is_new(tmp_path):
    """A job still writing: the timeline grows with the file (a compile under way shows as begun,
    not ended), each event is read once, and the end equals the timeline read from scratch."""
    from tlview.diagnose.chromium_spans import file_spans
    from tlview.index.live import LiveIndex

    records = RECORDS.split(rank_file(1).read_bytes())
    # cut inside rank 1's recompile 0/1: its `dynamo` span has begun, not ended
    cut = next(i for i, r in enumerate(records) if b'"frame_compile_id": 1' in r.split(b"\n", 1)[0]) + 3
    path = tmp_path / "dedicated_log_torch_trace_rank_1_x.log"
    path.write_bytes(b"".join(records[:cut]))
    live = LiveIndex(str(tmp_path), poll_interval=0.01)
    live.catch_up()
    early = compile_timeline(live.index)
    state = file_spans(live.index, live.index.sources[0])
    read_first = state.next_rec
    assert [(r["id"], r["ended"]) for r in early["rows"] if r["what"] == "compile"] == \
        [("0/0", True), ("1/0", True), ("0/1", False)]
    with open(path, "ab") as f:
        f.write(b"".join(records[cut:]))
    live.catch_up()
    live.finish()
    late = compile_timeline(live.index)
    assert state.next_rec == len(live.index.sources[0].offsets) > read_first
    assert late["chromium_events"] == rank_file(1).read_bytes().count(b'{"chromium_event"')
    scratch = compile_timeline(open_index(str(path)))
    assert late["rows"] == scratch["rows"] and late["lanes"] == scratch["lanes"]
