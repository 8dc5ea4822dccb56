"""Atomic file writes: a temp file in the target folder, then a rename."""

from __future__ import annotations

import json
import math
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


#: The key under which :func:`strict_json` lists the values it wrote as ``null``, and why.
NON_FINITE_KEY = "non_finite_values"


def finite_or_none(obj: Any, path: str = "$", found: dict[str, str] | None = None) -> Any:
    """``obj`` with every NaN or infinite float replaced by ``None``; each replaced one is added to ``found``
    as ``{json path: "nan" | "inf" | "-inf"}``."""
    if isinstance(obj, dict):
        return {key: finite_or_none(value, f"{path}.{key}", found) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_or_none(value, f"{path}[{i}]", found) for i, value in enumerate(obj)]
    if isinstance(obj, float) and not math.isfinite(obj):
        if found is not None:
            found[path] = repr(obj)
        return None
    return obj


def strict_json(obj: Any, indent: int | None = 2) -> str:
    """JSON that strict parsers read: no ``NaN``/``Infinity`` tokens.

    A non-finite number is written as ``null``; when ``obj`` is a mapping, :data:`NON_FINITE_KEY` then
    names each such value's path and what it was (the reason it is ``null``).
    """
    found: dict[str, str] = {}
    clean = finite_or_none(obj, found=found)
    if found and isinstance(clean, dict):
        clean[NON_FINITE_KEY] = {
            where: f"{value}: not a finite number, written as null" for where, value in found.items()
        }
    return json.dumps(clean, indent=indent, sort_keys=False, allow_nan=False)


def write_json_atomic(path: str | Path, obj: Any) -> Path:
    """Atomic JSON write, indented, with a trailing newline; NaN and infinities become ``null``."""
    return write_text_atomic(path, strict_json(obj) + "\n")


def save_figure_atomic(fig: Any, path: str | Path, dpi: int = 120) -> Path:
    """Save a matplotlib figure as PNG atomically."""
    import io as _io

    buffer = _io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return write_bytes_atomic(path, buffer.getvalue())
