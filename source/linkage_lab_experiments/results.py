"""Where a study's result goes: its JSON document and its picture, side by side in one folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_result(out: str | Path, stem: str, document: dict[str, Any], draw: Callable[[Path], None]) -> Path:
    """Write ``<out>/<stem>.json`` (atomically) and ``<out>/<stem>.png`` (``draw`` given its path), print where; returns
    the folder."""
    from linkage_lab.io import write_json_atomic

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / f"{stem}.json", document)
    draw(folder / f"{stem}.png")
    print(f"wrote {folder / f'{stem}.json'} and {folder / f'{stem}.png'}")
    return folder
