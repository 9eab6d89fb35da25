"""One frame recompiled by the thousand (issue #49: 100,000 recompiles, `--report` still running
at 45 s): no step scans the frame's compiles per compile, the report says the same thing once
with how many compile ids it stands for, and --json is written as its entries are made. Counted,
never timed (bench/recompiles.py times it)."""

from __future__ import annotations

import json

from conftest import CORPUS, GENERATED, run_cli


def _recompiles(tmp_path, count: int):
    """TORCH_LOGS=recompiles: compile 0/i recompiled because 0/(i-1)'s guard `n == i-1` failed."""
    lines = []
    for i in range(1, count + 1):
        prefix = f"V1127 05:54:46.933000 1 torch/_dynamo/guards.py:6374] [0/{i}] [__recompiles]"
        lines += [f"{prefix} Recompiling function step in /job/train.py:10",
                  f"{prefix}     triggered by the following guard failure(s):",
                  f"{prefix}     - 0/{i - 1}: n == {i - 1}      # return x * n  # job/train.py:11 in step"]
    path = tmp_path / f"recompiles_{count}.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


class _Counted(list):
    """A frame's compiles that count each reading of them whole (a for loop, list(), reversed())."""

    readings = 0

    def __iter__(self):
        _Counted.readings += 1
        return super().__iter__()

    def __reversed__(self):
        _Counted.readings += 1
        return super().__reversed__()


def test_no_verdict_or_summary_reads_the_frame_per_compile(tmp_path, monkeypatch):
    """Which compile a recompile's guard failed against was found by a scan of the frame's
    compiles, copied, per recompile (56 s of 86 for --json at 20,000): read by key now. Every
    verdict, the summary and the report read the frame's compiles a few times, not once each."""
    from tlview.index.indexing import open_index
    from tlview.report.summary import build_summary

    count = 1500
    index = open_index(str(_recompiles(tmp_path, count)), parallel_ok=False)
    try:
        (frame,) = index.frames.values()
        frame.compiles = _Counted(frame.compiles)
        for compile_ in frame.compiles:
            compile_.revision += 1  # (judged again, not read from a cache)
        _Counted.readings = 0
        verdicts = [n.compile.verdict for n in index.iter_nodes()]
        summary = build_summary(index)
    finally:
        index.close()
    assert len(verdicts) == count and sum(v.recompile.against is not None for v in verdicts) == count - 1
    assert summary["compiles"][-1]["against"] == f"0/{count - 1}"
    assert _Counted.readings < 20  # (1,500 and more before: one reading or two per compile)


def test_the_report_of_many_alike_recompiles_is_a_few_lines(tmp_path):
    """1,500 compile ids that recompiled for the same guard but its value are one row of the
    table and one line of "Why", with how many and the first and last; 300 read the same but
    for those numbers. The last compile (no later reason says it compiled) is a row of its own."""
    reports = {}
    for count in (300, 1500):
        code, reports[count] = run_cli("--report", str(_recompiles(tmp_path, count)))
        assert code == 0
    report = reports[1500]
    assert len(report.splitlines()) == len(reports[300].splitlines()) < 25
    assert "[0/1] … [0/1499] ×1,499" in report and "[0/1500] " in report
    assert "… ×1,499 alike, the last [0/1499]: recompile: [0/1498] n == 1498" in report
    assert "[0/1] recompile · python_value: a Python value changed: n == 0" in report
    assert "and 1,499 more alike, the last [0/1500]: a Python value changed: n == 1499" in report
    assert report.count("fix: ") == 1
    assert "n == 700" not in report  # (none of the 1,500 rows in between)


def test_markdown_folds_them_too(tmp_path):
    code, out = run_cli("--report", "--markdown", str(_recompiles(tmp_path, 1500)))
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("| `")]
    assert rows == ["| `[0/1]` … `[0/1499]` ×1,499 | ok | step | train.py:10 | python_value |",
                    "| `[0/1500]` | unlogged | step | train.py:10 | python_value |"]
    assert out.count("### ") == 1 and "### `[0/1]` … `[0/1500]` ×1,500 step (train.py:11)" in out
    assert "**And 1,499 more alike**, the last `[0/1500]`: a Python value changed: n == 1499" in out


def test_recompiles_that_differ_in_kind_are_not_folded():
    """The corpus's pooled frame: three size mismatches alike but for the sizes, then the fourth
    refused by the recompile limit (an error): two rows; other frames' recompiles stay their own."""
    code, report = run_cli("--report", str(CORPUS / "recompiles" / "trace"))
    assert code == 0
    assert "[3/1] … [3/3] ×3 " in report and "│[3/4] " in report
    assert "│[2/1] " in report and "│[2/2] " in report  # requires_grad, then dtype: not alike
    assert "[3/1] recompile · size_mismatch: input 'x' changed size at dim 1: 8 -> 10" in report
    assert "and 3 more alike, the last [3/4]: input 'x' changed size at dim 1: 14 -> 16" in report


def test_json_is_written_as_its_entries_are_made(tmp_path):
    """--json reads the compile entries once, as it writes them (never all in a list: 410 MB at
    100,000), and writes the same bytes as the whole document would be: every compile id, the
    files a problem's lines were not read from (known only once the entries were made)."""
    from tlview.index.indexing import open_index
    from tlview.report.summary import CompileEntries, build_summary
    from tlview.source.user_source import SourceFiles, parse_roots
    from tlview.textsafe import json_bytes, json_chunks

    redact = GENERATED / "redact" / "trace"
    for path, roots in ((_recompiles(tmp_path, 200), []), (CORPUS / "distributed" / "trace", []),
                        (redact, [f"/tmp/acme_quokka_lab={tmp_path}"])):
        index = open_index(str(path), parallel_ok=False)
        try:
            whole = json_bytes(build_summary(index, None, SourceFiles(parse_roots(roots))))
            streamed = build_summary(index, None, SourceFiles(parse_roots(roots)), streamed=True)
            assert isinstance(streamed["compiles"], CompileEntries)
            pieces = list(json_chunks(streamed, limit=4096))
        finally:
            index.close()
        assert len(pieces) > 1 and b"".join(pieces) == whole, path
    assert json.loads(whole)["source_missing"][0]["why"] == "not found"  # (redact's, read after)
    code, out = run_cli("--json", str(_recompiles(tmp_path, 200)))
    assert code == 0 and len(json.loads(out)["compiles"]) == 200


def test_alike_reasons_are_those_that_differ_only_in_numbers():
    from tlview.report.alike import fold_alike, masked, some_ids

    assert masked("tensor 'x' size mismatch at index 1. expected 8, actual 10") == \
        "tensor 'x' size mismatch at index #. expected #, actual #"
    assert masked("s == 0.5") == masked("s == 12") and masked("mode == 'a'") != masked("mode == 'b'")
    found = fold_alike(["n == 1", "m == 1", "n == 2", "n == 3"], masked)
    assert [(a.first, a.last, a.count) for a in found] == [("n == 1", "n == 3", 3), ("m == 1", "m == 1", 1)]
    assert some_ids([f"0/{i}" for i in range(3)]) == "0/0, 0/1, 0/2"
    assert some_ids([f"0/{i}" for i in range(100_000)]) == \
        "0/0, 0/1, 0/2, 0/3, 0/4, … 99,990 more …, 0/99995, 0/99996, 0/99997, 0/99998, 0/99999"
