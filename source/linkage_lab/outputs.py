"""Output folders of ``eval``, ``export`` and ``sprint``: checked before work, whole or absent, never foreign.

Each command writes a manifest, :data:`MANIFEST_FILE`, into its folder, naming the command and
every file it wrote. That manifest is how a later run recognises the folder as its own:

* a missing or empty folder is written;
* a previous output of the same command is replaced only when asked (``--force``), and only if it
  holds nothing but the files its manifest lists;
* anything else (a user's folder, another command's output, a file) is refused and named, and
  nothing in it is touched.

:func:`check_output_dir` runs all of this, plus a writability probe, before any simulation is
built; :func:`staged_directory` repeats the check when the output is complete and swaps it in;
:func:`write_output` falls back to a temp folder when the final folder cannot be written, so a
finished run is never lost.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from linkage_lab.io import write_json_atomic

#: The manifest each command writes into its output folder.
MANIFEST_FILE = ".linkage-lab-output.json"


class OutputDirError(ValueError):
    """An output path that must not or cannot be written; the message names it."""


class OutputWriteError(OutputDirError):
    """The output could not be written to its folder; it was written to :attr:`fallback` instead.

    Attributes:
        fallback: The folder holding the complete output (``None`` when even that failed).
    """

    def __init__(self, message: str, fallback: Path | None = None):
        super().__init__(message)
        self.fallback = fallback


def read_manifest(folder: str | Path) -> dict[str, Any] | None:
    """The manifest of ``folder`` (a dict with at least ``command``), or ``None`` when it has none."""
    try:
        manifest = json.loads((Path(folder) / MANIFEST_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("command"), str):
        return None
    return manifest


def check_output_dir(path: str | Path, command: str, force: bool = False, probe: bool = True) -> Path:
    """Check that ``command`` may write its output folder at ``path``; cheap, for before any work.

    Args:
        path: The output folder.
        command: The command name written in the manifest (``eval``, ``export``, ``sprint``).
        force: Allow replacing a previous output of ``command``.
        probe: Also create the parent folder and a temp file in it, to prove it writable.

    Returns:
        The absolute path.

    Raises:
        OutputDirError: ``path`` is a file, a foreign or non-empty folder, another command's output, a
            previous output without ``force``, a previous output holding files it did not write, or
            not writable.
    """
    path = Path(path).expanduser().absolute()
    if path.exists() or path.is_symlink():
        _check_existing(path, command, force)
    if probe:
        probe_writable(path)
    return path


def _check_existing(path: Path, command: str, force: bool) -> None:
    if not path.is_dir():
        raise OutputDirError(f"output path {path} exists and is not a folder; give --out a folder")
    try:
        entries = list(path.iterdir())
    except OSError as exc:
        raise OutputDirError(f"cannot read output folder {path}: {exc.strerror or exc}") from exc
    if not entries:
        return
    manifest = read_manifest(path)
    if manifest is None:
        raise OutputDirError(
            f"output folder {path} is not empty and is not a linkage-lab output; refusing to replace it "
            "(give --out a new or empty folder)"
        )
    if manifest["command"] != command:
        raise OutputDirError(
            f"output folder {path} holds a linkage-lab {manifest['command']} output, not {_article(command)} "
            f"{command} output; "
            "give --out another folder"
        )
    if not force:
        raise OutputDirError(
            f"output folder {path} holds a previous {command} output; pass --force to replace it, "
            "or give --out another folder"
        )
    listed = set(manifest.get("files") or ()) | {MANIFEST_FILE}
    foreign = sorted(rel for rel in _relative_files(path) if rel not in listed)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" (+{len(foreign) - 5} more)" if len(foreign) > 5 else "")
        raise OutputDirError(
            f"output folder {path} holds files the previous {command} did not write ({shown}); "
            "refusing to replace it; move them away or give --out another folder"
        )


def _article(word: str) -> str:
    """``a`` or ``an`` before ``word`` (by its first letter: ``an eval``, ``an export``, ``a sprint``)."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def _relative_files(folder: Path) -> list[str]:
    """Every entry below ``folder`` that is not a folder (files, links), as POSIX relative paths."""
    out = []
    for root, dirs, files in os.walk(folder):
        base = Path(root)
        # A link to a folder is an entry of its own, not something to walk into.
        out += [(base / name).relative_to(folder).as_posix() for name in dirs if (base / name).is_symlink()]
        out += [(base / name).relative_to(folder).as_posix() for name in files]
    return out


def probe_writable(path: Path, what: str = "output folder") -> None:
    """Create ``path``'s parent and a temp file in it (removed again), or raise :class:`OutputDirError`
    naming ``what`` is at ``path``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(prefix=f".{path.name}.", suffix=".probe", dir=path.parent):
            pass
    except OSError as exc:
        raise OutputDirError(f"cannot write {what} {path}: {exc.strerror or exc}") from exc


def _write_manifest(folder: Path, command: str) -> None:
    import linkage_lab

    files = sorted(rel for rel in _relative_files(folder) if rel != MANIFEST_FILE)
    write_json_atomic(
        folder / MANIFEST_FILE,
        {
            "command": command,
            "linkage_lab_version": linkage_lab.__version__,
            "written_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "files": files,
        },
    )


@contextlib.contextmanager
def staged_directory(final_dir: str | Path, command: str, force: bool = False) -> Iterator[Path]:
    """Yield a temp folder beside ``final_dir``; on success it becomes ``final_dir``, on error it is removed.

    The command's manifest is added to the folder. ``final_dir`` is checked as by
    :func:`check_output_dir` before and again after the body (something may have appeared there
    meanwhile); a previous output it replaces is moved aside and then deleted, so readers see either
    the old folder or the complete new one.

    Raises:
        OutputDirError: ``final_dir`` must not be replaced (see :func:`check_output_dir`).
    """
    final_dir = check_output_dir(final_dir, command, force)
    staging = Path(tempfile.mkdtemp(prefix=f".{final_dir.name}.", suffix=".tmp", dir=final_dir.parent))
    try:
        yield staging
        _write_manifest(staging, command)
        staging.chmod(0o755)
        check_output_dir(final_dir, command, force, probe=False)
        if final_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{final_dir.name}.", suffix=".old", dir=final_dir.parent))
            old.rmdir()
            final_dir.rename(old)
            staging.rename(final_dir)
            if old.is_symlink():  # a link to a previous output: the link goes, the folder it named stays
                old.unlink()
            else:
                shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(final_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_output[T](final_dir: str | Path, command: str, writer: Callable[[Path], T], force: bool = False) -> T:
    """Run ``writer(folder)`` in a :func:`staged_directory` for ``final_dir``; never lose its output.

    When ``final_dir`` cannot be written (refused, permissions, disk), ``writer`` runs again into a
    fresh folder under the system temp folder, and :class:`OutputWriteError` says where that is.

    Returns:
        What ``writer`` returned.

    Raises:
        OutputWriteError: ``final_dir`` could not be written; the output is in its ``fallback``.
    """
    try:
        with staged_directory(final_dir, command, force) as staging:
            result = writer(staging)
        return result
    except (OSError, OutputDirError) as exc:
        reason = str(exc) if isinstance(exc, OutputDirError) else f"{exc.strerror or exc}"
        try:
            fallback = Path(tempfile.mkdtemp(prefix=f"linkage-lab-{command}-"))
            writer(fallback)
            _write_manifest(fallback, command)
        except Exception as fallback_exc:  # the output itself cannot be written anywhere: say both
            raise OutputWriteError(
                f"cannot write {command} output to {final_dir} ({reason}), nor to a temp folder ({fallback_exc})"
            ) from exc
        raise OutputWriteError(
            f"cannot write {command} output to {final_dir} ({reason}); it was written to {fallback} instead",
            fallback,
        ) from exc
