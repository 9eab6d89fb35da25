"""Benchmark: one frame recompiled by the thousand (issue #49: 100,000 recompiles, `--report`
still running at 45 s), `--report` and `--json` timed at several counts in one run.

    python bench/recompiles.py [--counts 5000,20000,100000] [--kind text|trace|both]

Each count gets a log of its own (cached under BENCH_DIR): `text`, TORCH_LOGS=recompiles (three
lines a recompile, as the test of 5eb2863 has them); `trace`, a TORCH_TRACE where each compile of
the frame has its recompile reason, its dynamo_start and its metrics (md5s right). Each output is a
process of its own (`python -m tlview`), measured by its own rusage: CPU seconds (user + system:
these machines are shared, wall time is not the code's), wall seconds, peak RSS. Linear is a
`per compile` that stays flat: the ratio column is (CPU / count) against the smallest count's,
1.0x linear, 5x (at 100,000 against 20,000) quadratic. Then the lines of the report (the same at
every count: the rows fold).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import BENCH_DIR, ROOT

NEWLINE = b"\n"
_PREFIX = "V1127 05:54:46.933000 1 torch/_dynamo/guards.py:6374] [0/{i}] [__recompiles]"


def text_log(count: int) -> Path:
    """TORCH_LOGS=recompiles: compile 0/i recompiled because 0/(i-1)'s guard `n == i-1` failed."""
    path = BENCH_DIR / f"recompiles_{count}.txt"
    if not path.exists():
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as out:
            for i in range(1, count + 1):
                prefix = _PREFIX.format(i=i)
                out.write(f"{prefix} Recompiling function step in /job/train.py:10\n"
                          f"{prefix}     triggered by the following guard failure(s):\n"
                          f"{prefix}     - 0/{i - 1}: n == {i - 1}      # return x * n  # job/train.py:11 in step\n")
    return path


def _record(out, where: str, meta: dict, payload: str | None = None) -> None:
    if payload is not None:
        meta["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
    out.write(f"V1127 05:54:46.933000 1 {where}] {json.dumps(meta)}\n")
    if payload is not None:
        out.write("".join(f"\t{line}\n" for line in payload.split("\n")))


def trace_log(count: int) -> Path:
    """TORCH_TRACE: compiles 0/0 .. 0/count of one frame, each after the first with its reason."""
    path = BENCH_DIR / f"dedicated_log_torch_trace_recompiles_{count}.log"
    if path.exists():
        return path
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as out:
        _record(out, "torch/_logging/structured.py:28", {"str": ["/job/train.py", 0]})
        for i in range(count + 1):
            ids = {"frame_id": 0, "frame_compile_id": i, "attempt": 0}
            if i:
                reason = json.dumps([f"0/{i - 1}: n == {i - 1}      # return x * n  # job/train.py:11 in step"])
                _record(out, "torch/_dynamo/guards.py:5400",
                        {"artifact": {"name": "recompile_reasons", "encoding": "json"}, **ids}, reason)
            _record(out, "torch/_dynamo/convert_frame.py:303",
                    {"dynamo_start": {"stack": [{"line": 10, "name": "step", "filename": 0}]}, **ids})
            _record(out, "torch/_dynamo/utils.py:2009", {"compilation_metrics": {
                "compile_id": f"0/{i}", "co_name": "step", "co_filename": "/job/train.py", "co_firstlineno": 10,
                "cache_size": i, "guard_count": 3, "graph_op_count": 1, "entire_frame_compile_time_s": 0.05,
                "fail_type": None, "fail_reason": None, "restart_reasons": []}, **ids})
    os.replace(tmp, path)
    return path


def run(args: list[str], cpu_limit: int) -> tuple[float, float, float, int | None]:
    """(CPU seconds, wall seconds, peak MB, lines of stdout) of `python -m tlview ARGS`, its own
    rusage; lines None when it used more than `cpu_limit` CPU seconds (RLIMIT_CPU ends it: on a
    shared machine a limit of wall time ends it early). Its output is counted a piece at a time,
    never held here: a child's peak RSS starts at this process's own (Linux keeps the high-water
    mark across the exec), and 215 MB of JSON held here read as the next run's peak."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    limited = ["/bin/sh", "-c", 'ulimit -t "$0" && exec "$@"', str(cpu_limit)]  # (exec: the same process)
    start = time.perf_counter()
    with open(BENCH_DIR / "recompiles.out", "w+b") as out:
        child = subprocess.Popen([*limited, sys.executable, "-m", "tlview", *args], stdout=out, env=env, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
        if child.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            return cpu, wall, peak, None
        if child.returncode != 0:
            raise SystemExit(f"tlview {' '.join(args)}: exit {child.returncode}")
        out.seek(0)
        return cpu, wall, peak, sum(piece.count(NEWLINE) for piece in iter(lambda: out.read(1 << 20), b""))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="5000,20000,100000")
    parser.add_argument("--kind", choices=("text", "trace", "both"), default="both")
    parser.add_argument("--outputs", default="--report,--json")
    parser.add_argument("--cpu-limit", type=int, default=600, help="CPU seconds a run may use")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    kinds = ["text", "trace"] if args.kind == "both" else [args.kind]
    print(f"{'log':6} {'output':9} {'recompiles':>10} {'CPU s':>7} {'wall s':>7} {'peak MB':>8} "
          f"{'µs/compile':>10} {'vs first':>8}  report lines")
    for kind in kinds:
        for output in args.outputs.split(","):
            first = None
            for count in counts:
                log = text_log(count) if kind == "text" else trace_log(count)
                cpu, wall, peak, out = run([output, str(log)], args.cpu_limit)
                per = cpu / count
                first = first or per
                if out is None:
                    print(f"{kind:6} {output:9} {count:10,} {cpu:6.0f}+ {wall:6.0f}+ {peak:8.0f} "
                          f"{'':10} {'':8}  ended at {args.cpu_limit} CPU s", flush=True)
                    break  # (a bigger count takes longer still)
                lines = f"{out:,}" if output == "--report" else ""
                print(f"{kind:6} {output:9} {count:10,} {cpu:7.1f} {wall:7.1f} {peak:8.0f} {per * 1e6:10.0f} "
                      f"{per / first:7.2f}x  {lines}", flush=True)


if __name__ == "__main__":
    main()
