"""Files tlview writes (`--perfetto OUT`): never one it reads, never half-written.

A path compared as text misses a hard link (another name of the same file) and a symbolic link
to a folder inside or outside what is read; so a target is compared by device and inode with
every file read, and its folder, links resolved, with every folder read. The data goes to a
temporary file beside the target that is renamed over it once complete: an interrupted or
failed run leaves the target as it was.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import BinaryIO


def _inside(path: str, folder: str) -> bool:
    return path == folder or os.path.commonpath([path, folder]) == folder


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def writes_into_input(target: str, read_path: str, files_read: Iterable[str] = ()) -> bool:
    """Whether writing `target` would write over a file tlview reads or into a folder it reads:
    the same file by device and inode (a hard or symbolic link to it), or a folder that is the
    folder read or inside it (by its name, or with links resolved), or the folder of a file read."""
    read_folder = read_path if os.path.isdir(read_path) else os.path.dirname(read_path) or "."
    folder = os.path.dirname(os.path.abspath(target))
    folders_read = {os.path.realpath(read_folder)} | {os.path.realpath(os.path.dirname(f) or ".")
                                                      for f in files_read}
    if _inside(folder, os.path.abspath(read_folder)):
        return True
    if any(_inside(os.path.realpath(folder), read) for read in folders_read):
        return True
    mine = _identity(target)
    if mine is None:
        return False
    read_files = [read_path] if not os.path.isdir(read_path) else []
    return any(_identity(f) == mine for f in [*read_files, *files_read])


@contextmanager
def replaced_atomically(target: str) -> Iterator[BinaryIO]:
    """A file to write whose content becomes `target` only when the block ends without an error
    (KeyboardInterrupt included); otherwise the temporary file is removed. A target that is not
    a regular file (/dev/null, a FIFO) is written in place: it cannot be renamed over."""
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "wb") as out:
            yield out
        return
    fd, temporary = tempfile.mkstemp(prefix=".tlview-", suffix=".partial",
                                     dir=os.path.dirname(os.path.abspath(target)))
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_file(target: str, write: Callable[[BinaryIO], object]) -> object:
    """`write(out)` into `target`, atomically; what `write` returned."""
    with replaced_atomically(target) as out:
        return write(out)
