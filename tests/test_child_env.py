"""No process tlview starts for itself imports from the folder tlview was started in (issue: a
`resource.py` or `socket.py` there ran inside the indexing pool's forkserver, which multiprocessing
starts as `python -c ...`, the current folder first on its path); a job of the user's (`--run`)
keeps the user's environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tlview.source import child_env

ROOT = Path(__file__).resolve().parent.parent
STARTS_A_POOL = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from tlview.index import pool
if __name__ == "__main__":
    pool.start_forkserver()
    workers = pool.new_pool(1)
    print(workers.submit(sum, [1, 2]).result())
    workers.shutdown()
"""


def test_the_pool_imports_nothing_from_the_current_folder(tmp_path):
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    for name in ("socket", "resource", "selectors"):
        (hostile / f"{name}.py").write_text(f"open({str(tmp_path / name)!r}, 'w').write('ran')\n")
    script = tmp_path / "starts_a_pool.py"
    script.write_text(STARTS_A_POOL)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    done = subprocess.run([sys.executable, str(script)], cwd=hostile, env=env, capture_output=True, check=False,
                          text=True, timeout=120)
    assert done.stdout.strip() == "3", done.stderr[-2000:]
    assert not [p.name for p in tmp_path.iterdir() if p.name in ("socket", "resource", "selectors")]


def test_a_users_job_gets_the_users_environment(monkeypatch):
    monkeypatch.setattr(child_env, "_USERS", child_env._UNSET)
    monkeypatch.setenv("PYTHONSAFEPATH", "1")  # as tlview sets it for its own children
    assert "PYTHONSAFEPATH" not in child_env.users_environment(TORCH_LOGS="x")
    assert child_env.users_environment(TORCH_LOGS="x")["TORCH_LOGS"] == "x"
    monkeypatch.setattr(child_env, "_USERS", "")
    assert child_env.users_environment()["PYTHONSAFEPATH"] == ""
