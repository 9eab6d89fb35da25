"""What tlview writes. Its stdout: a reader that left early is no error, an output that closes or
fills up is told in one line. Its files (`--perfetto OUT`, report/output_file.py): never over an
input, never into a folder it reads, never half-written; made with the mode a new file gets."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import (
    CORPUS,
    one_line,
    run_cli,
    run_cli_bytes,
    tlview_command,
    tlview_process,
)

TIMEOUT = 60  # generous: a pipeline that blocks fails here, not forever
REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))
NAME = "dedicated_log_torch_trace_x.log"


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def test_perfetto_to_a_hard_link_of_the_input_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    log = run / NAME
    log.write_bytes(REAL.read_bytes())
    before = _md5(log)
    os.link(log, tmp_path / "p.json")  # another name of the same file, outside the folder
    result = run_cli_bytes("--perfetto", str(tmp_path / "p.json"), str(run))
    assert result.returncode == 2, result.stderr
    assert b"never writes over a log it reads" in result.stderr
    assert _md5(log) == before and log.stat().st_size == REAL.stat().st_size


def test_perfetto_through_a_symlinked_folder_inside_the_run_is_refused(tmp_path):
    run, outside = tmp_path / "run", tmp_path / "outside"
    run.mkdir()
    outside.mkdir()
    (run / NAME).write_bytes(REAL.read_bytes())
    (run / "sub").symlink_to(outside)
    result = run_cli_bytes("--perfetto", str(run / "sub" / "p.json"), str(run))
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


@pytest.mark.parametrize("mode", ["--report", "--json"])
def test_a_reader_that_left_is_not_an_error(mode):
    """`tlview --report x | head -1`: the pipe's reader is gone before anything is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write gets EPIPE, as after `head -1` has its line
    try:
        done = tlview_process(mode, str(REAL.parent), stdout=write_end)
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""


@pytest.mark.parametrize("mode, head", [("--report", "head -1"), ("--json", "head -c 10")])
def test_head_in_a_shell_pipeline_exits_0(mode, head):
    pipeline = f"{tlview_command()} {mode} {REAL.parent} | {head} >/dev/null; echo \"exit ${{PIPESTATUS[0]}}\""
    done = subprocess.run(["bash", "-c", pipeline], capture_output=True, text=True, timeout=TIMEOUT,
                          check=False)
    assert done.stdout.strip() == "exit 0" and done.stderr == ""


@pytest.mark.parametrize("mode, what", [("--report", "the report"), ("--json", "the JSON")])
def test_a_full_disk_is_told_in_one_line(mode, what):
    with open("/dev/full", "wb") as full:
        done = tlview_process(mode, str(REAL.parent), stdout=full)
    assert done.returncode == 1
    assert one_line(done.stderr) == f"tlview: cannot write {what}: No space left on device"


@pytest.mark.parametrize("mode, what", [("--report", "the report"), ("--json", "the JSON")])
def test_a_closed_stdout_is_told_in_one_line(mode, what):
    done = tlview_process(shell=f"exec {tlview_command()} {mode} {REAL.parent} >&-")
    assert done.returncode == 1
    assert one_line(done.stderr) == f"tlview: cannot write {what}: stdout is closed"
