"""Argument types shared by the command-line parsers: numbers that must be finite."""

from __future__ import annotations

import argparse
import math


def finite_float(text: str) -> float:
    """An argparse ``type``: a finite float (``nan``, ``inf`` and non-numbers are usage errors)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value
