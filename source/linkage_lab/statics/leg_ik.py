"""Closed-form spatial IK of a humanoid leg: hip yaw–roll–pitch, knee pitch, ankle pitch–roll."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from linkage_lab.statics.tree import axis_rotation

#: Joint axes (in the joint's own frame) the solver assumes, hip to foot (robots.md §2.1).
LEG_AXES = {
    "hip_yaw": (0.0, 0.0, 1.0),
    "hip_roll": (1.0, 0.0, 0.0),
    "hip_pitch": (0.0, 1.0, 0.0),
    "knee": (0.0, 1.0, 0.0),
    "ankle_pitch": (0.0, -1.0, 0.0),
    "ankle_roll": (1.0, 0.0, 0.0),
}
#: Relative tolerance on the reach test, so a straight leg survives rounding.
_REACH_RTOL = 1e-9


class LegReachError(ValueError):
    """The ankle target is farther from the hip than the stretched leg (or closer than it folds)."""


class LegAngles(NamedTuple):
    """Joint angles of one leg (rad), in the order and signs of ``LEG_AXES``."""

    hip_yaw: float
    hip_roll: float
    hip_pitch: float
    knee: float
    ankle_pitch: float
    ankle_roll: float

    def joint_pos(self, side: str) -> dict[str, float]:
        """The angles keyed by joint name with the ``{side}_`` prefix (rad)."""
        return {f"{side}_{name}": float(value) for name, value in self._asdict().items()}


def _rot(name: str, angle_rad: float) -> np.ndarray:
    return axis_rotation(LEG_AXES[name], angle_rad)


def leg_inverse_kinematics(
    hip_m: np.ndarray,
    ankle_m: np.ndarray,
    foot_rotation: np.ndarray,
    pelvis_rotation: np.ndarray,
    thigh_length_m: float,
    shin_length_m: float,
) -> LegAngles:
    """Leg angles that put the ankle centre at ``ankle_m`` with the foot turned to ``foot_rotation``.

    The three hip axes meet at the hip centre, the two ankle axes at the ankle centre, and in the
    zero pose the thigh (length ``T``) and shin (``L``) hang along −z. The foot frame is
    ``R_f = R_pelvis Rz(yaw) Rx(roll) Ry(hip_pitch + knee − ankle_pitch) Rx(ankle_roll)`` (the ankle
    pitch axis is −y). Seen from the ankle in the foot frame, the hip sits at

        r = R_fᵀ (h − a) = Rx(−q_ar) [T (sin(q_ap − q_k), 0, cos(q_ap − q_k)) + L (sin q_ap, 0, cos q_ap)],

    so ``q_k = arccos((|r|² − T² − L²) / 2TL)`` (≥ 0, knee forward), ``q_ar = atan2(r_y, r_z)`` and
    ``q_ap = atan2(r_x, √(r_y² + r_z²)) − atan2(−T sin q_k, T cos q_k + L)``. The hip angles follow
    from ``Rz Rx Ry(q_hp) = R_pelvisᵀ R_f Rx(−q_ar) Ry(q_ap − q_k)`` (a yaw–roll–pitch decomposition).

    Args:
        hip_m: Hip centre in the world (m).
        ankle_m: Ankle centre target in the world (m).
        foot_rotation: Target foot orientation in the world, ``(3, 3)``.
        pelvis_rotation: Pelvis orientation in the world, ``(3, 3)``.
        thigh_length_m: Hip centre → knee axis (m).
        shin_length_m: Knee axis → ankle centre (m).

    Raises:
        LegReachError: ``|h − a|`` is outside ``[|T − L|, T + L]``.
    """
    thigh, shin = thigh_length_m, shin_length_m
    hip_from_ankle = foot_rotation.T @ (np.asarray(hip_m, dtype=float) - np.asarray(ankle_m, dtype=float))
    reach = float(np.linalg.norm(hip_from_ankle))
    if reach > (thigh + shin) * (1.0 + _REACH_RTOL) or reach < abs(thigh - shin) * (1.0 - _REACH_RTOL):
        raise LegReachError(
            f"ankle target {reach:.4f} m from the hip; the leg reaches {abs(thigh - shin):.4f} … {thigh + shin:.4f} m"
        )
    cos_knee = (reach * reach - thigh * thigh - shin * shin) / (2.0 * thigh * shin)
    knee = math.acos(min(1.0, max(-1.0, cos_knee)))
    rx, ry, rz = (float(v) for v in hip_from_ankle)
    ankle_roll = math.atan2(ry, rz)
    ankle_pitch = math.atan2(rx, math.hypot(ry, rz)) - math.atan2(
        -thigh * math.sin(knee), thigh * math.cos(knee) + shin
    )
    hip = pelvis_rotation.T @ foot_rotation @ _rot("ankle_roll", -ankle_roll) @ _rot("hip_pitch", ankle_pitch - knee)
    hip_yaw = math.atan2(-hip[0, 1], hip[1, 1])
    hip_roll = math.atan2(hip[2, 1], math.hypot(hip[0, 1], hip[1, 1]))
    hip_pitch = math.atan2(-hip[2, 0], hip[2, 2])
    return LegAngles(hip_yaw, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll)
