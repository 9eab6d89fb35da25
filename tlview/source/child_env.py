"""The environment of the processes tlview starts for itself (its indexing pool's forkserver, the
resource tracker, spawned workers): none of them imports from the folder tlview was started in.

multiprocessing starts them as `python -c ...`, which puts the current folder first on their
import path: a `socket.py` or `resource.py` there ran inside tlview (a hostile folder, or a user's
own file that shadows the standard library). PYTHONSAFEPATH (Python 3.11 and newer) leaves it
off; Python 3.10 has no such setting. A job tlview runs for the user (`--run`) gets the user's
environment as it was: its own folder on its path is what the user expects.
"""

from __future__ import annotations

import os

_UNSET = object()
_USERS = os.environ.get("PYTHONSAFEPATH", _UNSET)  # as tlview found it


def for_own_children() -> None:
    """From now on, processes this one starts put no unsafe folder on their import path."""
    os.environ["PYTHONSAFEPATH"] = "1"


def users_environment(**more: str) -> dict[str, str]:
    """The environment as the user gave it (with `more`), for a job of the user's."""
    env = {**os.environ, **more}
    if _USERS is _UNSET:
        env.pop("PYTHONSAFEPATH", None)
    else:
        env["PYTHONSAFEPATH"] = str(_USERS)
    return env
