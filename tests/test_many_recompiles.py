"""One frame recompiled by the thousand (issue #49: 100,000 recompiles, `--report` still running
at 45 s): no step scans the frame's compiles per compile. Counted, never timed."""

from __future__ import annotations


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
    from tlview.model.indexing import open_index
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
