"""Rotation matrices (numpy)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def axis_rotation(axis: Iterable[float], angle_rad: float) -> np.ndarray:
    """Rotation by ``angle_rad`` about the unit vector ``axis`` (right hand), Rodrigues' formula.

    ``R = I + sin θ K + (1 − cos θ) K²`` with ``K`` the cross-product matrix of the axis.
    """
    x, y, z = (float(v) for v in axis)
    cross = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + np.sin(angle_rad) * cross + (1.0 - np.cos(angle_rad)) * cross @ cross
