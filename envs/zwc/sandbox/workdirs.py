"""Removing a sandbox child's working directory, whatever the candidate left in it.

A candidate may fill its private directory (``child.confine``; Landlock keeps it
there) with anything its user can make: trees thousands of levels deep, many files,
directories without read or search permission, symbolic links to paths outside. The fork
server removes the directory after the child is gone, and that removal must neither fail
the server (``shutil.rmtree`` recurses once per level and raises ``RecursionError`` on a deep
tree, which ``ignore_errors`` does not cover) nor remove anything outside the directory.

``remove_tree`` walks the tree with one open directory at a time, by descriptor: every entry
is removed relative to its directory's descriptor (``unlinkat``, which never follows a
link: a symbolic link is removed, never its target), a directory is entered with
``O_NOFOLLOW | O_DIRECTORY`` (a link cannot stand in for one) and left through ``..`` only if
that is the very directory (device and inode) it came from. No recursion: depth costs a list
entry per level, width a list of names per level. A directory whose permissions deny the
walk is given ``0o700`` first (through its descriptor, never by path). It never raises for
what it finds: the answer is whether the directory is gone.

Removing a directory can wait for the disk (on a filesystem mounted with online discard an
``rmdir`` took ~4 ms here), so a fork server hands its children's directories to a
``Janitor``, a thread of its own that removes them off the server's loop.
"""

from __future__ import annotations

import errno
import os
import queue
import stat
import threading

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PATH_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_DENIED = (errno.EACCES, errno.EPERM)


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _unlock(fd: int) -> None:
    """Give the directory open as ``fd`` owner read, write and search permission."""
    try:
        os.fchmod(fd, stat.S_IRWXU)
    except OSError:
        pass


def _open_dir(name: str, dir_fd: int | None) -> int | None:
    """``name`` (relative to ``dir_fd``) opened as a directory, never through a link; None
    when it is not a directory that can be opened."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in _DENIED:
            return None
    try:  # no read permission: unlock it through a path descriptor (which needs none), then reopen
        handle = os.open(name, _PATH_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        os.chmod(f"/proc/self/fd/{handle}", stat.S_IRWXU)
    except OSError:
        pass
    finally:
        os.close(handle)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None


def _names(fd: int) -> list[str]:
    for attempt in range(2):
        try:
            return os.listdir(fd)
        except OSError as exc:
            if attempt or exc.errno not in _DENIED:
                return []
            _unlock(fd)
    return []


def _remove_entry(fd: int, name: str) -> bool:
    """Remove ``name`` from the directory ``fd``: any non-directory, or an empty directory.
    False when it is a directory with something in it (or it could not be removed)."""
    for attempt in range(2):
        try:
            os.unlink(name, dir_fd=fd)
            return True
        except FileNotFoundError:
            return True
        except IsADirectoryError:
            break
        except OSError as exc:
            if exc.errno == errno.EISDIR:
                break
            if attempt or exc.errno not in _DENIED:
                return False
            _unlock(fd)
    for attempt in range(2):
        try:
            os.rmdir(name, dir_fd=fd)
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if attempt or exc.errno not in _DENIED:
                return False
            _unlock(fd)
    return False


def remove_tree(path: str) -> bool:
    """Remove the directory ``path`` and everything beneath it without following a link;
    whether it is gone. Never raises for what the tree holds."""
    top = _open_dir(path, None)
    if top is None:
        try:
            os.rmdir(path)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True
    fd, here = top, _identity(top)
    todo = iter(_names(fd))
    above: list[tuple[str, tuple[int, int], object]] = []  # (name of this dir, parent's identity, parent's names left)
    intact = True
    try:
        while True:
            name = next(todo, None)
            if name is not None:
                if _remove_entry(fd, name):
                    continue
                child = _open_dir(name, fd)
                if child is None:
                    intact = False
                    continue
                above.append((name, here, todo))
                fd, old = child, fd
                os.close(old)
                here, todo = _identity(fd), iter(_names(fd))
                continue
            if not above:
                break
            name, parent_identity, parent_todo = above.pop()
            parent = _open_dir("..", fd)
            if parent is None or _identity(parent) != parent_identity:  # moved: walk no further
                if parent is not None:
                    os.close(parent)
                return False
            fd, old = parent, fd
            os.close(old)
            here, todo = parent_identity, parent_todo
            if not _remove_entry(fd, name):
                intact = False
    except OSError:
        return False
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return intact


class Janitor:
    """Removes directories (``remove_tree``) one after another on a thread of its own.

    Start it in a process that forks no more (a thread does not survive a fork): a fork
    server starts it after its zygote."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="zwc-janitor", daemon=True)
        self._thread.start()

    def remove(self, path: str) -> None:
        self._queue.put(path)

    def _run(self) -> None:
        while True:
            path = self._queue.get()
            if path is None:
                return
            try:
                remove_tree(path)
            except Exception:  # noqa: BLE001 - one directory must not stop the next ones
                continue

    def close(self, timeout: float) -> None:
        """Remove what is queued, waiting at most ``timeout`` seconds."""
        self._queue.put(None)
        self._thread.join(timeout)
