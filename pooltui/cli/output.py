"""Files the command line writes (a trace, a screenshot): whole or not at all, never onto
an input of the run, and every failure as one line, `cannot write FILE: reason`.

A regular file is written to a temporary name in its own folder and renamed over FILE
only when complete, so a failed or interrupted write leaves FILE as it was. A target that
exists and is not a regular file (`/dev/stdout`, a FIFO, `/dev/null`) is written in
place: it cannot be renamed over, and replacing a device node would be wrong.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
from collections.abc import Iterable, Iterator
from typing import IO

from pooltui.lang.errors import escaped


class OutputError(Exception):
    """A file the run was asked to write cannot be written; str() is the whole message."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write {escaped(path)}: {reason}")  # (a name can hold escapes)


def reason(exc: BaseException) -> str:
    """An OSError in plain words (`No space left on device`), never a traceback."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc) or type(exc).__name__
    return str(exc) or type(exc).__name__


def ignore_file_size_signal() -> None:
    """Past RLIMIT_FSIZE the kernel sends SIGXFSZ, which kills the process; ignored, the
    write fails with EFBIG instead, and that is reported like any other write error."""
    sig = getattr(signal, "SIGXFSZ", None)
    if sig is not None:
        with contextlib.suppress(ValueError, OSError):  # not the main thread: leave it
            signal.signal(sig, signal.SIG_IGN)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_target(path: str, inputs: Iterable[tuple[str, str]]) -> None:
    """Refuse to write `path` when it is a folder, or one of `inputs` ((path, what) pairs:
    the spec, a source it reads): the run would destroy what it reads."""
    if path == "":
        raise OutputError("''", "no file name given")
    for source, what in inputs:
        if _same_file(path, source):
            raise OutputError(path, f"it is {what} of this run; choose another file")
    if os.path.isdir(path):
        raise OutputError(path, "it is a directory")


@contextlib.contextmanager
def atomic_text(path: str) -> Iterator[IO[str]]:
    """A text file to write; on success it replaces `path` at once, on any failure `path`
    is untouched and the temporary file is removed. OSError becomes OutputError."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        # A device or a FIFO: write in place.
        try:
            f = open(path, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise OutputError(path, reason(exc)) from None
        try:
            yield f
            f.close()
        except OSError as exc:
            with contextlib.suppress(OSError):
                f.close()
            raise OutputError(path, reason(exc)) from None
        return
    folder = os.path.dirname(os.path.abspath(path))
    try:
        import tempfile  # only when a file is written: not on every start

        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(path, reason(exc)) from None
    try:
        f = os.fdopen(fd, "w", encoding="utf-8")
    except OSError as exc:  # pragma: no cover - fdopen of a fresh descriptor
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(path, reason(exc)) from None
    done = False
    try:
        yield f
        f.close()
        if st is not None:
            with contextlib.suppress(OSError):
                os.chmod(tmp, stat.S_IMODE(st.st_mode))
        else:  # mkstemp makes the file 0600; a new file gets the usual umask
            umask = os.umask(0)
            os.umask(umask)
            with contextlib.suppress(OSError):
                os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
        done = True
    except OSError as exc:
        raise OutputError(path, reason(exc)) from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                f.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)


STDOUT = "standard output"


def emit(text: str) -> None:
    """Print `text` (and a newline) on standard output, now: a full disk or a closed
    pipe is an OutputError (a BrokenPipeError stays one: the reader left on purpose)."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(STDOUT, reason(exc)) from None


def silence_stdout() -> None:
    """Point standard output at the null device, so the interpreter's last flush of what
    could not be written does not fail again (and print a traceback) at exit."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
