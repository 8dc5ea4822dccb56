"""The training package's request error (its own module, so every training module can raise it)."""

from __future__ import annotations


class TrainingConfigError(ValueError):
    """A training request that cannot run: sizes out of range, a refused key, a finished run."""
