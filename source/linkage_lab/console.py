"""The console is for a person: framework output goes to a log file unless asked for.

Isaac Lab prints its manager tables and warnings while an env is built, rsl-rl prints its models
and a 40-line block per training iteration. :func:`framework_output` sends everything written to
the process's stdout and stderr inside it (Python and native code alike, at the file-descriptor
level) to :data:`FRAMEWORK_LOG` instead, appended under a header line; :func:`console` is a stream
to the real terminal meanwhile, for the project's own progress lines. ``linkage-lab --verbose`` (or
``LINKAGE_LAB_VERBOSE=1``) keeps the framework output on the console.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from linkage_lab.paths import REPO_ROOT

#: Where framework output goes (appended; one header line per redirected phase).
FRAMEWORK_LOG = REPO_ROOT / "logs" / "framework.log"
#: Environment variable that keeps framework output on the console (``1``, ``true``, ``yes``).
VERBOSE_ENV = "LINKAGE_LAB_VERBOSE"

_state: dict[str, object] = {"terminal": None, "announced": False}


def verbose() -> bool:
    """Whether framework output stays on the console."""
    return os.environ.get(VERBOSE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def set_verbose(value: bool) -> None:
    """Keep (``True``) or redirect (``False``) framework output from now on, in this process and its children."""
    os.environ[VERBOSE_ENV] = "1" if value else "0"


def skip_notice() -> None:
    """Leave out the one-line "framework output: …" notice in this process (a child whose parent printed it)."""
    _state["announced"] = True


def console() -> TextIO:
    """The terminal's stdout, also inside :func:`framework_output`."""
    terminal = _state["terminal"]
    return terminal if terminal is not None else sys.stdout  # type: ignore[return-value]


def say(*parts: object) -> None:
    """``print`` to :func:`console`, flushed."""
    print(*parts, file=console(), flush=True)


@contextmanager
def framework_output(phase: str, log_file: Path | None = None) -> Iterator[Path | None]:
    """Send stdout and stderr (file descriptors 1 and 2) to the framework log for the block's duration.

    Nested uses write to the same log. A no-op (yields ``None``) when :func:`verbose`, and when the
    process's stdout has no file descriptor (an embedding that replaced it, e.g. a notebook).

    Yields:
        The log file.
    """
    if verbose() or _state["terminal"] is not None or not _has_fds():
        yield None
        return
    log_file = Path(log_file or FRAMEWORK_LOG)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    terminal = io.TextIOWrapper(os.fdopen(os.dup(saved_out), "wb", buffering=0), write_through=True)
    if not _state["announced"]:
        _state["announced"] = True
        print(f"(framework output: {_display(log_file)}; --verbose shows it here)", file=terminal, flush=True)
    with open(log_file, "ab", buffering=0) as log:
        log.write(f"\n===== {time.strftime('%Y-%m-%d %H:%M:%S')} {phase} (pid {os.getpid()}) =====\n".encode())
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        _state["terminal"] = terminal
        try:
            yield log_file
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os.dup2(saved_out, 1)
                os.dup2(saved_err, 2)
                os.close(saved_out)
                os.close(saved_err)
                _state["terminal"] = None
                terminal.close()


def _has_fds() -> bool:
    try:
        return sys.stdout.fileno() == 1 and sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):
        return False


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def log_python_warnings() -> None:
    """Send Python warnings (a library's ``UserWarning`` raised while an env steps, outside any
    :func:`framework_output` block) to :data:`FRAMEWORK_LOG` instead of the console; a no-op when
    :func:`verbose`. The project's own messages are printed, never warned."""
    import warnings

    if verbose():
        return

    def show(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001 - warnings' hook
        text = warnings.formatwarning(message, category, filename, lineno, line)
        try:
            FRAMEWORK_LOG.parent.mkdir(parents=True, exist_ok=True)
            with open(FRAMEWORK_LOG, "a", encoding="utf-8") as log:
                log.write(text)
        except OSError:
            sys.stderr.write(text)  # no log to write: the warning is not lost

    warnings.showwarning = show


def init_warp_quietly() -> None:
    """Start Warp inside a :func:`framework_output` block, so that its start-up notices (on a machine
    without a GPU, "Warp CUDA warning: Could not find or load the NVIDIA CUDA driver") go to the log;
    later starts are no-ops. Nothing happens when :func:`verbose` or where Warp is not installed."""
    if verbose():
        return
    try:
        import warp
    except ImportError:
        return
    with framework_output("warp start-up"):
        warp.init()
