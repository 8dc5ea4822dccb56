"""Output folders that appear whole or not at all; the implementation lives in :mod:`linkage_lab.outputs`."""

from __future__ import annotations

from linkage_lab.outputs import OutputDirError, staged_directory

__all__ = ["OutputDirError", "staged_directory"]
