"""Hostile input, round 2 (issue #26): each condition is made here from a real trace, by a
generator, and checked in every mode it reaches."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from conftest import CORPUS, GENERATED, json_for, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))
NAME = "dedicated_log_torch_trace_x.log"
# a terminal title, a clipboard write (OSC 52), a clear screen, and the same as 8-bit C1 controls
EVIL = "\x1b]0;PWNED\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009b31m\u009d0;C1\u0007\u202e"
RAW = [b"\x1b", b"\xc2\x9b", b"\xc2\x9d", b"\x07", "\u202e".encode()]


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def _cli(*args: str) -> subprocess.CompletedProcess:
    """tlview's main() in this process: its exit code, and its stdout and stderr as bytes."""
    from tlview.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    stdout, stderr = io.TextIOWrapper(out, encoding="utf-8"), io.TextIOWrapper(err, encoding="utf-8")
    with redirect_stdout(stdout), redirect_stderr(stderr):
        code = main(list(args))
        stdout.flush()
        stderr.flush()
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


# ---- 1. writes: never over an input, never into a folder read, never half-written --------------

def test_perfetto_to_a_hard_link_of_the_input_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    log = run / NAME
    log.write_bytes(REAL.read_bytes())
    before = _md5(log)
    os.link(log, tmp_path / "p.json")  # another name of the same file, outside the folder
    result = _cli("--perfetto", str(tmp_path / "p.json"), str(run))
    assert result.returncode == 2, result.stderr
    assert b"never writes over a log it reads" in result.stderr
    assert _md5(log) == before and log.stat().st_size == REAL.stat().st_size


def test_perfetto_through_a_symlinked_folder_inside_the_run_is_refused(tmp_path):
    run, outside = tmp_path / "run", tmp_path / "outside"
    run.mkdir()
    outside.mkdir()
    (run / NAME).write_bytes(REAL.read_bytes())
    (run / "sub").symlink_to(outside)
    result = _cli("--perfetto", str(run / "sub" / "p.json"), str(run))
    assert result.returncode == 2 and list(outside.iterdir()) == []


def test_perfetto_interrupted_leaves_the_target_as_it_was(tmp_path, monkeypatch):
    from tlview.report import perfetto

    target = tmp_path / "p.json"
    target.write_text("the previous trace")
    real_write = perfetto.write_perfetto

    def interrupted(index, out, rank):
        out.write(b'{"traceEvents": [')
        raise KeyboardInterrupt  # Ctrl-C half way

    monkeypatch.setattr(perfetto, "write_perfetto", interrupted)
    code, _ = run_cli("--perfetto", str(target), str(REAL.parent))
    assert code == 130  # ended by SIGINT
    assert target.read_text() == "the previous trace"
    assert [p.name for p in tmp_path.iterdir()] == ["p.json"]  # no temporary file left
    monkeypatch.setattr(perfetto, "write_perfetto", real_write)
    code, _ = run_cli("--perfetto", str(target), str(REAL.parent))
    assert code == 0 and json.loads(target.read_text())["traceEvents"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---- 2. any number of records on one line ---------------------------------------------------------

@pytest.mark.parametrize("count", [2, 1_500])
def test_records_glued_on_one_line_are_each_read_once_reported(tmp_path, count):
    envelopes = [line for line in REAL.read_bytes().split(b"\n")
                 if line.startswith(b"V") and b"has_payload" not in line]
    glued = list(itertools.islice(itertools.cycle(envelopes), count))
    (tmp_path / NAME).write_bytes(b"".join(glued) + b"\n")
    doc = json_for(tmp_path)
    assert doc["sources"][0]["records"] == count
    glue = [p for p in doc["problems"] if "glued" in json.dumps(p)]
    assert len(glue) == 1, glue


_HEADER = b"V1121 23:26:41.383000 17404 torch/_logging/structured.py:28] {"


@given(st.lists(st.sampled_from([b"V", b"V1121 ", _HEADER, _HEADER[:30], b"]", b"] {", b" ", b"1", b'"x": 1',
                                 b"Variable", b"\n", b"{"]), max_size=40),
       st.integers(0, 5), st.integers(0, 5))
@settings(max_examples=400, deadline=None)
def test_an_envelope_inside_a_line_is_found_where_the_regular_expression_finds_it(pieces, start, cut):
    """The scanner's memchr-and-match for an envelope inside a line (a record glued on) finds what
    the regular expression's search finds, in any line of "V"s, brackets and headers."""
    from tlview.source.damaged_lines import ENVELOPE_START, glued_envelope

    data = b"".join(pieces)
    end = max(start, len(data) - cut)
    found, expected = glued_envelope(data, start, end), ENVELOPE_START.search(data, start, end)
    assert (found and found.span()) == (expected and expected.span())


@pytest.mark.parametrize("torn_after", [b"{", b'{"', b'{"artifact": {"na'])
def test_a_record_glued_inside_a_torn_envelope_is_read(tmp_path, torn_after):
    """A writer that died right after an envelope's `{` (or inside its kind's name), then another
    process's whole record on the same line: the whole record is read, the torn one reported."""
    envelopes = [line for line in REAL.read_bytes().split(b"\n")
                 if line.startswith(b"V") and b"has_payload" not in line]
    torn = envelopes[0][:envelopes[0].index(b"] {") + 2] + torn_after
    (tmp_path / NAME).write_bytes(b"\n".join([envelopes[0], torn + envelopes[1], envelopes[2]]) + b"\n")
    doc = json_for(tmp_path)
    assert doc["sources"][0]["records"] == 3
    assert [p for p in doc["problems"] if p["line"] == 2], doc["problems"]


# ---- 3. what tlview prints from its input never acts on the terminal --------------------------------

def _with_evil_failure_reasons(folder: Path) -> Path:
    """The failures run, with EVIL in front of every failure reason of its metrics."""
    source = next((GENERATED / "failures" / "trace").glob("*.log"))
    lines = []
    for line in source.read_text().split("\n"):
        head, sep, body = line.partition("] {")
        if sep and line[:1].isalpha() and '"fail_reason"' in body:
            record = json.loads("{" + body)
            metrics = record.get("compilation_metrics") or {}
            if metrics.get("fail_reason"):
                # (at the start of its first two lines: a why quotes one or the other)
                metrics["fail_reason"] = EVIL + metrics["fail_reason"].replace("\n", "\n" + EVIL, 1)
                line = head + "] " + json.dumps(record)
        lines.append(line)
    folder.mkdir()
    (folder / NAME).write_text("\n".join(lines))
    assert "\\u001b]0;PWNED" in (folder / NAME).read_text()  # (json.dumps escapes it)
    return folder


@pytest.mark.parametrize("mode", [["--fail-on", "errors"], ["--report"], ["--report", "--markdown"],
                                  ["--json"], ["--fail-on", "errors", "--compare"]])
def test_escapes_in_a_failure_reason_are_shown_not_run(tmp_path, mode):
    run = _with_evil_failure_reasons(tmp_path / "run")
    paths = [str(run), str(run)] if "--compare" in mode else [str(run)]
    result = _cli(*mode, *paths)
    assert result.returncode in (0, 1), result.stderr
    for raw in RAW:
        assert raw not in result.stdout and raw not in result.stderr, (mode, raw)
    shown = result.stdout.decode()
    if "--json" in mode:
        assert "\\u009b" in shown and "\\u001b" in shown
    else:
        assert "PWNED" in shown and "\\x1b" in shown  # still there, made visible


def test_a_file_name_with_escapes_in_a_folder_without_logs(tmp_path):
    (tmp_path / "a\x1b]0;T\x07b.txt").touch()
    result = _cli("--report", str(tmp_path))
    assert result.returncode == 2
    assert b"\x1b" not in result.stderr and b"\\x1b]0;T\\x07b.txt" in result.stderr


def test_a_file_name_with_a_newline_stays_on_its_line(tmp_path):
    (tmp_path / "dedicated_log_torch_trace_a\nb.log").write_bytes(REAL.read_bytes())
    for mode in (["--report"], ["--report", "--markdown"]):
        out = _cli(*mode, str(tmp_path)).stdout.decode()
        line = next(line for line in out.split("\n") if "dedicated_log_torch_trace_a" in line)
        assert "dedicated_log_torch_trace_a\\x0ab.log" in line, (mode, line)


# ---- 4. many ranks: work in one pass over the nodes and the files, not one a rank -------------

def _first_records(count: int) -> bytes:
    lines = REAL.read_bytes().splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if not line.startswith(b"\t")]
    return b"".join(lines[:starts[count]])


class _CountedIterations(list):
    iterations = 0

    def __iter__(self):
        type(self).iterations += 1
        return super().__iter__()


def _rank_files(folder: Path, ranks: int) -> Path:
    data = _first_records(3)
    for rank in range(ranks):
        (folder / f"dedicated_log_torch_trace_rank_{rank}_x.log").write_bytes(data)
    return folder


def test_many_ranks_in_the_run_pane_are_runs_and_a_bounded_timeline(tmp_path):
    """The Run pane of 600 ranks: a timeline of the first ranks that says how many more there
    are, and the ranks as one run (it was 5,039 lines and 5.6 s to show at 1,000 ranks)."""
    from rich.console import Console

    from tlview.index.indexing import open_index
    from tlview.report.timeline_look import LANES_DRAWN
    from tlview.ui.run_pane import run_view

    console = Console(file=io.StringIO(), width=134)
    console.print(run_view(open_index(str(_rank_files(tmp_path, 600))), ..., 134))
    lines = console.file.getvalue().splitlines()
    assert "Ranks 0-599" in lines
    assert f"  … {600 - LANES_DRAWN} more ranks or processes not drawn (rank {LANES_DRAWN} to rank 599): " \
           "filter by a rank to see its own timeline" in lines
    assert sum(line.startswith("  rank ") for line in lines) == LANES_DRAWN  # a lane line each
    assert len(lines) < 10 * LANES_DRAWN


def test_many_ranks_are_read_in_one_pass(tmp_path, monkeypatch):
    """600 rank files of 3 records (20,000 took 5 minutes, quadratic): the divergence reads each
    node a bounded number of times, and ordering and naming the ranks scans the files once."""
    from tlview.diagnose.ranks import divergence
    from tlview.domain.compile_node import CompileNode
    from tlview.index.indexing import open_index
    from tlview.views.tree import TreeModel

    ranks = 600
    index = open_index(str(_rank_files(tmp_path, ranks)))
    assert len(index.ranks()) == ranks
    reads = []
    monkeypatch.setattr(CompileNode, "rank", property(lambda node: reads.append(1) or node.group.rank))
    div = divergence(index)
    assert div["ranks"] == list(range(ranks)) and div["compile_ids"] == []  # the ranks agree
    assert len(reads) <= 3 * len(index.nodes), len(reads)
    index.sources = _CountedIterations(index.sources)
    tree = TreeModel(index)
    assert [entry.label for entry in tree.roots[:3]] == ["rank 0", "rank 1", "rank 2"]
    assert len(tree.roots) == ranks
    assert _CountedIterations.iterations <= 3, _CountedIterations.iterations
