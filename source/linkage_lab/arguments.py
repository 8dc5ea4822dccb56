"""Argument types shared by the command-line parsers: numbers that must be finite, velocity commands."""

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


def parse_command(text: str) -> tuple[float, float]:
    """``"VX"`` or ``"VX,WZ"`` (m/s, rad/s) as a pair.

    Raises:
        ValueError: Not one or two finite numbers separated by a comma.
    """
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or not all(math.isfinite(v) for v in values):
        raise ValueError(f"command must be VX or VX,WZ (m/s, rad/s), e.g. 0.3,0.0; got {text!r}")
    return (values[0], values[1] if len(values) == 2 else 0.0)
