from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stdout
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = FIXTURES / "corpus"
PEER = FIXTURES / "peer" / "tlparse-tests"
GENERATED = FIXTURES / "generated"
SCENARIOS = ["graph_breaks", "recompiles", "dynamic_shapes", "model", "distributed"]


def run_cli(*args: str) -> tuple[int, str]:
    """Run tlview's main() in this process; return (exit code, stdout)."""
    from tlview.cli import main

    buf = io.BytesIO()

    out = io.TextIOWrapper(buf, encoding="utf-8")
    with redirect_stdout(out):
        code = main(list(args))
        out.flush()
    return code, buf.getvalue().decode("utf-8")


def json_for(path: os.PathLike | str, *args: str) -> dict:
    code, out = run_cli("--json", str(path), *args)
    assert code == 0, out
    return json.loads(out)


@pytest.fixture(scope="session")
def truths() -> dict[str, dict]:
    return {s: json.loads((CORPUS / s / "truth.json").read_text()) for s in SCENARIOS}
