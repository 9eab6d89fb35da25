"""The user's own source at each problem, and a bundle for a bug report, redacted or not (issue
#25), on a program with distinctive names (fixtures/generated/redact, torch 2.15): its trace names
/tmp/acme_quokka_lab/zephyr_secret_model.py, read here with --source-root as a trace copied from
another machine is."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from conftest import CORPUS, GENERATED, json_for, ready, run_cli, until

RUN = GENERATED / "redact"
PROGRAM = RUN / "zephyr_secret_model.py"
ROOT = f"/tmp/acme_quokka_lab={RUN}"  # where the trace's files are here
BREAK_LINE = 'print("zephyr gate: hidden", tuple(axolotl_hidden.shape))  # a graph break'


def _break(doc: dict) -> dict:
    return next(d for c in doc["compiles"] for d in c["diagnosis"] if d["kind"] == "graph_break")


# ---- source in context --------------------------------------------------------------------------

def test_json_gives_each_problem_its_lines_the_line_marked():
    doc = json_for(RUN / "trace", "--source-root", ROOT)
    source = _break(doc)["source"]
    assert source["path"] == "/tmp/acme_quokka_lab/zephyr_secret_model.py" and source["line"] == 19
    assert source["read_from"] == str(PROGRAM)
    assert [line["number"] for line in source["lines"]] == [16, 17, 18, 19, 20, 21]  # 3 before, 2 after
    assert [line["text"].strip() for line in source["lines"] if line["marked"]] == [BREAK_LINE]
    recompile = next(p for c in doc["compiles"] for p in c["verdict"] if p["kind"] == "recompile")
    marked = [line["text"].strip() for line in recompile["source"]["lines"] if line["marked"]]
    assert marked == ["capybara_score = axolotl_hidden.sum() * PANGOLIN_FACTOR"]  # the guard's own line
    assert doc["source_missing"] == []


def test_report_and_markdown_show_the_lines(monkeypatch):
    monkeypatch.chdir(RUN.parent)  # NEW may be relative to where tlview runs
    code, report = run_cli("--report", "--source-root", f"/tmp/acme_quokka_lab={RUN.name}", str(RUN / "trace"))
    assert code == 0
    assert f"▶ 19 │         {BREAK_LINE}" in report
    assert "  17 │     def forward(self, ocelot_input):" in report
    code, markdown = run_cli("--report", "--markdown", "--source-root", ROOT, str(RUN / "trace"))
    assert code == 0
    blocks = [b.split("\n```", 1)[0].split("\n") for b in markdown.split("```python\n")[1:]]
    # (the two recompiles, alike but for the global's value, are one section: one block)
    assert [b[0] for b in blocks] == ["# zephyr_secret_model.py, line 20", "# zephyr_secret_model.py, line 19"]
    block = blocks[-1]  # the graph break's (the recompiles' come first)
    assert block[4] == f"        {BREAK_LINE}  # <-- here" and len(block) == 7


def test_a_file_not_here_is_said_once_with_the_flag_to_use(tmp_path):
    elsewhere = f"/tmp/acme_quokka_lab={tmp_path}"  # the files are not there either
    doc = json_for(RUN / "trace", "--source-root", elsewhere)
    assert doc["source_missing"] == [{"path": "/tmp/acme_quokka_lab/zephyr_secret_model.py", "why": "not found"}]
    assert _break(doc)["source"] is None
    code, report = run_cli("--report", "--source-root", elsewhere, str(RUN / "trace"))
    assert code == 0 and report.count("--source-root /tmp/acme_quokka_lab=") == 1
    assert "▶" not in report


def test_a_path_from_the_trace_opens_only_a_regular_py_file(tmp_path):
    """Whatever a trace names: a FIFO, a device, a system file, a folder, a big file, another
    suffix: never opened (a FIFO would block, a device read for ever)."""
    from tlview.source.user_source import SOURCE_MAX, read_user_file

    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "folder.py").mkdir()
    big = tmp_path / "big.py"
    with open(big, "wb") as f:
        f.truncate(SOURCE_MAX + 1)
    (tmp_path / "notes.txt").write_text("x = 1\n")
    (tmp_path / "passwd.py").symlink_to("/etc/passwd")
    started = time.monotonic()
    said = {name: read_user_file(str(tmp_path / name)) for name in
            ("fifo.py", "zero.py", "folder.py", "big.py", "notes.txt", "passwd.py")}
    said["etc"] = read_user_file("/etc/passwd.py")
    said["relative"] = read_user_file("zephyr_secret_model.py")
    assert time.monotonic() - started < 5
    assert all(text is None and why for text, why in said.values()), said
    assert said["fifo.py"][1] == "not a regular file" and said["zero.py"][1] == "a system folder's file"
    assert read_user_file(str(PROGRAM))[0] == PROGRAM.read_text()


def test_a_link_out_of_its_folder_is_not_read(tmp_path):
    """A `.py` that links to a secret elsewhere (`--report` printed 48 lines of it); a link that
    stays below its own folder, and a plain file, are read."""
    from tlview.source.user_source import read_user_file

    secret = tmp_path / "home" / ".ssh" / "id_ed25519.py"
    secret.parent.mkdir(parents=True)
    secret.write_text("PRIVATE KEY\n")
    project = tmp_path / "home" / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "model.py").write_text("x = 1\n")
    (project / "train.py").symlink_to(secret)
    (project / "model.py").symlink_to(project / "src" / "model.py")
    assert read_user_file(str(project / "train.py")) == (None, "a link out of its folder")
    assert read_user_file(str(project / "model.py")) == ("x = 1\n", "")
    assert read_user_file(str(project / "src" / "model.py")) == ("x = 1\n", "")


def test_a_folder_link_on_the_way_out_of_the_source_root_is_not_read(tmp_path):
    """`--source-root /home/user=NEW` where `NEW/job` links to `../outdir`: `--report` printed 54
    lines of `outdir/train.py`, as only the file's own link was checked; a folder link that
    stays below NEW, and NEW itself a link, are followed."""
    from tlview.source.user_source import SourceFiles, parse_roots, read_user_file

    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "train.py").write_text("hunter2 = 1\n")
    new = tmp_path / "user2"
    (new / "src" / "pkg").mkdir(parents=True)
    (new / "src" / "pkg" / "model.py").write_text("x = 1\n")
    (new / "job").symlink_to("../outdir")
    (new / "lib").symlink_to("src")
    (tmp_path / "alias").symlink_to("user2")
    files = SourceFiles(parse_roots([f"/home/user={new}"]))
    assert files.text("/home/user/job/train.py") is None
    assert files.missing["/home/user/job/train.py"] == "a link out of the --source-root folder"
    assert files.text("/home/user/lib/pkg/model.py") == "x = 1\n"
    assert SourceFiles(parse_roots([f"/home/user={tmp_path / 'alias'}"])).text(
        "/home/user/src/pkg/model.py") == "x = 1\n"
    assert read_user_file(str(new / "job" / "train.py"), str(new)) == (
        None, "a link out of the --source-root folder")


def test_a_fifo_where_the_source_should_be_never_blocks_the_report(tmp_path):
    os.mkfifo(tmp_path / "zephyr_secret_model.py")
    done = subprocess.run([sys.executable, "-m", "tlview", "--report", "--source-root",
                           f"/tmp/acme_quokka_lab={tmp_path}", str(RUN / "trace")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Why, and what to do" in done.stdout
    assert "▶ 19" not in done.stdout


@pytest.mark.asyncio
async def test_the_panes_show_the_lines_at_each_problem():
    from tlview.ui.app import TlviewApp
    from tlview.ui.pane import plain_text
    from tlview.ui.payload_view import PayloadView

    app = TlviewApp(str(RUN / "trace"), source_roots=[("/tmp/acme_quokka_lab", str(RUN))])
    async with app.run_test(size=(180, 50)) as pilot:
        await ready(app, pilot)
        assert app.tree.select_key(next(e.key for e in app.model.compile_entries() if e.node.id == "0/0"))
        await until(pilot, lambda: app.detail.selection.entry is not None
                    and app.detail.selection.entry.node.id == "0/0", what="[0/0] shown")
        summary = plain_text(app.query_one("#summary-body").content)
        assert f"▶ 19 │         {BREAK_LINE}" in summary
        assert "at /tmp/acme_quokka_lab/zephyr_secret_model.py:19" in summary
        await pilot.press("5")
        breaks = plain_text(app.query_one("#breaks-body").content)
        assert f"▶ 19 │         {BREAK_LINE}" in breaks
        # a recompile: the line its failed guard came from, in Recompiles and in Diff
        guard_line = "▶ 20 │         capybara_score = axolotl_hidden.sum() * PANGOLIN_FACTOR"
        await pilot.press("r")
        await until(pilot, lambda: app.tree.entry.node.id == "1/1", what="the first recompile")
        await pilot.press("4")
        assert guard_line in plain_text(app.query_one("#recompile-head").content)
        await pilot.press("8")
        view = app.query_one("#diff-pane").query_one(PayloadView)
        await until(pilot, lambda: guard_line in view.text, what="the diff with the guard's line")


# ---- the bundle --------------------------------------------------------------------------------------

def _bundle(tmp_path: Path, *flags: str, path: Path = RUN) -> tuple[Path, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "bundle.tar.gz"
    done = subprocess.run([sys.executable, "-m", "tlview", "--bundle", str(out), *flags, str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with tarfile.open(out) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    return tmp_path / "x" / "tlview-bundle", done.stderr


def _program_names() -> set[str]:
    """Every name the program defines, its file and folder names."""
    tree = ast.parse(PROGRAM.read_text())
    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg) and n.arg != "self"}
    names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
    names -= {"forward", "__init__", "main"}  # nn.Module's and Python's own
    return names | {"zephyr_secret_model", "acme_quokka_lab", "zephyr gate: hidden"}


def test_a_redacted_bundle_holds_none_of_the_user_s_names(tmp_path):
    bundle, said = _bundle(tmp_path, "--redact", "--source-root", ROOT)
    names = _program_names()
    assert {"ZephyrGate", "quokka_proj", "narwhal_temperature", "PANGOLIN_FACTOR", "axolotl_hidden",
            "run_ibex_schedule", "tapir_batch"} <= names
    found = {}
    for file in bundle.rglob("*"):
        if file.is_file():
            text = file.read_text(errors="replace")
            for name in names:  # as a name (FX writes it between underscores too), not in a word
                if re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text):
                    found.setdefault(name, []).append(file.name)
    assert found == {}
    readme = (bundle / "README.md").read_text()
    assert "tlview tlview-bundle" in readme and "tlparse" in readme
    assert "class names (`Class_1`" in readme and "string literals" in readme
    assert "redacted:" in said


def test_a_redacted_bundle_reads_as_the_run(tmp_path):
    """The same totals and cause classes as the original, in the trace and in the text; tlparse
    0.4.3 opens it with exit 0; the report in it names nothing of the user's."""
    bundle, _ = _bundle(tmp_path, "--redact", "--source-root", ROOT)
    for original, redacted in ((RUN / "trace", bundle / "trace"), (RUN / "torch_logs.txt", bundle / "torch_logs")):
        a, b = json_for(original), json_for(redacted)
        assert a["totals"] == b["totals"]
        assert [[(p["kind"], p["cause"]) for p in c["verdict"]] for c in a["compiles"]] == \
               [[(p["kind"], p["cause"]) for p in c["verdict"]] for c in b["compiles"]]
        assert b["problems"] == []  # every md5 right
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    done = subprocess.run([tlparse, *map(str, (bundle / "trace").glob("*.log")), "-o", str(tmp_path / "html"),
                           "--no-browser"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = (bundle / "report.md").read_text()
    assert "python_value" in report and "print_or_logging" in report and "/tmp/" not in report


def test_a_plain_bundle_holds_the_files_as_they_are_and_only_problems_keeps_fewer(tmp_path):
    bundle, _ = _bundle(tmp_path / "plain")
    original = next((RUN / "trace").glob("*.log"))
    assert (bundle / "trace" / original.name).read_bytes() == original.read_bytes()
    assert (bundle / "torch_logs" / "torch_logs.txt").read_bytes() == (RUN / "torch_logs.txt").read_bytes()
    # (a run with compiles of no problem: dynamic_shapes has none since perf problems: its 3/0
    # syncs the host in its nonzero)
    run = CORPUS / "distributed"
    only, _ = _bundle(tmp_path / "only", "--only-problems", path=run)
    kept = json_for(only / "trace")
    whole = json_for(run / "trace")
    assert kept["totals"]["records"] < whole["totals"]["records"]
    for key in ("recompiles", "graph_breaks", "restarts", "errors", "perf"):
        assert kept["totals"][key] == whole["totals"][key]


def test_a_bundle_is_never_written_into_the_folder_read(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN / "trace", run)
    code, _ = run_cli("--bundle", str(run / "b.tar.gz"), str(run))
    assert code == 2 and not (run / "b.tar.gz").exists()
    code, _ = run_cli("--redact", str(run))
    assert code == 2


# A headless tlview whose writer stalls half-way (it reads a stdin nobody writes to): mid-write
# for as long as the test wants, whatever the machine's speed.
_STALLED = """
import sys
import tlview.report.bundle, tlview.report.perfetto

def stalled(index, out, *args, **kwargs):
    out.write(b"half of it")
    out.flush()
    sys.stdin.buffer.read()

tlview.report.bundle.write_bundle = tlview.report.perfetto.write_perfetto = stalled
sys.argv[0] = "tlview"
from tlview.cli import entry
entry()
"""


@pytest.mark.parametrize("option, sig", [("--bundle", "SIGTERM"), ("--perfetto", "SIGHUP")])
def test_a_headless_write_ended_by_sigterm_or_sighup_leaves_no_partial_file(tmp_path, option, sig):
    """`kill` during `tlview --bundle OUT` left `.tlview-XXXX.partial` beside OUT (only Ctrl+C
    removed it): SIGTERM and SIGHUP now end a headless run as Ctrl+C does, with 128 + the
    signal's number, and nothing of OUT in its folder."""
    import signal

    from conftest import wait_until

    out = tmp_path / "out"
    out.mkdir()
    child = subprocess.Popen([sys.executable, "-c", _STALLED, option, str(out / "it.out"), str(RUN / "trace")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: any(p.name.endswith(".partial") and p.stat().st_size for p in out.iterdir()),
                   60, "the .partial file written")
        child.send_signal(getattr(signal, sig))
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 128 + getattr(signal, sig), err
    assert list(out.iterdir()) == []
