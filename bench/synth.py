"""Build a large TORCH_TRACE file from the real ones in fixtures/corpus, for benchmarks.

Each copy of the corpus traces gets its frame ids renumbered in the envelope lines (so the big file
has thousands of distinct compile ids, as a long job would); payloads are copied unchanged, so every
`has_payload` md5 stays valid.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "corpus"
# A training job's trace is mostly the `model` kind (big graphs and output code); the mixed set
# (small functions, many breaks and recompiles) has 60% more records per byte.
SOURCE_SETS = {"model": ["model"], "mixed": ["graph_breaks", "recompiles", "dynamic_shapes", "model"]}
BENCH_DIR = Path(os.environ.get("TLVIEW_BENCH_DIR", "/tmp/tlview-bench"))

_FRAME = re.compile(rb'(?m)^(V[^\n]*?"frame_id": )(\d+)')


def _source_traces(names: list[str]) -> list[tuple[bytes, int]]:
    out = []
    for name in names:
        data = next((CORPUS / name / "trace").glob("*.log")).read_bytes()
        frames = max(int(m.group(2)) for m in _FRAME.finditer(data)) + 1
        out.append((data, frames))
    return out


def build_trace(target_bytes: int, source_set: str = "model") -> Path:
    """A trace of at least `target_bytes`, cached under BENCH_DIR (rebuilt if missing)."""
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    path = BENCH_DIR / f"dedicated_log_torch_trace_{source_set}_{target_bytes >> 20}mb.log"
    if path.exists() and path.stat().st_size >= target_bytes:
        return path
    sources = _source_traces(SOURCE_SETS[source_set])
    tmp = path.with_suffix(".tmp")
    written = 0
    frame_base = 0
    with open(tmp, "wb") as out:
        while written < target_bytes:
            for data, frames in sources:
                base = frame_base
                chunk = _FRAME.sub(lambda m, base=base: m.group(1) + str(int(m.group(2)) + base).encode(), data)
                out.write(chunk)
                written += len(chunk)
                frame_base += frames
                if written >= target_bytes:
                    break
    os.replace(tmp, path)
    return path


def build_ranks(total_bytes: int, ranks: int) -> Path:
    """A folder of `ranks` rank files of total_bytes/ranks each (the same training job on every
    rank, as a data-parallel job writes), cached under BENCH_DIR."""
    folder = BENCH_DIR / f"ranks_{ranks}_{total_bytes >> 20}mb"
    names = [folder / f"dedicated_log_torch_trace_rank_{rank}_x{rank:04d}.log" for rank in range(ranks)]
    if all(name.exists() for name in names):
        return folder
    one = build_trace(total_bytes // ranks)
    folder.mkdir(parents=True, exist_ok=True)
    data = one.read_bytes()
    for name in names:
        name.write_bytes(data)
    return folder


def prefix_at_record(source: Path, target_bytes: int, name: str) -> Path:
    """The first `target_bytes` of a trace, cut at an envelope line."""
    path = BENCH_DIR / name
    if path.exists():
        return path
    with open(source, "rb") as f:
        data = f.read(target_bytes + (1 << 20))
    cut = data.find(b"\nV", target_bytes) + 1
    path.write_bytes(data[:cut])
    return path


_KEEP = re.compile(rb'^V[^\n]*?\] \{"(?:str|dynamo_start|compilation_metrics|artifact": \{"name": '
                   rb'"(?:recompile_reasons|dynamo_graph_break_reason))')


def build_many_compile_ids(target_ids: int) -> Path:
    """A trace with `target_ids` compile ids: the graph_breaks trace's small records (starts,
    metrics, recompile and break reasons) repeated with renumbered frames; no graphs or code."""
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    path = BENCH_DIR / f"dedicated_log_torch_trace_{target_ids}_ids.log"
    if path.exists():
        return path
    data = next((CORPUS / "graph_breaks" / "trace").glob("*.log")).read_bytes()
    records = re.split(rb"(?m)^(?=V\d{4} )", data)
    kept = b"".join(r for r in records if _KEEP.match(r))
    frames = max(int(m.group(2)) for m in _FRAME.finditer(kept)) + 1
    ids_per_copy = 15
    with open(path, "wb") as out:
        for copy in range(-(-target_ids // ids_per_copy)):
            base = copy * frames
            out.write(_FRAME.sub(lambda m, base=base: m.group(1) + str(int(m.group(2)) + base).encode(), kept))
    return path


def build_huge_payload(size: int, one_line: bool) -> Path:
    """The recompiles trace with its first output code replaced by a `size`-byte payload (a 500 MB
    kernel file, or one 500 MB line), its md5 right."""
    import hashlib

    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    folder = BENCH_DIR / f"huge_payload_{size >> 20}mb_{'one_line' if one_line else 'lines'}"
    path = folder / "dedicated_log_torch_trace_huge.log"
    if path.exists():
        return path
    folder.mkdir(exist_ok=True)
    data = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes()
    records = [r for r in re.split(rb"(?m)^(?=V\d{4} )", data) if r]
    at = next(i for i, r in enumerate(records) if b'"inductor_output_code"' in r[:300])
    unit = b"buf0 = empty_strided((4, 8), (8, 1))  # " + b"x" * 40
    text = unit * (size // len(unit)) if one_line else b"\n".join([unit] * (size // (len(unit) + 1)))
    head = re.sub(rb'"has_payload": "[0-9a-f]{32}"', b'"has_payload": "' +
                  hashlib.md5(text).hexdigest().encode() + b'"', records[at].split(b"\n", 1)[0])
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(b"".join(records[:at]) + head + b"\n\t")
        f.write(text.replace(b"\n", b"\n\t") + b"\n")
        f.write(b"".join(records[at + 1:]))
    os.replace(tmp, path)
    return path
