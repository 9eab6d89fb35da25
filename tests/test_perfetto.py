"""`--perfetto FILE`: every rank's chromium events in one Chrome trace JSON, a pid per rank named by
its process_name, each event with its record's compile id; counted against the trace files."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from conftest import CORPUS, GENERATED

from tlview.cli import main

MULTI = GENERATED / "multi_rank4" / "trace"
RECORDS = re.compile(rb"(?m)^(?=V\d{4} )")
CONTEXT = ("frame_id", "frame_compile_id", "attempt")


def chromium_records(path) -> list[dict]:
    """The envelope of every chromium_event record of a file (read here with a regex and json)."""
    out = []
    for record in RECORDS.split(path.read_bytes()):
        head = record.split(b"\n", 1)[0]
        if b'{"chromium_event"' in head:
            out.append(json.loads(head[head.index(b"] {") + 2:]))
    return out


def cid_of(meta: dict) -> str:
    text = f"{meta['frame_id']}/{meta['frame_compile_id']}"
    return text + (f"_{meta['attempt']}" if meta.get("attempt") else "")


def write(tmp_path, *args) -> tuple[int, list[dict], str]:
    out = tmp_path / "trace.json"
    code = main(["--perfetto", str(out), *args])
    doc = json.loads(out.read_bytes()) if out.exists() else None
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return code, events, str(out)


def test_four_ranks_merged_one_pid_each(tmp_path, capsys):
    code, events, _ = write(tmp_path, str(MULTI))
    assert code == 0
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {0: "rank 0", 1: "rank 1", 2: "rank 2", 3: "rank 3"}
    timed = [e for e in events if e["ph"] != "M"]
    assert {e["pid"] for e in timed} == {0, 1, 2, 3}
    # one event per chromium_event record, each under its file's rank, with its record's compile id
    for rank in range(4):
        path = next(MULTI.glob(f"*rank_{rank}_*.log"))
        records = chromium_records(path)
        mine = [e for e in timed if e["pid"] == rank]
        assert len(mine) == len(records)
        assert Counter(e["args"]["compile_id"] for e in mine) == Counter(cid_of(m) for m in records)
    assert len(timed) == 245
    assert "wrote 245 chromium events" in capsys.readouterr().err


def test_events_are_well_formed(tmp_path):
    _, events, _ = write(tmp_path, str(MULTI))
    open_spans: dict = defaultdict(list)
    for e in sorted((e for e in events if e["ph"] != "M"), key=lambda e: e["ts"]):
        assert isinstance(e["name"], str) and isinstance(e["ts"], float) and isinstance(e["tid"], int)
        assert e["ph"] in "BEiX"
        if e["ph"] == "B":
            open_spans[(e["pid"], e["tid"])].append(e["name"])
        elif e["ph"] == "E":
            assert open_spans[(e["pid"], e["tid"])].pop() == e["name"]  # nested, and each closed
        elif e["ph"] == "X":
            assert e["dur"] >= 0
    assert not any(open_spans.values())
    # the attempt torch leaves out of its events: rank 2's restarted compile is `1/0_1`
    assert any(e["args"]["compile_id"] == "1/0_1" and e["pid"] == 2 for e in events if e["ph"] != "M")


def test_one_rank(tmp_path):
    code, events, _ = write(tmp_path, "--rank", "3", str(MULTI))
    assert code == 0 and {e["pid"] for e in events} == {3}
    assert sum(e["ph"] != "M" for e in events) == len(chromium_records(next(MULTI.glob("*rank_3_*.log"))))


def test_a_process_without_rank(tmp_path):
    code, events, _ = write(tmp_path, str(CORPUS / "graph_breaks" / "trace"))
    assert code == 0
    names = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert names == ["process 17404"]
    records = chromium_records(next((CORPUS / "graph_breaks" / "trace").glob("*.log")))
    assert sum(e["ph"] != "M" for e in events) == len(records)


def test_torch_logs_text_gives_an_empty_valid_trace(tmp_path, capsys):
    code, events, _ = write(tmp_path, str(GENERATED / "multi_rank4" / "torch_logs.txt"))
    assert code == 0
    assert [e for e in events if e["ph"] != "M"] == []
    assert "no chromium events in these logs" in capsys.readouterr().err


def test_broken_events_are_skipped_and_counted(tmp_path, capsys):
    source = next(MULTI.glob("*rank_0_*.log")).read_bytes()
    source = source.replace(b'"name": "bytecode_tracing",', b'"name": "bytecode_tracing"', 1)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "dedicated_log_torch_trace_rank_0_x.log").write_bytes(source)
    code, events, _ = write(tmp_path, str(folder))
    assert code == 0 and sum(e["ph"] != "M" for e in events) == 44 - 1
    assert "1 unreadable events skipped" in capsys.readouterr().err


def test_never_writes_in_the_folder_it_reads(tmp_path, capsys):
    folder = tmp_path / "trace"
    folder.mkdir()
    for path in MULTI.glob("*.log"):
        (folder / path.name).write_bytes(path.read_bytes())
    before = sorted(p.name for p in folder.iterdir())
    assert main(["--perfetto", str(folder / "out.json"), str(folder)]) == 2
    assert "in a folder it reads" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == before


@pytest.mark.parametrize("extra", [["--follow"], ["--demo"]])
def test_perfetto_is_for_logs_that_are_there(tmp_path, capsys, extra):
    assert main(["--perfetto", str(tmp_path / "x.json"), *extra, str(MULTI)]) == 2
    assert "--perfetto writes the Chrome trace" in capsys.readouterr().err


def test_with_the_report_too(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["--perfetto", str(out), "--report", str(MULTI)]) == 0
    captured = capsys.readouterr()
    assert "Totals:" in captured.out and "wrote 245 chromium events" in captured.err
    assert len(json.loads(out.read_bytes())["traceEvents"]) == 245 + 8


def test_events_of_every_wrong_shape_are_skipped(tmp_path, capsys):
    from synthetic_chromium import EVENTS, write_trace

    write_trace(tmp_path / "in")
    code, events, _ = write(tmp_path, str(tmp_path / "in"))
    assert code == 0
    timed = [e for e in events if e["ph"] != "M"]
    assert [e["name"] for e in timed] == [event["name"] for _, event, _, ok in EVENTS if ok] == \
        ["dynamo", "x", "i", "dynamo"]
    assert all(e["args"]["compile_id"] == "0/0" and e["pid"] == 0 for e in timed)
    assert timed[2]["args"]["value"] == [1, 2]  # args that were not an object, kept
    assert f"{sum(not ok for *_, ok in EVENTS)} unreadable events skipped" in capsys.readouterr().err


def test_the_same_events_as_tlparse_all_ranks(tmp_path):
    """tlparse --all-ranks-html merges the ranks' chromium_events.json with pid = rank: the same
    events, rank by rank (tlview adds process names and the attempt to compile ids)."""
    tlparse = shutil.which("tlparse", path=str(Path(sys.executable).parent)) or "tlparse"
    subprocess.run([tlparse, str(MULTI), "--all-ranks-html", "-o", str(tmp_path / "tl"), "--no-browser", "--overwrite"],
                   check=True, capture_output=True)
    theirs = json.loads((tmp_path / "tl" / "chromium_events.json").read_bytes())
    _, ours, _ = write(tmp_path, str(MULTI))

    def key(e):
        return (e["pid"], e["name"], e["ph"], e["ts"], e["tid"])

    assert Counter(map(key, theirs)) == Counter(key(e) for e in ours if e["ph"] != "M")
