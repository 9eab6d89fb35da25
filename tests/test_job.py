"""`tlview --run -- COMMAND` (source/job.py): the command line after --run is the command, a
program that cannot run is one line, the job is a process group of its own, ended whole, and in
a real terminal tlview follows the trace the job writes."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from conftest import (
    CORPUS,
    Deadline,
    tlview_command,
)


def test_run_takes_everything_after_it_as_the_command():
    from tlview.cli import split_command

    assert split_command(["--run", "--", "python", "train.py", "--lr", "3"]) == \
        (["--run"], ["python", "train.py", "--lr", "3"])
    assert split_command(["--poll", "--run", "python", "x.py"]) == (["--poll", "--run"], ["python", "x.py"])


def test_run_of_a_missing_program_is_one_line(capsys):
    from tlview.cli import main

    assert main(["--run", "--", "/nonexistent/tool", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot run /nonexistent/tool" in err


def test_a_wrapped_job_ends_whole(tmp_path):
    """`--run -- sh -c 'python job.py'`: after `q` the python under the shell ran on; the job is
    a process group of its own, ended whole."""
    import sys

    from tlview.source.job import Job

    pid_file = tmp_path / "child.pid"
    child = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    job = Job(["sh", "-c", f"{sys.executable} -c \"{child}\"; echo after"], "")
    deadline = Deadline(60)
    while not (pid_file.exists() and pid_file.read_text()) and not deadline.passed():
        job.process.poll()  # (a condition, not a sleep: the child writes its pid once it runs)
    pid = int(pid_file.read_text())
    job.stop()
    try:
        os.kill(pid, 0)
        alive = not Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (ProcessLookupError, FileNotFoundError):
        alive = False
    assert not alive, "the job's python outlived the job"
    shutil.rmtree(job.folder, ignore_errors=True)


def test_run_as_the_readme_writes_it(terminal, tmp_path):
    """`tlview --run -- python train.py`: the job gets TORCH_TRACE, tlview follows it."""
    trace = next((CORPUS / "model" / "trace").glob("*.log"))
    job = tmp_path / "job.py"
    job.write_text(f"import os, shutil\nshutil.copy({str(trace)!r}, os.path.join(os.environ['TORCH_TRACE'], "
                   "'dedicated_log_torch_trace_job.log'))\n")
    term = terminal(f"{tlview_command()} --run -- {sys.executable} {job}")
    screen = term.wait_for("2 compile ids")
    assert "job finished" in term.wait_for("job finished") or "■ ended" in screen
    term.wait_for("■ ended")
    term.keys("q")
    screen = term.wait_for("EXITED:0")
    assert "the job's logs are in" in screen and "Traceback" not in screen
