"""Constant linkage maps shared by the math and the torch-free deploy code (imports nothing heavy)."""

from __future__ import annotations

#: The parallelogram (parallel-link) leg, ``q^p = J q^s`` on (hip, knee): the hip motor turns the
#: hip, the knee motor the absolute shank angle (hip + knee). Rows motors, columns joints (docs/design/s3n.md §1).
PARALLELOGRAM_LEG_JACOBIAN: tuple[tuple[float, float], tuple[float, float]] = ((1.0, 0.0), (1.0, 1.0))
