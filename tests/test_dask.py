"""`--dask ADDRESS`: the trace files indexed on a Dask cluster (a LocalCluster of 2 worker
processes here) give the JSON of one process, byte for byte; a scheduler that cannot be reached,
or Dask not installed, is one line and exit 2, at once."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from conftest import CORPUS, GENERATED, ROOT, run_cli
from distributed import LocalCluster

from tlview.index import dask_index
from tlview.index.index import Index
from tlview.source.discover import find_logs


@pytest.fixture(scope="module")
def scheduler():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def ranks64(tmp_path_factory):
    """64 rank files, each a copy of a real rank's trace (under its own rank's name)."""
    rank3 = next((GENERATED / "dist215" / "diverge4" / "trace").glob("*rank_3_*.log")).read_bytes()
    folder = tmp_path_factory.mktemp("ranks64")
    for rank in range(64):
        (folder / f"dedicated_log_torch_trace_rank_{rank}_copy{rank:02d}.log").write_bytes(rank3)
    return folder


def json_out(*args: str) -> str:
    code, out = run_cli("--json", *args)
    assert code == 0, out
    return out


@pytest.mark.parametrize("folder", [GENERATED / "dist215" / "diverge4" / "trace",
                                    CORPUS / "distributed" / "trace", "ranks64"])
def test_the_cluster_s_json_is_one_process_s(folder, scheduler, request):
    """Nothing in the JSON is run-specific: the same paths, in the same order, the same bytes."""
    path = str(request.getfixturevalue("ranks64") if folder == "ranks64" else folder)
    here = json_out(path)
    assert '"compiles": [{' in here.replace("\n", "").replace("  ", "")  # a real summary
    assert json_out("--dask", scheduler, path) == here


def pieces_of(folder) -> list[dask_index.Piece]:
    index = Index()
    for log in find_logs(str(folder))[0]:
        index.add_log(log).size = os.path.getsize(log.path)
    return [piece for source in index.sources for piece in dask_index.pieces(source)]


def test_the_64_ranks_go_in_batches(ranks64):
    """64 small files on 2 workers are 8 tasks (4 a worker), in file order, not 64 round trips."""
    files = pieces_of(ranks64)
    assert len(files) == 64 and all((p.start, p.end) == (0, None) for p in files)
    cut = dask_index.batches(files, workers=2)
    assert len(cut) == 8
    assert [piece for batch in cut for piece in batch] == files


BIG = 256 << 10  # a batch's bytes in the tests below: the corpus's 2 and 4 MB rank files are big


def test_a_big_file_is_indexed_in_ranges_and_merges_to_one_process_s_json(scheduler, monkeypatch):
    path = CORPUS / "distributed" / "trace"
    here = json_out(str(path))
    monkeypatch.setattr(dask_index, "BATCH_BYTES", BIG)
    ranges = pieces_of(path)
    assert len(ranges) >= 20 and all(p.end is None or p.end - p.start >= BIG for p in ranges)
    assert json_out("--dask", scheduler, str(path)) == here


@pytest.mark.parametrize("batch_bytes", [dask_index.BATCH_BYTES, BIG])
def test_a_batch_the_workers_cannot_read_is_read_here_in_its_turn(scheduler, monkeypatch, batch_bytes):
    """A worker that cannot read the paths (no shared filesystem): the files (whole, or in
    ranges) are read here, the JSON is still one process's, and a note says what happened."""
    path = str(CORPUS / "distributed" / "trace")
    alone = json.loads(json_out(path))
    monkeypatch.setattr(dask_index, "BATCH_BYTES", batch_bytes)
    # (a lambda is sent by value: the workers run it, and fail as on a path they do not have)
    monkeypatch.setattr(dask_index, "index_batch", lambda tasks: open(tasks[0][0] + ".elsewhere"))  # noqa: SIM115 - it raises
    with_notes = json.loads(json_out("--dask", scheduler, path))
    notes = with_notes.pop("notes")
    assert notes and all("read here, not on the cluster (FileNotFoundError" in note for note in notes)
    assert notes not in alone.pop("notes")
    assert with_notes == alone


def test_dask_goes_with_the_headless_outputs_only(capsys):
    path = str(CORPUS / "distributed" / "trace")
    assert run_cli("--dask", "tcp://127.0.0.1:8786", path) == (2, "")
    assert "tlview: --dask is for the headless outputs" in capsys.readouterr().err
    assert run_cli("--json", "--dask", "tcp://127.0.0.1:8786", "--compare", path, path) == (2, "")
    assert "tlview: --dask indexes one folder or file" in capsys.readouterr().err


def test_a_scheduler_nobody_listens_to_is_an_error_at_once(capsys):
    with socket.socket() as taken:  # bound, never listening: a connection to it is refused
        taken.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{taken.getsockname()[1]}"
        started = time.monotonic()
        code, out = run_cli("--json", "--dask", address, str(CORPUS / "distributed" / "trace"))
        took = time.monotonic() - started
    assert (code, out) == (2, "")
    assert capsys.readouterr().err.startswith(
        f"tlview: --dask {address}: cannot reach the Dask scheduler (ConnectionRefusedError")
    assert took < dask_index.CONNECT_SECONDS  # said at once, not after the timeout


_WITHOUT_DASK = """
import sys
class NoDask:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("dask", "distributed"):
            raise ImportError("not installed")
sys.meta_path.insert(0, NoDask())
from tlview.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def test_without_dask_the_error_says_what_to_install():
    done = subprocess.run([sys.executable, "-c", _WITHOUT_DASK, "--json", "--dask", "tcp://127.0.0.1:8786",
                           str(CORPUS / "distributed" / "trace")], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == ("tlview: --dask needs Dask's distributed scheduler: "
                                   "pip install 'tlview[dask]'")
