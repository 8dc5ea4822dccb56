"""Least-squares identification of a parallelogram leg's motor-space inertia ``M_p(α)`` (docs/design/s3n.md §2).

In motor coordinates ``θ = (θ₁, θ₂)`` (hip motor, knee motor = lower link's absolute angle) with
``α = θ₂ − θ₁``, the leg's kinetic energy ``½M₁₁θ̇₁² + M₁₂ cos α θ̇₁θ̇₂ + ½M₂₂θ̇₂²`` gives

    τ₁ = M₁₁ θ̈₁ + M₁₂ (cos α θ̈₂ − sin α θ̇₂²) + B₁ θ̇₁ + g₁ₛ sin θ₁ + g₁꜀ cos θ₁
    τ₂ = M₂₂ θ̈₂ + M₁₂ (cos α θ̈₁ + sin α θ̇₁²) + B₂ θ̇₂ + g₂ₛ sin θ₂ + g₂꜀ cos θ₂

(Coriolis terms exact for this structure; gravity of a planar leg with both links' masses on
their own motor angles). The equations are linear in the 9 parameters, so stacking both rows of
every sample gives an ordinary least-squares problem; the damping may be given instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Parameter order of :func:`mp_regressor`'s columns.
PARAMETERS = ("m11", "m12", "m22", "b1", "b2", "g1_sin", "g1_cos", "g2_sin", "g2_cos")


@dataclass(frozen=True)
class MpIdentification:
    """Result of :func:`identify_mp`.

    Attributes:
        mp_kgm2: ``(M₁₁, M₁₂, M₂₂)`` (kg·m²).
        damping_nms_per_rad: ``(B₁, B₂)`` (N·m·s/rad), identified or as given.
        gravity_nm: ``(g₁ₛ, g₁꜀, g₂ₛ, g₂꜀)`` (N·m).
        residual_rms_nm: RMS of the torque residual over both motors (N·m).
        condition_number: Of the (column-scaled) regressor; large means poorly excited.
        num_samples: Samples used.
    """

    mp_kgm2: tuple[float, float, float]
    damping_nms_per_rad: tuple[float, float]
    gravity_nm: tuple[float, float, float, float]
    residual_rms_nm: float
    condition_number: float
    num_samples: int


def mp_regressor(motor_pos: np.ndarray, motor_vel: np.ndarray, motor_acc: np.ndarray) -> np.ndarray:
    """The regressor ``Y`` with ``τ = Y p``, ``p`` in :data:`PARAMETERS` order.

    Args:
        motor_pos: ``(N, 2)`` motor angles (rad).
        motor_vel: ``(N, 2)`` motor rates (rad/s).
        motor_acc: ``(N, 2)`` motor accelerations (rad/s²).

    Returns:
        ``(N, 2, 9)``: row 0 is the hip motor's equation, row 1 the knee motor's.
    """
    theta1, theta2 = motor_pos[:, 0], motor_pos[:, 1]
    vel1, vel2 = motor_vel[:, 0], motor_vel[:, 1]
    acc1, acc2 = motor_acc[:, 0], motor_acc[:, 1]
    alpha = theta2 - theta1
    cos_a, sin_a = np.cos(alpha), np.sin(alpha)
    zero = np.zeros_like(theta1)
    hip_row = [
        acc1,
        cos_a * acc2 - sin_a * vel2**2,
        zero,
        vel1,
        zero,
        np.sin(theta1),
        np.cos(theta1),
        zero,
        zero,
    ]
    knee_row = [
        zero,
        cos_a * acc1 + sin_a * vel1**2,
        acc2,
        zero,
        vel2,
        zero,
        zero,
        np.sin(theta2),
        np.cos(theta2),
    ]
    return np.stack([np.stack(hip_row, axis=-1), np.stack(knee_row, axis=-1)], axis=1)


def forward_difference_acceleration(motor_vel: np.ndarray, dt: float) -> np.ndarray:
    """``θ̈ₖ = (θ̇ₖ₊₁ − θ̇ₖ)/dt``, ``(N − 1, 2)``: the acceleration a semi-implicit Euler step applied."""
    return np.diff(motor_vel, axis=0) / dt


def identify_mp(
    motor_pos: np.ndarray,
    motor_vel: np.ndarray,
    motor_acc: np.ndarray,
    motor_torque: np.ndarray,
    known_damping_nms_per_rad: Sequence[float] | None = None,
) -> MpIdentification:
    """Fit ``M₁₁, M₁₂, M₂₂`` (and damping, gravity) to motion data by least squares.

    Args:
        motor_pos, motor_vel, motor_acc: ``(N, 2)`` samples (rad, rad/s, rad/s²).
        motor_torque: ``(N, 2)`` applied motor torques (N·m).
        known_damping_nms_per_rad: ``(B₁, B₂)`` to hold fixed; ``None``: identify them too.

    Returns:
        The identified parameters.
    """
    regressor = mp_regressor(motor_pos, motor_vel, motor_acc)
    torque = np.asarray(motor_torque, dtype=float).copy()
    columns = list(range(len(PARAMETERS)))
    if known_damping_nms_per_rad is not None:
        torque -= np.asarray(known_damping_nms_per_rad, dtype=float) * motor_vel
        columns = [i for i, name in enumerate(PARAMETERS) if name not in ("b1", "b2")]
    design = regressor[:, :, columns].reshape(-1, len(columns))
    target = torque.reshape(-1)
    scale = np.linalg.norm(design, axis=0)
    scale[scale == 0.0] = 1.0
    solution, *_ = np.linalg.lstsq(design / scale, target, rcond=None)
    solution /= scale
    params = dict.fromkeys(PARAMETERS, 0.0)
    params.update(zip((PARAMETERS[i] for i in columns), solution.tolist(), strict=True))
    if known_damping_nms_per_rad is not None:
        params["b1"], params["b2"] = (float(x) for x in known_damping_nms_per_rad)
    residual = target - design @ solution
    return MpIdentification(
        mp_kgm2=(params["m11"], params["m12"], params["m22"]),
        damping_nms_per_rad=(params["b1"], params["b2"]),
        gravity_nm=(params["g1_sin"], params["g1_cos"], params["g2_sin"], params["g2_cos"]),
        residual_rms_nm=float(np.sqrt(np.mean(residual**2))),
        condition_number=float(np.linalg.cond(design / scale)),
        num_samples=int(motor_pos.shape[0]),
    )
