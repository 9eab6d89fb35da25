"""Files whose lines end in a bare CR (an old Mac editor, a tool that converted them): a CR-only
trace or text log reads as the file it was converted from and says so once, on a file, followed
as it is written, and piped in; CRLF files read as before."""

from __future__ import annotations

import os
import random
import re
import time

import pytest
from conftest import CORPUS, Deadline, json_for, run_cli, tlview_command, without_paths, write_file

from tlview.index.indexing import open_index
from tlview.index.live import LiveIndex
from tlview.report.rich_text import counted
from tlview.report.summary import build_summary

TRACE = next((CORPUS / "recompiles" / "trace").glob("*.log"))
TEXT = CORPUS / "recompiles" / "torch_logs.txt"
DEADLINE = 20  # generous for a loaded machine: a stream read forever fails here, not forever
CR_NOTE = "CR line ends"


def cr_only(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r")


def same_as_original(converted: dict, original: dict) -> None:
    """The same compile ids, records and problems, and exactly one CR-only note more."""
    notes = [p for p in converted["problems"] if p["kind"] == CR_NOTE]
    assert len(notes) == 1 and notes[0]["line"] == 1 and notes[0]["compile_id"] is None
    assert "CR only" in notes[0]["message"]
    converted = without_paths(converted)
    original = without_paths(original)
    strip = lambda problems: [{k: v for k, v in p.items() if k != "file"} for p in problems]
    assert strip([p for p in converted.pop("problems") if p["kind"] != CR_NOTE]) == \
        strip(original.pop("problems"))
    assert converted["totals"].pop("problems") == original["totals"].pop("problems") + 1
    assert converted["compiles"] == original["compiles"]
    assert converted["totals"] == original["totals"]
    assert converted["totals"]["records"] > 400


@pytest.mark.parametrize("parallel", [False, True])
def test_a_cr_only_trace_reads_as_the_original(tmp_path, monkeypatch, parallel):
    if parallel:  # parts of the file indexed in other processes: still one note for the file
        monkeypatch.setattr("tlview.index.indexing.PARALLEL_BYTES", 1 << 20)
        monkeypatch.setenv("TLVIEW_PROCESSES", "3")
    folder = tmp_path / "cr"
    write_file(folder, TRACE.name, cr_only(TRACE.read_bytes()))
    same_as_original(json_for(folder), json_for(TRACE.parent))


def test_a_cr_only_text_log_reads_as_the_original(tmp_path):
    # (a job's print first: the kind is told from the lines, not from the file's first bytes)
    text = b"hello from train.py\n" + TEXT.read_bytes()
    original = write_file(tmp_path / "lf", "torch_logs.txt", text)
    path = write_file(tmp_path / "cr", "torch_logs.txt", cr_only(text))
    same_as_original(json_for(path), json_for(original))


@pytest.mark.parametrize("source", [TRACE, TEXT], ids=["trace", "text"])
def test_the_report_says_cr_only_once(tmp_path, source):
    path = write_file(tmp_path, source.name, cr_only(source.read_bytes()))
    code, out = run_cli("--report", str(path))
    assert code == 0
    assert len(re.findall(r"CR only", out)) == 1, out


@pytest.mark.parametrize("source", [TRACE, TEXT], ids=["trace", "text"])
def test_crlf_files_read_as_before_with_no_note(tmp_path, source):
    path = write_file(tmp_path, source.name, source.read_bytes().replace(b"\n", b"\r\n"))
    doc, original = without_paths(json_for(path)), without_paths(json_for(source))
    assert doc["problems"] == original["problems"] == []
    assert doc["compiles"] == original["compiles"] and doc["totals"] == original["totals"]


@pytest.mark.parametrize("line_end", [b"\r", b"\r\n"], ids=["CR", "CRLF"])
def test_a_trace_followed_as_it_is_written(tmp_path, line_end):
    """Written in pieces, one of them ending on the first CR (of a CRLF, half of it): the line
    ends are told once enough came, and the whole reads as the original."""
    data = TRACE.read_bytes().replace(b"\n", line_end)
    first_cr = data.index(b"\r") + 1
    rng = random.Random(26)
    cuts = sorted({5, first_cr, *rng.sample(range(first_cr + 1, len(data)), 60)})
    path = tmp_path / TRACE.name
    live = LiveIndex(str(path))
    last = 0
    with open(path, "wb") as f:
        for cut in [*cuts, len(data)]:
            f.write(data[last:cut])
            f.flush()
            last = cut
            live.step()
    live.catch_up()
    live.finish()
    doc = build_summary(live.index)
    original = build_summary(open_index(str(TRACE), parallel_ok=False))
    if line_end == b"\r":
        same_as_original(doc, original)
    else:
        assert doc["problems"] == [] and without_paths(doc) == without_paths(original)


def test_a_cr_only_trace_piped_in_is_read_as_it_comes(terminal, tmp_path):
    """Its first records are shown before the rest comes (less than a sniff's worth of it: the
    kind is told from its CR-ended first line), and then all of it."""
    truth = json_for(TRACE)
    gate = tmp_path / "gate"
    os.mkfifo(gate)  # the rest comes when the test says so: no sleep
    converted = write_file(tmp_path, "cr.log", cr_only(TRACE.read_bytes()))
    term = terminal(f"(head -c 30000 {converted}; read go < {gate}; tail -c +30001 {converted}) | "
                    f"{tlview_command()} --follow -")
    deadline = Deadline(DEADLINE)
    while not re.search(r"· [1-9][\d,]* records", screen := term.screen()):
        assert not deadline.passed(), f"no record shown:\n{screen}"
        time.sleep(0.05)
    with open(gate, "w") as go:
        go.write("go\n")
    term.wait_for("■ ended", timeout=DEADLINE)
    records = counted(truth["totals"]["records"], "record")
    screen = term.wait_for(records, timeout=DEADLINE)
    assert counted(len(truth["compiles"]), "compile id") in screen
    term.keys("q")
    assert "EXITED:0" in term.wait_for("EXITED:", timeout=DEADLINE)
