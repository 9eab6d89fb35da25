"""A single process (a log of no rank) that died of an exception nothing caught: read from what
Python prints for it (an unprefixed traceback ending in the exception's line) and what follows it
(only torch's at-exit lines), never from a traceback the program printed and went on from. On the
held-out H200 run two_models (fixtures/gpu_perf/runs3.tar.xz), real torch 2.15 CPU runs of
fixtures/process_death (their programs beside them, their exit codes in *.exit.txt) and the
failure catalog's runs (their exit codes in rcs.json)."""

from __future__ import annotations

import json

from conftest import FIXTURES, GENERATED, SIZE, json_for, plain, ready, run_cli, until

from tlview.ui.app import TlviewApp

DEATHS = FIXTURES / "process_death"
CATALOG = FIXTURES / "unseen" / "failure_catalog" / "runs"
# torch's own words for the two_models death: what happened and what to do, quoted as they are
OVERWRITTEN = ("RuntimeError: Error: accessing tensor output of CUDAGraphs that has been overwritten by a "
               "subsequent run. Stack trace: [Could not find stack trace]. To prevent overwriting, clone the "
               "tensor outside of torch.compile() or call torch.compiler.cudagraph_mark_step_begin() before "
               "each model invocation.")


def _two_models(gpu_perf_runs):
    return gpu_perf_runs / "gpu_perf3" / "two_models" / "torch_logs.txt"


def _deaths(path) -> list[dict]:
    death = json_for(path)["divergence"]["job_death"]
    return death["deaths"] if death else []


def test_two_models_died_of_torch_s_cuda_graphs_error_in_json_and_report(gpu_perf_runs):
    log = _two_models(gpu_perf_runs)
    doc = json_for(log)
    (death,) = doc["divergence"]["job_death"]["deaths"]
    assert death == {"ranks": [], "kind": "exception", "message": OVERWRITTEN, "exception": "RuntimeError",
                     "where": {"file": "/work/main/gpurun/program3.py", "line": 75, "function": "two_models"},
                     "log": str(log)}
    said = f"died: {OVERWRITTEN} (at program3.py:75 in two_models)"
    assert doc["job_verdict"] == {"state": "died", "said": said, "rank": None, "compile_id": None}
    assert doc["headline"] == said  # a death is the worst problem, before the graph break
    assert doc["hang_summary"] == []  # one process hangs no peer
    code, out = run_cli("--report", str(log))
    lines = out.splitlines()
    assert code == 0 and lines[1] == said and "Why the job may hang" not in out
    # torch's words are the only advice given for it: no fix of ours
    assert [line for line in lines if "CUDAGraphs" in line or "cudagraph_mark_step_begin" in line] == [said]


async def test_two_models_death_opens_the_explorer_on_its_run_pane(gpu_perf_runs):
    app = TlviewApp(str(_two_models(gpu_perf_runs)))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await until(pilot, lambda: app.job_verdict is not None, what="the verdict")
        said = app.job_verdict.said
        assert said.startswith("died: RuntimeError: Error: accessing tensor output of CUDAGraphs")
        assert said.endswith("(at program3.py:75 in two_models)")
        await until(pilot, lambda: said[:60] in app.query_one("StatusLine").text, what="the status line")
        await until(pilot, lambda: app.detail.active == "run", what="the Run pane")
        body = app.query_one("#run-body")
        await until(pilot, lambda: "Total compile time" in plain(body), what="the Run pane's view")
        assert plain(body).lstrip().startswith("died: RuntimeError: Error: accessing tensor output")


def test_an_uncaught_exception_of_no_rank_is_the_death_with_the_user_s_frame():
    (death,) = _deaths(DEATHS / "uncaught.torch_logs.txt")
    assert (death["ranks"], death["exception"], death["message"]) == ([], "KeyError", "KeyError: 'decoder'")
    assert (death["where"]["line"], death["where"]["function"]) == (13, "load_weights")
    assert (DEATHS / "uncaught.exit.txt").read_text().strip() == "uncaught exit 1"


def test_torch_s_at_exit_lines_after_the_traceback_leave_the_death():
    log = DEATHS / "uncaught_at_exit.torch_logs.txt"
    assert "TorchDynamo compilation metrics" in log.read_text().split("Traceback (most recent call last):")[-1]
    (death,) = _deaths(log)
    assert death["message"] == "AssertionError: activations saturate: max |out| = 1.000"
    assert (death["where"]["line"], death["where"]["function"]) == (17, "main")


def test_a_traceback_printed_then_more_compiles_is_no_death():
    """print_exc and logging.exception, then a new frame's graph break and a recompile: exit 0."""
    log = DEATHS / "caught_then_compiles.torch_logs.txt"
    assert log.read_text().count("\nTraceback (most recent call last):") == 2
    assert _deaths(log) == []
    assert json_for(log)["job_verdict"] is None


def test_each_failure_catalog_run_died_exactly_when_it_exited_1():
    """stderr of each run (default, +dynamo, suppress_errors): a compile error nothing caught is
    a death; under suppress_errors torch logs the error and the program runs on (exit 0)."""
    checked = []
    for rcs_file in sorted(CATALOG.glob("*/rcs.json")):
        for mode, rc in json.loads(rcs_file.read_text()).items():
            log = rcs_file.parent / ("stderr.txt" if mode == "main" else f"stderr_{mode}.txt")
            if rc is None or mode == "note" or not log.exists():
                continue
            code, out = run_cli("--json", str(log))
            if code == 2:  # (no torch log line in it: printed graphs only)
                continue
            death = json.loads(out)["divergence"]["job_death"]
            assert bool(death and death["deaths"]) == (rc == 1), log
            checked.append(rc)
    assert checked.count(1) >= 10 and checked.count(0) >= 10


def test_a_message_that_ends_raised_says_what_was_raised():
    (death,) = _deaths(GENERATED / "crash" / "torch_logs.txt")
    assert death["message"] == ("torch._dynamo.exc.BackendCompilerFailed: backend='broken_backend' raised: "
                                "RuntimeError: broken_backend refuses to compile a graph with 4 nodes")
    # the user's last frame, under torch's own (which called the user's backend)
    assert (death["where"]["file"].rsplit("/", 1)[-1], death["where"]["line"]) == ("crash.py", 14)


def test_the_frame_said_is_the_user_s_last_not_torch_s():
    """A custom op with no fake kernel (fixtures/fixes, exit 1): torch's frames end the traceback."""
    (death,) = _deaths(FIXTURES / "fixes" / "missing_fake_kernel" / "custom_op" / "torch_logs.txt")
    assert death["exception"] == "torch._dynamo.exc.TorchRuntimeError"
    assert (death["where"]["file"].rsplit("/", 1)[-1], death["where"]["line"], death["where"]["function"]) == \
        ("program.py", 16, "main")


def test_torchrun_s_own_traceback_is_its_summary_not_a_death():
    """torchrun raises ChildFailedError with its failure summary: read as the root cause."""
    death = json_for(GENERATED / "dist215" / "raise_runtime" / "torchrun_stderr.txt")["divergence"]["job_death"]
    assert death["deaths"] == [] and death["root_cause"]["rank"] == 0


def _variant(tmp_path, name: str, after: list[str], before: str = "") -> list[dict]:
    """The uncaught run's log with lines written after it (or its traceback changed)."""
    text = (DEATHS / "uncaught.torch_logs.txt").read_text()
    log = tmp_path / name
    log.write_text(before + text + "".join(line + "\n" for line in after))
    return _deaths(log)


AT_EXIT = "I1127 18:29:19.545000 29052 torch/_dynamo/utils.py:967] TorchDynamo compilation metrics:"


def test_what_follows_the_traceback_decides(tmp_path):
    assert _variant(tmp_path, "exit.txt", [AT_EXIT])  # at-exit lines: still dead
    # a compile after it (its compile id after the prefix, or after an artifact's name): it went on
    compile_ = "V1127 18:29:20.100000 29052 torch/_dynamo/guards.py:6374] [0/1] [__recompiles] Recompiling"
    assert not _variant(tmp_path, "compile.txt", [AT_EXIT, compile_])
    artifact = "V1127 18:29:20.100000 29052 torch/_inductor/cudagraph_trees.py:2380] [__cudagraphs] [2/0] Running"
    assert not _variant(tmp_path, "artifact.txt", [artifact])
    # the program's own output after torch's lines: it went on
    assert not _variant(tmp_path, "output.txt", [AT_EXIT, "epoch 3 loss 0.25"])


def test_a_traceback_cut_before_its_exception_or_logged_by_torch_is_no_death(tmp_path):
    text = (DEATHS / "uncaught.torch_logs.txt").read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(text[:text.index("KeyError")])  # the log ends inside the traceback
    assert _deaths(cut) == []
    interrupted = tmp_path / "interrupted.txt"  # its frames end in torch's line, not an exception's
    interrupted.write_text(text[:text.index("KeyError")] + AT_EXIT + "\n")
    assert _deaths(interrupted) == []
    logged = tmp_path / "logged.txt"  # torch's logger prefixes each line of a traceback it logs
    tail = text[text.index("Traceback"):]
    logged.write_text(text[:text.index("Traceback")] + "".join(
        f"W1127 18:29:01.113000 29052 torch/_dynamo/convert_frame.py:1000] [1/0] {line}\n"
        for line in tail.splitlines()))
    assert _deaths(logged) == []


def test_a_rank_s_unprefixed_traceback_is_its_rank_s_death_once(tmp_path):
    """Under mp.spawn torch's logger writes `[rank0]:` before its lines, Python's traceback has
    none: the log's one rank died (read as the rank's), not a second process of no rank."""
    text = (DEATHS / "uncaught.torch_logs.txt").read_text()
    log = tmp_path / "spawned.txt"
    log.write_text("".join(f"[rank0]:{line}\n" if line[:1] in "VIW" else f"{line}\n" for line in text.splitlines()))
    assert [(d["ranks"], d["message"]) for d in _deaths(log)] == [([0], "KeyError: 'decoder'")]
