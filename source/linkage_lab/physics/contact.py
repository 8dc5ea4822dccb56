"""A contact's stiffness as MuJoCo states it (``solref``) and as Newton's shapes carry it (``ke``, ``kd``).

Newton's MuJoCo-Warp solver turns a shape's ``ke`` (N/m) and ``kd`` (N·s/m) into a MuJoCo ``solref`` of time constant
``2 / kd`` and damping ratio ``kd / (2 √ke)`` (unit impedance width and ratio), and MuJoCo then raises any time
constant below twice the physics step to twice the step (its ``refsafe``): a contact stated stiffer than the step can
integrate gets the step's stiffness, and a finer step stiffens it. A contact meant to be the same at every step states
a time constant the step can hold.
"""

from __future__ import annotations

import math


def _checked(name: str, value: float) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be finite and positive, got {value!r}")
    return value


def newton_shape_gains(timeconst_s: float, dampratio: float) -> tuple[float, float]:
    """``(ke, kd)`` of a Newton shape whose contact MuJoCo-Warp applies as ``solref = (timeconst_s, dampratio)``."""
    timeconst_s, dampratio = _checked("timeconst_s", timeconst_s), _checked("dampratio", dampratio)
    return 1.0 / (timeconst_s * dampratio) ** 2, 2.0 / timeconst_s


def mujoco_solref(ke: float, kd: float, physics_dt_s: float | None = None) -> tuple[float, float]:
    """The ``solref`` a Newton shape's ``(ke, kd)`` asks for; given the physics step, the one MuJoCo applies."""
    ke, kd = _checked("ke", ke), _checked("kd", kd)
    timeconst_s = 2.0 / kd
    if physics_dt_s is not None:
        timeconst_s = max(timeconst_s, 2.0 * _checked("physics_dt_s", physics_dt_s))
    return timeconst_s, kd / (2.0 * math.sqrt(ke))
