"""Files tlview writes (`--perfetto OUT`, report/output_file.py): never over an input, never into a
folder it reads, never half-written; made with the mode a new file gets."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from conftest import CORPUS, run_cli, run_cli_bytes

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
