"""Output folders that appear whole or not at all: write into a temp folder beside, then rename."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def staged_directory(final_dir: str | Path) -> Iterator[Path]:
    """Yield a temp folder beside ``final_dir``; on success it replaces ``final_dir``, on error it is removed.

    An existing ``final_dir`` is replaced as a whole (moved aside, then deleted), so readers see
    either the old folder or the complete new one.

    Raises:
        NotADirectoryError: ``final_dir`` exists and is not a folder.
    """
    final_dir = Path(final_dir).resolve()
    if final_dir.exists() and not final_dir.is_dir():
        raise NotADirectoryError(f"output path {final_dir} exists and is not a folder")
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final_dir.name}.", suffix=".tmp", dir=final_dir.parent))
    try:
        yield staging
        staging.chmod(0o755)
        if final_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{final_dir.name}.", suffix=".old", dir=final_dir.parent))
            old.rmdir()
            final_dir.rename(old)
            staging.rename(final_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(final_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
