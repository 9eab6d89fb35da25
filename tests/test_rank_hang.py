""""Why did my job hang" first: on real gloo runs (fixtures/generated/dist215), the divergences that
can hang a job lead --report, markdown and the Run pane, ranks grouped and the first graph and op
named, with the job's own death from its text logs. And the runtime estimates in --perfetto, laid
out as tlparse's chromium_trace_with_runtime."""

from __future__ import annotations

import itertools
import json

from conftest import GENERATED, PEER, SIZE, json_for, plain, ready, run_cli, until

from tlview.ui.app import TlviewApp

DIST = GENERATED / "dist215"
HANG = DIST / "hang3"


def test_the_hang_leads_the_report_ranks_grouped_with_the_collective_and_the_death():
    code, out = run_cli("--report", str(HANG))
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("hung: ranks 0-1 vs rank 2 at the ")  # the job's verdict, under the title
    assert lines[2] == "Why the job may hang"  # then why, before the files read
    hang = lines[3:lines.index(next(line for line in lines if line.startswith("  trace ")))]
    assert hang[0] == ("  collectives differ (can hang the job): ranks 0-1 vs rank 2; the 4th collective run "
                       "(in graph execution order): all_reduce_ in [0/0] on ranks 0-1; none on rank 2 "
                       "(its collectives end after [0/1])")
    assert "  graph execution order differs: the 2nd graph run is [0/0] on ranks 0-1; [0/1] on rank 2" in hang
    assert "  compile id [0/1] only on rank 2 (not on ranks 0-1)" in hang
    # each rank's own last words, from its TORCH_LOGS text (gloo's source places left out)
    expected = json.loads((HANG / "expected.json").read_text())["first_runtime_error_per_rank"]
    assert "gloo" in expected["0"] and "Timed out waiting 10000ms for send operation" in expected["0"]
    for rank, operation in ((0, "send"), (1, "recv")):  # each waited in its compiled `step`
        assert (f"  the job died: rank {rank}: timeout: RuntimeError: Timed out waiting 10000ms for {operation} "
                "operation to complete (at program.py:37 in step)") in hang
    assert any(line.startswith("  the job died: rank 2: timeout: Rank 2 successfully reached monitoredBarrier")
               for line in hang)
    assert "  torchrun: rank 0 failed first (exit code 1)" in hang
    assert "  torchrun: ranks 1-2 ended by SIGTERM (exit code -15)" in hang
    # what does not hang a job is said later, apart
    rest = lines[lines.index("Ranks diverge"):]
    assert any("recompile counts differ" in line for line in rest)
    assert not any("collectives differ" in line for line in rest)


def test_the_json_names_the_collective_each_group_waits_on():
    doc = json_for(HANG)
    div = doc["divergence"]
    executed = div["collective_sequences"]["executed"]
    assert [g["ranks"] for g in executed["groups"]] == [[0, 1], [2]]
    # collectives only (item 7): each all_reduce_ is followed by its wait_tensor in the schedules
    assert [(g["ops"], g["graphs"]) for g in executed["groups"]] == [(4, ["0/0"]), (3, ["0/0", "0/1"])]
    first = executed["first_difference"]
    assert first["position"] == 4
    assert [(g["ranks"], g["compile_id"], g["op"]) for g in first["groups"]] == [
        ([0, 1], "0/0", "torch.ops._c10d_functional.all_reduce_.default"), ([2], None, None)]
    assert div["execution_order"]["first_difference"] == {
        "position": 2, "groups": [{"ranks": [0, 1], "compile_id": "0/0"}, {"ranks": [2], "compile_id": "0/1"}]}
    death = div["job_death"]
    assert [(d["ranks"], d["kind"]) for d in death["deaths"]] == [([0], "timeout"), ([1], "timeout"), ([2], "timeout")]
    assert death["root_cause"] == {"rank": 0, "exitcode": 1, "signal": None}
    assert doc["hang_summary"] == doc["divergence_summary"][:len(doc["hang_summary"])]


def test_a_divergence_that_did_not_hang_is_still_a_risk_and_ranks_that_agree_say_nothing():
    div = json_for(DIST / "diverge4")["divergence"]
    assert div["job_death"] is None  # the job finished
    first = div["collective_sequences"]["executed"]["first_difference"]
    assert [(g["ranks"], g["op"]) for g in first["groups"]] == [
        ([0, 1, 2], "torch.ops._c10d_functional.all_reduce_.default"), ([3], None)]
    meta = div["tensor_meta"]["first_difference"]
    assert (meta["compile_id"], meta["what"], meta["op"]) == ("0/0", "outputs", "extern_kernels.mm")
    assert [o[0]["shape"] for o in meta["outputs"]] == [[8, 32], [16, 32]]  # rank 3's batch of 16
    agree = json_for(DIST / "agree2")
    assert agree["hang_summary"] == [] and agree["divergence_summary"] == []
    assert agree["divergence"]["execution_order"]["order_differs"] is False


def test_markdown_puts_the_hang_before_anything_else():
    code, out = run_cli("--report", "--markdown", str(HANG))
    assert code == 0
    at = out.index("## Why the job may hang")
    assert at < out.index("- trace: ") and at < out.index("| compile id |")
    assert "ranks 0-1 vs rank 2" in out[at:out.index("- trace: ")]


async def test_the_run_pane_opens_on_why_the_job_hung():
    app = TlviewApp(str(HANG))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("9")
        body = app.query_one("#run-body")
        await until(pilot, lambda: "Total compile time" in plain(body), what="the Run pane")
        lines = [line.strip() for line in plain(body).splitlines() if line.strip()]
        assert lines[0].startswith("hung: ranks 0-1 vs rank 2 at the ")
        assert lines[1] == "Why the job may hang"
        assert lines[2].startswith("⚠ collectives differ (can hang the job): ranks 0-1 vs rank 2; the 4th")
        died = [i for i, line in enumerate(lines) if "the job died: rank 0: timeout" in line]
        assert died and died[0] < lines.index(next(line for line in lines if line.startswith("Total compile time")))

    app = TlviewApp(str(DIST / "agree2"))  # ranks that agree: nothing first, and said so at the end
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("9")
        body = app.query_one("#run-body")
        await until(pilot, lambda: "the ranks agree" in plain(body), what="the Run pane")
        assert plain(body).lstrip().startswith("Total compile time") and "Why the job may hang" not in plain(body)


def test_perfetto_lays_out_runtime_estimates_as_tlparse(tmp_path):
    """A process per rank, a track per graph, each op as long as tlparse makes it (µs, at least 1)."""
    records = [r for r in json.loads((PEER / "all_ranks_expected.json").read_text())["folders"]
               if r["runtime_trace_events"] and not r["only_ranks"]]
    assert len(records) == 3  # multi_rank_runtime, graph_exec_order_tests, collectives_parity (one rank)
    for record in records:
        out = tmp_path / "trace.json"
        code, _ = run_cli("--perfetto", str(out), str(PEER.parents[2] / record["folder"]))
        assert code == 0
        events = json.loads(out.read_text())["traceEvents"]
        names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
        tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
        laid: dict = {}
        for e in events:
            if e.get("cat") == "runtime":
                assert names[e["pid"]] == f"rank {e['args']['rank']} · runtime estimates"
                assert tracks[(e["pid"], e["tid"])] == f"graph {e['args']['graph']}"
                laid.setdefault(f"{e['args']['rank']} {e['args']['graph']}", []).append(e)
        assert {k: [[e["name"], e["dur"]] for e in v] for k, v in laid.items()} == record["runtime_trace_events"]
        for ops in laid.values():  # one after the other on their track
            assert all(b["ts"] == a["ts"] + a["dur"] for a, b in itertools.pairwise(ops))
        # every rank's chromium events are still there, in processes of their own
        assert {e["pid"] for e in events if e.get("cat") != "runtime"} >= set(record["ranks"])


def test_the_death_is_found_in_one_log_of_all_ranks_as_torchrun_tee_writes_it(tmp_path):
    """`torchrun --tee 3` writes every rank's lines to one stream, each after `[defaultN]:`."""
    import shutil

    shutil.copytree(HANG / "trace", tmp_path / "trace")
    with open(tmp_path / "torch_logs.txt", "w") as out:
        for rank in range(3):
            lines = (HANG / "torch_logs" / f"rank_{rank}.txt").read_text().splitlines()
            out.writelines(f"[default{rank}]:{line}\n" for line in lines)
    deaths = json_for(tmp_path)["divergence"]["job_death"]["deaths"]
    assert [(d["ranks"], d["message"][:40]) for d in deaths] == [
        ([0], "RuntimeError: Timed out waiting 10000ms "), ([1], "RuntimeError: Timed out waiting 10000ms "),
        ([2], "Rank 2 successfully reached monitoredBar")]
