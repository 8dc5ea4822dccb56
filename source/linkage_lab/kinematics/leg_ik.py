"""Leg inverse kinematics: the planar two-link leg (torch, batched; each robot's joint signs, the
parallelogram-leg form) and the spatial six-joint humanoid leg (numpy), with one reach test and one
error type.

The planar model works in one convention, the "+y model": every sagittal angle is a
right-hand rotation about +y (REP-103, +x forward, +z up), so a positive angle swings the
distal link backwards, and the zero pose hangs the leg straight down. A foot target is
``(x, z)``: ``x`` the forward offset of the ankle from the hip, ``z`` the height of the hip
above the ankle (> 0). Forward kinematics in this model::

    x = −T sin(q_hip) − L sin(q_hip + q_knee)
    z =  T cos(q_hip) + L cos(q_hip + q_knee)

A robot's joint angle is its axis sign times the model angle (``LegConvention``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from linkage_lab.kinematics.rotation import axis_rotation
from linkage_lab.kinematics.transmission import parallelogram_leg

#: Relative tolerance of every reach test, so a target exactly at ``T + L`` survives rounding (float32 too).
REACH_RTOL = 1e-6


class LegReachError(ValueError):
    """A foot (ankle) target lies outside the leg's workspace (``d > T + L`` or ``d < |T − L|``)."""


@dataclass(frozen=True)
class LegConvention:
    """How a robot's sagittal leg joints map onto the +y planar model.

    Attributes:
        hip_axis_sign: +1 if the hip pitch axis is +y, −1 if it is −y (unitless).
        knee_axis_sign: +1 if the knee axis is +y, −1 if it is −y (unitless).
        ankle_axis_sign: +1 if the ankle pitch axis is +y, −1 if it is −y (unitless).
        knee_forward: True: the knee sits ahead of the hip–ankle line (human knee, model
            knee angle > 0). False: behind it (model knee angle < 0).
    """

    hip_axis_sign: float = 1.0
    knee_axis_sign: float = 1.0
    ankle_axis_sign: float = 1.0
    knee_forward: bool = True


class LegAngles(NamedTuple):
    """Joint angles of one planar leg (rad), in the robot's own convention."""

    hip: torch.Tensor
    knee: torch.Tensor
    ankle: torch.Tensor
    #: True where the target was inside the workspace; False where it was clamped onto it.
    reachable: torch.Tensor


def leg_convention(axes: Sequence[Sequence[float]], standing_knee_rad: float) -> LegConvention:
    """The joint signs and knee direction of a sagittal leg from its joint axes and standing knee angle.

    Args:
        axes: The hip, knee and ankle pitch axes (each ±y); their y signs are the joint signs.
        standing_knee_rad: The standing pose's knee angle: its sign in the +y model is the knee's
            direction (Marvin stands with knee = +0.5, knee ahead of the leg line; the Limit with
            −1.2, knee behind).

    Raises:
        ValueError: An axis is not ±y.
    """
    signs = []
    for axis in axes:
        if abs(axis[0]) > 0.0 or abs(axis[2]) > 0.0 or abs(abs(axis[1]) - 1.0) > 1e-9:
            raise ValueError(f"sagittal leg joint axis must be ±y, got {tuple(axis)}")
        signs.append(math.copysign(1.0, axis[1]))
    return LegConvention(signs[0], signs[1], signs[2], knee_forward=standing_knee_rad * signs[1] > 0.0)


def planar_ik(
    foot_x_m: torch.Tensor,
    foot_z_m: torch.Tensor,
    thigh_length_m: float,
    shank_length_m: float,
    knee_forward: bool = True,
    strict: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Two-link IK in the +y model (docs/design/gait.md §2).

    ``d = √(x² + z²)``, ``γ = arccos((T² + L² − d²) / 2TL)`` (interior knee angle),
    ``β = arccos((T² + d² − L²) / 2Td)``, ``α = atan2(x, z)``; with ``s = +1`` for a forward
    knee and ``−1`` for a backward one: ``q_hip = −α − s β``, ``q_knee = s (π − γ)``.

    Args:
        foot_x_m: Ankle forward offset from the hip ``x`` (m), any shape.
        foot_z_m: Hip height above the ankle ``z`` (m), same shape.
        thigh_length_m: Thigh ``T`` (m), hip → knee.
        shank_length_m: Shank ``L`` (m), knee → ankle.
        knee_forward: Which of the two solutions (see :class:`LegConvention`).
        strict: True: raise :class:`LegReachError` if any target is out of reach. False: clamp
            ``d`` onto ``[|T − L|, T + L]`` and report the mask (no host sync, for control loops).

    Returns:
        ``(q_hip, q_knee, reachable)``: model angles (rad) and a bool mask.

    Raises:
        LegReachError: ``strict`` and some target has ``d > T + L`` or ``d < |T − L|`` (or is NaN).
    """
    thigh, shank = float(thigh_length_m), float(shank_length_m)
    d, reachable = _reach(torch.sqrt(foot_x_m**2 + foot_z_m**2), thigh, shank, strict)
    cos_interior = ((thigh**2 + shank**2 - d**2) / (2.0 * thigh * shank)).clamp(-1.0, 1.0)
    cos_beta = ((thigh**2 + d**2 - shank**2) / (2.0 * thigh * d)).clamp(-1.0, 1.0)
    alpha = torch.atan2(foot_x_m, foot_z_m)
    beta = torch.arccos(cos_beta)
    sign = 1.0 if knee_forward else -1.0
    return -alpha - sign * beta, sign * (math.pi - torch.arccos(cos_interior)), reachable


def planar_fk(
    hip_rad: torch.Tensor, knee_rad: torch.Tensor, thigh_length_m: float, shank_length_m: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Ankle ``(x, z)`` relative to the hip (m) for +y-model angles (module docstring)."""
    shank_angle = hip_rad + knee_rad
    x = -thigh_length_m * torch.sin(hip_rad) - shank_length_m * torch.sin(shank_angle)
    z = thigh_length_m * torch.cos(hip_rad) + shank_length_m * torch.cos(shank_angle)
    return x, z


def leg_ik(
    foot_x_m: torch.Tensor,
    foot_z_m: torch.Tensor,
    thigh_length_m: float,
    shank_length_m: float,
    convention: LegConvention,
    strict: bool = True,
) -> LegAngles:
    """Hip, knee and sole-flat ankle angles in the robot's own joint convention.

    The ankle keeps the sole parallel to the torso: the model angles sum to zero,
    ``q_ankle = −(q_hip + q_knee)``, so for Marvin (ankle axis −y) ``ankle_pitch = hip_pitch + knee``
    and for the Limit (all +y) ``hip + knee + ankle = 0``. See :func:`planar_ik` for the rest.
    """
    hip, knee, reachable = planar_ik(
        foot_x_m, foot_z_m, thigh_length_m, shank_length_m, convention.knee_forward, strict
    )
    return LegAngles(
        hip=convention.hip_axis_sign * hip,
        knee=convention.knee_axis_sign * knee,
        ankle=convention.ankle_axis_sign * -(hip + knee),
        reachable=reachable,
    )


def leg_fk(
    hip_rad: torch.Tensor,
    knee_rad: torch.Tensor,
    thigh_length_m: float,
    shank_length_m: float,
    convention: LegConvention,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Ankle ``(x, z)`` relative to the hip (m) from the robot's own hip and knee angles."""
    return planar_fk(
        convention.hip_axis_sign * hip_rad,
        convention.knee_axis_sign * knee_rad,
        thigh_length_m,
        shank_length_m,
    )


def foot_pitch(
    hip_rad: torch.Tensor, knee_rad: torch.Tensor, ankle_rad: torch.Tensor, convention: LegConvention
) -> torch.Tensor:
    """Pitch of the sole relative to the torso about +y (rad); zero means sole flat."""
    return (
        convention.hip_axis_sign * hip_rad
        + convention.knee_axis_sign * knee_rad
        + convention.ankle_axis_sign * ankle_rad
    )


def parallelogram_motor_angles(
    foot_x_m: torch.Tensor,
    foot_z_m: torch.Tensor,
    link_length_m: float,
    knee_forward: bool = True,
    strict: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Motor angles of an equal-link parallelogram leg, both from the horizontal (docs/design/gait.md §2).

    ``D = √(x² + z²)``, ``α = arccos(D / 2L)``, ``β = asin(z / D)`` reflected (``π − β``) when
    ``x < 0``; ``S1 = β − α`` (hip motor), ``S2 = β + α`` (knee motor = absolute shank angle).
    Angles are measured from the forward horizontal (+x), positive downwards, so a leg hanging
    straight down has ``S1 = S2 = π/2``. That formula puts the knee ahead of the leg line; for
    ``knee_forward=False`` the sign of ``α`` flips (``S1 = β + α``, ``S2 = β − α``).

    Args:
        foot_x_m: Ankle forward offset from the hip (m).
        foot_z_m: Hip height above the ankle (m).
        link_length_m: Common link length ``L`` (m).
        knee_forward: Which of the two solutions.
        strict: As in :func:`planar_ik` (reach ``0 < D ≤ 2L``).

    Returns:
        ``(S1, S2, reachable)`` (rad, rad, bool mask).
    """
    distance, reachable = _reach(torch.sqrt(foot_x_m**2 + foot_z_m**2), link_length_m, link_length_m, strict)
    half_knee = torch.arccos((distance / (2.0 * link_length_m)).clamp(-1.0, 1.0))
    below = torch.asin((foot_z_m.abs() / distance).clamp(-1.0, 1.0))
    line = torch.where(foot_x_m < 0.0, math.pi - below, below)
    sign = 1.0 if knee_forward else -1.0
    return line - sign * half_knee, line + sign * half_knee, reachable


def parallelogram_to_serial(
    hip_motor_rad: torch.Tensor, knee_motor_rad: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Serial +y-model ``(q_hip, q_knee)`` from motor angles measured from the horizontal.

    A direction at angle ``S`` below the forward horizontal is the +y-model angle ``S − π/2``,
    so ``q^p = (S1 − π/2, S2 − π/2)`` and ``q^s = J⁻¹ q^p`` with ``J = [[1, 0], [1, 1]]``.
    """
    motor = torch.stack((hip_motor_rad - 0.5 * math.pi, knee_motor_rad - 0.5 * math.pi), dim=-1)
    serial = parallelogram_leg().joint_position(motor)
    return serial[..., 0], serial[..., 1]


def serial_to_motor(hip_rad: torch.Tensor, knee_rad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Parallel (motor) coordinates ``q^p = J q^s`` of a parallelogram leg (rad, from the zero pose).

    The hip motor equals the hip; the knee motor is the absolute shank angle ``q_hip + q_knee``.
    """
    motor = parallelogram_leg().motor_position(torch.stack((hip_rad, knee_rad), dim=-1))
    return motor[..., 0], motor[..., 1]


def _reach(distance: torch.Tensor, thigh: float, shank: float, strict: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Reach test of hip–ankle distances: ``(distance clamped onto the workspace, reachable mask)``."""
    d_max = thigh + shank
    d_min = max(abs(thigh - shank), REACH_RTOL * d_max)
    tolerance = REACH_RTOL * d_max
    reachable = (distance <= d_max + tolerance) & (distance >= d_min - tolerance)
    if strict and not bool(reachable.all()):
        bad = ~reachable
        worst = float(distance[bad].nan_to_num(nan=float("inf")).max())
        raise LegReachError(
            f"foot target out of reach for {int(bad.sum())} of {reachable.numel()} targets: "
            f"d = {worst:.4f} m, reachable d ∈ [{d_min:.4f}, {d_max:.4f}] m (T = {thigh} m, L = {shank} m)"
        )
    return distance.clamp(d_min, d_max), reachable


# ---- the spatial humanoid leg (numpy) -----------------------------------------------------------

#: Joint axes (in the joint's own frame) the solver assumes, hip to foot (docs/design/robots.md §2.1).
LEG_AXES = {
    "hip_yaw": (0.0, 0.0, 1.0),
    "hip_roll": (1.0, 0.0, 0.0),
    "hip_pitch": (0.0, 1.0, 0.0),
    "knee": (0.0, 1.0, 0.0),
    "ankle_pitch": (0.0, -1.0, 0.0),
    "ankle_roll": (1.0, 0.0, 0.0),
}


class SpatialLegAngles(NamedTuple):
    """Joint angles of one six-joint leg (rad), in the order and signs of ``LEG_AXES``."""

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
) -> SpatialLegAngles:
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
    if reach > (thigh + shin) * (1.0 + REACH_RTOL) or reach < abs(thigh - shin) * (1.0 - REACH_RTOL):
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
    return SpatialLegAngles(hip_yaw, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll)
