"""The explorer's process pool (parallel.py's `index_with_pool` asks it for parts): where its
processes come from (a forkserver that imported what they need, started early), their place
below the explorer in the CPU's queue, and their end with the explorer, whatever ends it."""

from __future__ import annotations

import gc
import os
import select
import signal
import sys
import threading
import time
from contextlib import contextmanager

from tlview.source.child_env import for_own_children

POOLS: set = set()  # the pools indexing now


# What the pool's processes need, imported once in the forkserver they fork from: each of them
# imported it anew (0.25 s, two at once, on the way to their first part).
_PRELOAD = ["tlview.index.parallel"]


def _context():
    """Where the pool's processes come from: a forkserver that imported what they need once (and
    nothing from the current folder: child_env.py)."""
    import multiprocessing

    for_own_children()

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    return context


def start_forkserver() -> None:
    """Start the pool's forkserver now, before it is needed: it imports what the pool's processes
    need while the explorer starts (imports Textual, draws its first screen), and the pool's
    first part starts at once (it started 250 ms after the indexing, on 10,000 compile ids)."""
    context = _context()
    if context.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        with stdio_with_file_descriptors():  # (it starts multiprocessing's resource tracker too)
            forkserver.ensure_running()


def new_pool(workers: int):
    """A process pool (imported only now: the first screen needs the first range, not the
    pool); its processes start at the first submit."""
    from concurrent.futures import ProcessPoolExecutor

    with stdio_with_file_descriptors():  # (its queues start multiprocessing's resource tracker)
        pool = ProcessPoolExecutor(workers, mp_context=_context(), initializer=_pool_worker,
                                   initargs=(os.getpid(),))
    POOLS.add(pool)
    return pool


POOL_NICENESS = 10


def below_the_explorer(pool) -> None:
    """The pool's processes (and the forkserver they fork from) yield the CPU to the explorer
    they work for. On 2 cores two busy children took the cores from the UI process: while 10,000
    compile ids came in, a frame took 40-66 ms (15-25 ms after), and keys 150-220 ms. Set from
    here as soon as they exist: they start (imports) at once, before any initializer of theirs."""
    from multiprocessing import forkserver

    pids = [*getattr(pool, "_processes", {}).keys(),
            getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)]
    for pid in pids:
        if pid:
            try:
                os.setpriority(os.PRIO_PROCESS, pid, max(os.getpriority(os.PRIO_PROCESS, pid), POOL_NICENESS))
            except OSError:
                pass  # gone already, or not ours to change


def stop_pools() -> None:
    """End every pool's processes now, from any thread: tlview is leaving without waiting for
    its indexing thread (a signal's deadline passed), and they would index on for seconds."""
    for pool in list(POOLS):
        try:
            stop_workers(pool)
        except (RuntimeError, OSError):  # (its processes changing meanwhile)
            pass


def stop_workers(pool) -> None:
    """End the pool's processes now (quitting, or a part failed): at exit Python would otherwise
    wait for each to finish the part it is indexing (a second or more). Before shutdown(), which
    forgets them."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.kill()


def set_up_indexing_child() -> None:
    """An indexing child leaves signals to its parent: Ctrl-C, a closed terminal or a closed pipe
    end it without a traceback (its parent says what happened). It makes no cyclic GC: it indexes
    and frees nothing (index_range, which it runs, was turning it off in any process that called
    it)."""
    gc.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


def _pool_worker(explorer: int) -> None:
    """A pool's process: quiet, and it ends when the explorer that asked for its parts is gone.
    Its parts are asked for before the explorer handles signals (parallel.start_early): killed
    then, the explorer left its workers blocked for good on a result nobody reads (the pool's
    queues are shared by its workers, so no write ever fails), and their forkserver with them."""
    set_up_indexing_child()
    threading.Thread(target=_end_with, args=(explorer,), daemon=True, name="end-with-explorer").start()


def _end_with(pid: int) -> None:
    try:  # the kernel tells when it ends (Linux 5.3), else a look now and then
        select.select([os.pidfd_open(pid)], [], [])
    except (AttributeError, OSError):
        while True:
            time.sleep(0.25)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            except OSError:
                pass
    os._exit(0)


@contextmanager
def stdio_with_file_descriptors():
    """multiprocessing starts its helper processes with sys.stderr's file descriptor; Textual
    replaces sys.stdout/sys.stderr with objects that have none while an app runs."""
    swapped = {}  # name: (what was there, what was put there)
    for name in ("stdout", "stderr"):
        try:
            usable = getattr(sys, name).fileno() >= 0  # Textual's capture answers -1
        except (AttributeError, OSError, ValueError):
            usable = False
        if not usable:
            # (devnull stays open as the stream until it is put back)
            swapped[name] = (getattr(sys, name), getattr(sys, f"__{name}__") or open(os.devnull, "w"))  # noqa: SIM115
            setattr(sys, name, swapped[name][1])
    try:
        yield
    finally:
        # Only what was swapped here, and still there: a pool started in a thread (start_early)
        # must not put back streams the app replaced meanwhile.
        for name, (was, put) in swapped.items():
            if getattr(sys, name) is put:
                setattr(sys, name, was)
