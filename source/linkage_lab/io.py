"""Atomic file writes: a temp file in the target folder, then a rename."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` so that readers see either the old file or the whole new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Atomic text write (UTF-8)."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | Path, obj: Any) -> Path:
    """Atomic JSON write, indented, with a trailing newline."""
    return write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def save_figure_atomic(fig: Any, path: str | Path, dpi: int = 120) -> Path:
    """Save a matplotlib figure as PNG atomically."""
    import io as _io

    buffer = _io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return write_bytes_atomic(path, buffer.getvalue())
