"""How a distributed job died, each rank's death read wherever it lies in its log: on real gloo runs
of fixtures/generated/dist215/program_deaths.py (torch 2.15, `torchrun --tee 3`, every rank's lines in
one stream), a hang that every rank dies of, a rank's own exception raised inside and outside the
compiled function, and a compile that torchrun's SIGTERM cut short."""

from __future__ import annotations

from conftest import GENERATED, json_for, run_cli

from tlview.source.tail import blocks_backwards

DIST = GENERATED / "dist215"
TIMEOUT6 = DIST / "timeout6"  # 6 ranks, +dynamo: ~14 KB of each rank's lines after its traceback
RAISE_IN = DIST / "raise_in3"
RAISE_OUT = DIST / "raise_out2"


def _hang(path) -> list[str]:
    code, out = run_cli("--report", str(path))
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("died: ") and lines[2] == "Why the job may hang"  # the verdict, then why
    return lines[3:lines.index(next(line for line in lines if line.startswith(("  trace ", "  text "))))]


def test_every_rank_that_timed_out_is_read_though_their_deaths_fill_more_than_the_log_tail():
    """The six ranks' tracebacks and exit output take ~90 KB at the end of one stream: each rank's
    own last lines are read, not the stream's last 64 KB (of which three ranks' were read)."""
    tee = TIMEOUT6 / "torchrun_tee.txt"
    for path in (tee, TIMEOUT6):  # the text alone, and with the traces
        death = json_for(path)["divergence"]["job_death"]
        said = {rank: (d["kind"], d["message"]) for d in death["deaths"] for rank in d["ranks"]}
        assert sorted(said) == [0, 1, 2, 3, 4, 5]
        assert {kind for kind, _ in said.values()} == {"timeout"}
        assert all(message.startswith("RuntimeError: Timed out waiting 10000ms for ") for _, message in said.values())
        assert all(d["exception"] == "RuntimeError" and d["where"]["function"] == "layer" for d in death["deaths"])
        assert death["root_cause"] == {"rank": 0, "exitcode": 1, "signal": None}
    text = tee.read_text()
    # the deaths lie where the issue found them: more than 64 KB of the stream's end holds them
    assert len(text.encode()) - text.encode().index(b"[default5]:[rank5]: Traceback") > 64 << 10
    hang = _hang(tee)
    died = [line for line in hang if line.startswith("  the job died: ")]
    assert len(died) == 2 and all("timeout: RuntimeError: Timed out waiting 10000ms" in line for line in died)
    assert sorted(line.split(": ")[1] for line in died) == ["ranks 0-2", "ranks 3-5"]


def test_a_log_is_read_backwards_in_blocks_of_whole_lines_each_byte_once():
    path = RAISE_OUT / "torchrun_tee.txt"
    data = path.read_bytes()
    for block in (1, 7, 4096, 1 << 20):
        blocks = list(blocks_backwards(str(path), 1 << 30, block=block))
        assert b"".join(reversed(blocks)) == data
        assert all(b.endswith(b"\n") for b in blocks)
    blocks = list(blocks_backwards(str(path), 10_000, block=4096))  # stops past the limit
    assert len(blocks) == 3 and data.endswith(b"".join(reversed(blocks)))


def test_a_rank_that_raised_inside_the_compiled_function_is_said_before_what_its_peers_died_of():
    """Rank 1's check raised RuntimeError in `layer` (after a graph break, in Dynamo's resume
    function); ranks 0 and 2 lost it as a peer. torchrun, looking every 20 s, names rank 0 first."""
    death = json_for(RAISE_IN)["divergence"]["job_death"]
    first = death["deaths"][0]
    assert (first["ranks"], first["kind"], first["exception"]) == ([1], "exception", "RuntimeError")
    assert first["message"] == "RuntimeError: activations overflow: max |h| = 1.87e+06 > 1e4"
    assert first["where"]["file"].endswith("/program.py") and first["where"]["line"] == 42
    assert [(d["ranks"], d["kind"]) for d in death["deaths"][1:]] == [([0, 2], "peer lost")]
    assert death["root_cause"]["rank"] == 0
    hang = _hang(RAISE_IN)
    assert hang[0] == ("  the job died: rank 1 raised RuntimeError: activations overflow: max |h| = 1.87e+06 > 1e4 "
                       "(at program.py:42 in layer)")
    assert any(line.startswith("  the job died: ranks 0,2: peer lost: RuntimeError: Connection closed by peer")
               for line in hang[1:])


def test_a_rank_that_raised_outside_any_compiled_function_and_the_signal_that_ended_the_other():
    """Rank 1's data loader raised ValueError; torchrun sent rank 0, still compiling, SIGTERM."""
    for path in (RAISE_OUT, RAISE_OUT / "torchrun_tee.txt", RAISE_OUT / "torch_logs"):
        death = json_for(path)["divergence"]["job_death"]
        assert death["deaths"] == [{
            "ranks": [1], "kind": "exception", "message": "ValueError: corrupt record 1000 in shard 1",
            "exception": "ValueError", "where": death["deaths"][0]["where"]}]
        where = death["deaths"][0]["where"]
        assert (where["file"].rsplit("/", 1)[-1], where["line"], where["function"]) == ("program.py", 56, "load_batch")
    death = json_for(RAISE_OUT / "torchrun_tee.txt")["divergence"]["job_death"]
    assert death["root_cause"] == {"rank": 1, "exitcode": 1, "signal": None}
    assert death["signals"] == [{"ranks": [0], "signal": "SIGTERM", "exitcode": -15}]
    assert _hang(RAISE_OUT / "torchrun_tee.txt") == [
        "  the job died: rank 1 raised ValueError: corrupt record 1000 in shard 1 (at program.py:56 in load_batch)",
        "  torchrun: rank 1 failed first (exit code 1)",
        "  torchrun: rank 0 ended by SIGTERM (exit code -15)"]
