"""What tlview is given to read (source/discover.py): a pipe that brings nothing, paths that are
pipes, devices or compressed, a byte-order mark, odd names and links in a folder. Every case ends
quickly with a true one-line message, and gives the terminal back.

(An output that closes or fills up: test_output_file.py; signals: test_terminal_session.py.)"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import CORPUS, json_for, one_line, run_cli, tlview_command, tlview_process

from tlview.report.rich_text import counted

TRACE_DIR = CORPUS / "recompiles" / "trace"
TRACE = next(TRACE_DIR.glob("*.log"))
TEXT = CORPUS / "recompiles" / "torch_logs.txt"
TIMEOUT = 60  # generous: a case that blocks (a pipe opened for reading) fails here, not forever
BOM = b"\xef\xbb\xbf"
GIVEN_BACK = "0 1 0 0 0 0 0"  # main screen, cursor shown, no mouse reporting of any kind (Terminal.state)


@pytest.fixture(scope="module")
def truth() -> dict:
    return json_for(TRACE_DIR)


# ---- stdin -----------------------------------------------------------------------------------

TEMP_NAMES = ("/proc/self/fd", "tlview-stdin")


@pytest.mark.parametrize("feed, message", [
    ("true", "tlview: stdin closed before anything came through the pipe"),
    ("echo 'hello from train.py'",
     "tlview: stdin closed with no TORCH_TRACE or TORCH_LOGS line in it (1 line read)"),
    (f"gzip -c {TRACE}", "tlview: stdin is compressed (gzip)"),
])
def test_a_pipe_that_brings_no_log_line_ends_with_a_message(terminal, feed, message):
    term = terminal(f"{feed} | {tlview_command()} --follow -")
    screen = term.wait_for("EXITED:", timeout=TIMEOUT)
    assert "EXITED:2" in screen and message in screen
    assert not any(name in screen for name in TEMP_NAMES)
    assert term.state() == GIVEN_BACK


def test_waiting_for_stdin_names_it_stdin_and_a_trace_piped_in_is_a_trace(terminal, tmp_path, truth):
    gate = tmp_path / "gate"
    os.mkfifo(gate)  # the writer starts when the test says so: no sleep
    term = terminal(f"(read go < {gate}; cat {TRACE}) | {tlview_command()} --follow -")
    screen = term.wait_for("waiting for stdin to hold a log line")
    assert not any(name in screen for name in TEMP_NAMES)
    with open(gate, "w") as go:
        go.write("go\n")
    term.wait_for("■ ended")
    records = counted(truth["totals"]["records"], "record")
    screen = term.wait_for(records)  # (the counts come with the status line's next refresh)
    assert records in screen and counted(len(truth["compiles"]), "compile id") in screen
    assert not any(name in screen for name in TEMP_NAMES)
    term.keys("q")
    assert "EXITED:0" in term.wait_for("EXITED:")


# ---- paths that are pipes or devices ---------------------------------------------------------

def test_a_named_pipe_is_never_opened(tmp_path):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    for args in (["--json", str(fifo)], ["--report", str(fifo)], ["--follow", str(fifo)]):
        done = tlview_process(*args)  # opening it would block until a writer came: the timeout would fail
        assert done.returncode == 2
        assert one_line(done.stderr) == (f"tlview: {fifo} is a named pipe: pipe it in with "
                                         f"`cat {fifo} | tlview --follow -`")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_not_a_log_file(device, capsys):
    for args in (["--json", device], ["--report", device], ["--follow", device], [device]):
        assert run_cli(*args)[0] == 2
        assert capsys.readouterr().err.strip() == f"tlview: {device} is a device, not a log file"


def test_a_folder_skips_pipes_and_devices_with_a_note(tmp_path, truth):
    (tmp_path / TRACE.name).symlink_to(TRACE)
    os.mkfifo(tmp_path / "dedicated_log_torch_trace_fifo.log")
    (tmp_path / "zero.log").symlink_to("/dev/zero")
    done = tlview_process("--json", str(tmp_path))  # a pipe opened would block: the timeout would fail
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert len(doc["compiles"]) == len(truth["compiles"])
    assert f"{tmp_path}/dedicated_log_torch_trace_fifo.log: a named pipe, skipped" in doc["notes"]
    assert f"{tmp_path}/zero.log: a device, skipped" in doc["notes"]


# ---- compressed files ------------------------------------------------------------------------

COMPRESSORS = [(".gz", gzip.compress, "gzip", "zcat"), (".bz2", bz2.compress, "bzip2", "bzcat"),
               (".xz", lzma.compress, "xz", "xzcat")]


@pytest.mark.parametrize("suffix, compress, fmt, tool", COMPRESSORS)
def test_a_compressed_trace_says_how_to_read_it(tmp_path, capsys, suffix, compress, fmt, tool):
    packed = tmp_path / f"x.log{suffix}"
    packed.write_bytes(compress(TRACE.read_bytes()))
    hint = (f"{packed} is compressed ({fmt}): {tool} {packed} > {tmp_path / 'x.log'} "
            f"(or {tool} {packed} | tlview --follow -)")
    for args in (["--json", str(packed)], ["--follow", str(packed)], [str(packed)]):
        assert run_cli(*args)[0] == 2
        assert capsys.readouterr().err.strip() == f"tlview: {hint}"


def test_a_folder_of_compressed_traces_says_how_to_read_them(tmp_path, capsys, truth):
    packed = tmp_path / "dedicated_log_torch_trace_rank_0.log.gz"
    packed.write_bytes(gzip.compress(TRACE.read_bytes()))
    assert run_cli("--json", str(tmp_path))[0] == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tlview: {tmp_path}: no TORCH_TRACE file or TORCH_LOGS text in this folder")
    assert f"{packed} is compressed (gzip): zcat {packed} > {str(packed)[:-3]}" in err
    (tmp_path / TRACE.name).symlink_to(TRACE)  # beside a trace: read the trace, note the other
    doc = json_for(tmp_path)
    assert len(doc["compiles"]) == len(truth["compiles"])
    assert any(n.startswith(f"{packed} is compressed (gzip): zcat") for n in doc["notes"])


# ---- a byte-order mark -----------------------------------------------------------------------

def _first_record(data: bytes) -> bytes:
    """The trace's first record only: its envelope is the one trace line the sniff can see."""
    end = data.index(b"\nV", 1) + 1
    return data[:end]


@pytest.mark.parametrize("content, kind", [
    (lambda: _first_record(TRACE.read_bytes()), "trace"),
    (lambda: next(line for line in TEXT.read_bytes().splitlines(keepends=True)
                  if line.startswith((b"V", b"I", b"W", b"[rank"))), "text"),
])
def test_a_byte_order_mark_does_not_hide_the_kind(tmp_path, content, kind):
    from tlview.source.discover import find_logs, sniff

    path = tmp_path / "with_bom.log"
    path.write_bytes(BOM + content())
    assert sniff(str(path)) == kind
    found, _notes = find_logs(str(path))
    assert [f.kind for f in found] == [kind]


# ---- odd names and links in a folder ---------------------------------------------------------

def test_a_file_name_that_is_not_utf8(tmp_path, truth):
    from tlview.source.discover import find_logs

    folder = os.fsencode(tmp_path)
    name = b"dedicated_log_torch_trace_\xff.log"
    with open(os.path.join(folder, name), "wb") as f:
        f.write(TRACE.read_bytes())
    found, _ = find_logs(str(tmp_path))
    assert [os.fsencode(f.path) for f in found] == [os.path.join(folder, name)]
    code, out = run_cli("--json", str(tmp_path))
    assert code == 0, out
    doc = json.loads(out)
    assert len(doc["compiles"]) == len(truth["compiles"])
    assert [s["path"] for s in doc["sources"]] == [f"{tmp_path}/dedicated_log_torch_trace_\\xff.log"]
    code, out = run_cli("--report", str(tmp_path))  # a strict UTF-8 stdout, as in a UTF-8 locale
    assert code == 0 and "dedicated_log_torch_trace_\\xff.log" in out


def test_links_that_loop_or_lead_nowhere(tmp_path, truth):
    (tmp_path / TRACE.name).symlink_to(TRACE)
    (tmp_path / "loop").symlink_to(".")  # the folder again: its files are not read twice
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    (tmp_path / "dedicated_log_torch_trace_rank_1.log").symlink_to("gone.log")
    done = tlview_process("--json", str(tmp_path))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [s["path"] for s in doc["sources"]] == [str(tmp_path / TRACE.name)]
    assert len(doc["compiles"]) == len(truth["compiles"])
    notes = doc["notes"]
    assert f"{tmp_path}/a: a symbolic link loop, skipped" in notes
    assert f"{tmp_path}/b: a symbolic link loop, skipped" in notes
    broken = tmp_path / "dedicated_log_torch_trace_rank_1.log"
    assert f"{broken}: a broken symbolic link (to gone.log), skipped" in notes


def test_a_link_loop_or_a_broken_link_given_as_the_path(tmp_path, capsys):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    (tmp_path / "trace.log").symlink_to("gone.log")
    assert run_cli("--json", str(tmp_path / "a"))[0] == 2
    assert capsys.readouterr().err.strip() == f"tlview: {tmp_path}/a: a symbolic link loop"
    assert run_cli("--json", str(tmp_path / "trace.log"))[0] == 2
    broken = tmp_path / "trace.log"
    assert capsys.readouterr().err.strip() == f"tlview: {broken}: a broken symbolic link (to gone.log)"


def _json_as_nobody(folder: Path) -> tuple[int, str]:
    """`tlview --json folder` in a forked child that dropped root (its modules imported before:
    `nobody` may not read the interpreter's folders)."""
    import tlview.index.indexing
    import tlview.report.summary  # noqa: F401

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_fd)
            os.setgid(65534)
            os.setuid(65534)
            code, out = run_cli("--json", str(folder))
            os.write(write_fd, out.encode())
        finally:
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        out = pipe.read().decode()
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), out


def test_an_unreadable_file_is_noted(truth):
    """A file tlview may not read is told with its path. Root reads any file: as root, the check
    runs as the unprivileged user `nobody` (in a folder of its own that it may enter)."""
    folder = Path(tempfile.mkdtemp(prefix="tlview-unreadable-"))
    try:
        folder.chmod(0o755)
        (folder / TRACE.name).write_bytes(TRACE.read_bytes())
        locked = folder / "dedicated_log_torch_trace_rank_1.log"
        locked.write_bytes(TRACE.read_bytes())
        locked.chmod(0)
        code, out = _json_as_nobody(folder) if os.geteuid() == 0 else run_cli("--json", str(folder))
        assert code == 0, out
        doc = json.loads(out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert len(doc["compiles"]) == len(truth["compiles"])
    assert f"{locked}: not readable (permission denied), skipped" in doc["notes"]


def _all_fixture_logs() -> list[Path]:
    from conftest import FIXTURES
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".log", ".txt", ".json", ""))


@pytest.mark.parametrize("head", [
    # the line that tells starts before the first read's end and ends after it
    lambda: b"\t" * 1 + b"x" * 4000 + b"\n" + _first_record(TRACE.read_bytes()),
    # only payload-like lines in the first read; the trace line comes after
    lambda: b"\tpayload line\n" * 400 + _first_record(TRACE.read_bytes()),
    # 200 lines that tell nothing in the first read: the 201st line must not count
    lambda: b"x\n" * 200 + _first_record(TRACE.read_bytes()),
    lambda: b"x\n" * 199 + _first_record(TRACE.read_bytes()),
    # no LF in the first read at all (bare CR line ends)
    lambda: _first_record(TRACE.read_bytes()).replace(b"\n", b"\r") * 40,
    # text whose first read holds a traceback but no log line
    lambda: b"Traceback (most recent call last)\n" + b"  File x\n" * 600
            + b"torch._dynamo.exc.Unsupported: boom\n",
])
def test_the_sniff_read_in_two_steps_tells_what_the_whole_head_tells(tmp_path, head):
    from tlview.source.discover import SNIFF_BYTES, read_head, sniff_bytes, sniff_file

    path = tmp_path / "head.log"
    path.write_bytes(head())
    kind, _ = sniff_file(str(path))
    assert kind == sniff_bytes(read_head(str(path)))
    assert len(read_head(str(path))) <= SNIFF_BYTES


def test_the_sniff_read_in_two_steps_agrees_on_every_fixture_file():
    from tlview.source.discover import read_head, sniff_bytes, sniff_file

    files = _all_fixture_logs()
    assert len(files) > 100
    told = {}
    for path in files:
        kind, _ = sniff_file(str(path))
        assert kind == sniff_bytes(read_head(str(path))), path
        told[kind] = told.get(kind, 0) + 1
    assert told.get("trace", 0) > 50 and told.get("text", 0) > 10 and told.get(None, 0) > 10, told
