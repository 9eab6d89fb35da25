"""Bad command lines: a clear message and exit code 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import CORPUS, run_cli

from tlview.cli import main


@pytest.mark.parametrize("args, message", [
    (["--json", "--filter", "recompile,bogus", str(CORPUS / "model" / "trace")],
     ("unknown filter word 'bogus'; valid: recompiles, graph_breaks, guards, dynamic, perf_hints, output_code, "
      "errors, restarts")),
    (["--report", "--rank", "7", str(CORPUS / "distributed" / "trace")], "rank 7 is not in these logs; ranks: 0, 1"),
    (["--json", "--rank", "0", str(CORPUS / "model" / "trace")], "rank 0: these logs have no ranks"),
    (["--json", "--filter", "rank:x", str(CORPUS / "model" / "trace")], "rank:x is not a rank number"),
    (["--json", "--follow", str(CORPUS / "model" / "trace")], "--follow is for the explorer"),
    (["--run"], "--run needs a command"),
    ([], "give a TORCH_TRACE folder or file"),
    (["--follow", "/nonexistent-root-dir/sub/trace"], "neither it nor its parent folder exists"),
])
def test_bad_command_lines(capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_unreadable_path(capsys, monkeypatch, tmp_path):
    path = tmp_path / "t.log"
    path.write_bytes(next((CORPUS / "model" / "trace").glob("*.log")).read_bytes())
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(path) else real_access(p, mode))
    assert main(["--report", str(path)]) == 2
    assert "not readable (permission denied)" in capsys.readouterr().err


def test_argparse_errors_exit_2_without_traceback():
    out = subprocess.run([sys.executable, "-m", "tlview", "--rank", "x", "p"], capture_output=True, text=True)
    assert out.returncode == 2 and "invalid int value" in out.stderr and "Traceback" not in out.stderr


def test_tui_with_an_unknown_rank_says_so(capsys):
    assert main(["--rank", "3", str(CORPUS / "distributed" / "trace")]) == 2
    assert "rank 3 is not in these logs; ranks: 0, 1" in capsys.readouterr().err


def test_an_internal_error_is_one_line(capsys, monkeypatch):
    from tlview.report import summary

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(summary, "build_summary", broken)
    assert main(["--json", str(CORPUS / "model" / "trace")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: RuntimeError: boom" in err and "Traceback" not in err


@pytest.mark.parametrize("what, logs", [("text", CORPUS / "recompiles" / "torch_logs.txt"),
                                        ("trace", next((CORPUS / "recompiles" / "trace").glob("*.log")))])
def test_a_pipe_reads_as_its_file_headless(what, logs):
    """`cmd | tlview --json -` (and --report): the pipe read to its end, as the file would be."""
    def run(*args: str, stdin=None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "tlview", *args], capture_output=True, stdin=stdin, timeout=120)

    import json

    with open(logs, "rb") as pipe_in:
        piped = run("--json", "-", stdin=pipe_in)
    assert piped.returncode == 0, piped.stderr
    from_pipe, from_file = json.loads(piped.stdout), json.loads(run("--json", str(logs)).stdout)
    assert from_pipe["totals"] == from_file["totals"] and from_pipe["totals"]["compile_ids"] > 0
    statuses = lambda doc: [(e["id"], e["status"]) for e in doc["compiles"]]
    assert statuses(from_pipe) == statuses(from_file)
    with open(logs, "rb") as pipe_in:
        report = run("--report", "-", stdin=pipe_in)
    assert report.returncode == 0 and b"[0/1]" in report.stdout


def test_an_empty_or_too_big_pipe_says_so(tmp_path):
    empty = subprocess.run([sys.executable, "-m", "tlview", "--json", "-"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60)
    assert empty.returncode == 2 and "stdin was empty" in empty.stderr
    with open(CORPUS / "recompiles" / "torch_logs.txt", "rb") as pipe_in:
        big = subprocess.run([sys.executable, "-m", "tlview", "--report", "-"], stdin=pipe_in, capture_output=True,
                             text=True, timeout=60, env={**os.environ, "TLVIEW_STDIN_MAX": "100K"})
    assert big.returncode == 2 and "stdin passed TLVIEW_STDIN_MAX (102,400 bytes)" in big.stderr


@pytest.mark.parametrize("args", [["--json"], ["--report"], ["--fail-on", "recompiles"]])
def test_a_headless_output_ends_the_process_without_tearing_it_down(args):
    """Python's teardown freed the index object by object after the output was written (17 ms
    of a 100 MB trace's --json, 6% of it): the process ends at once, its output whole and its
    exit code kept (atexit handlers, part of that teardown, do not run)."""
    import json

    trace = str(next((CORPUS / "recompiles" / "trace").glob("*.log")))
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('torn down', file=sys.stderr))\n"
            "from tlview.cli import entry\n"
            f"sys.argv = ['tlview', *{args!r}, {trace!r}]\n"
            "entry()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    expected = subprocess.run([sys.executable, "-m", "tlview", *args, trace], capture_output=True, text=True,
                              timeout=60)
    assert "torn down" not in done.stderr
    assert done.returncode == expected.returncode == (1 if "--fail-on" in args else 0)
    assert done.stdout == expected.stdout and done.stdout
    if args == ["--json"]:
        assert json.loads(done.stdout)["totals"]["compile_ids"] > 0


def test_fail_on_that_names_nothing_is_a_bad_command_line(capsys):
    """`--fail-on ''` opened the explorer, which never ended with output to a file."""
    for words in ("", " , "):
        code, _ = run_cli("--fail-on", words, str(CORPUS / "graph_breaks" / "trace"))
        assert code == 2 and "--fail-on names nothing" in capsys.readouterr().err


def test_a_closed_stdin_is_said_not_an_internal_error():
    """`tlview PATH <&-`: the explorer reads its keys from stdin; --json needs none."""
    import subprocess
    import sys

    trace = str(CORPUS / "graph_breaks" / "trace")
    command = f"{sys.executable} -m tlview {{}} {trace} <&-"
    explorer = subprocess.run(["bash", "-c", command.format("")], capture_output=True, text=True,
                              timeout=60, check=False)
    assert explorer.returncode == 2 and "standard input is closed" in explorer.stderr
    assert "internal error" not in explorer.stderr and "Traceback" not in explorer.stderr
    headless = subprocess.run(["bash", "-c", command.format("--json")], capture_output=True, text=True,
                              timeout=60, check=False)
    assert headless.returncode == 0 and headless.stdout.startswith("{")
