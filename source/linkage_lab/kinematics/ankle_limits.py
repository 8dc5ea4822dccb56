"""Torque and speed limits of the 2-RSU ankle (docs/design/ankle_linkage.md §5) and its rod forces (§6).

All functions take the ankle Jacobian ``J = ∂φ/∂q`` (``(..., 2, 2)``, rows = motors (a, b),
columns = (pitch, roll); see :mod:`linkage_lab.kinematics.rsu_ankle`) and work in the linkage's
motor sign convention. Joint torques are ``(τ_pitch, τ_roll)``, motor torques ``(τ_a, τ_b)``
(N·m), related by virtual work: ``τ_joint = Jᵀ τ_motor``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from linkage_lab.kinematics.motor_limits import SaturationMode, saturate_motor_torque
from linkage_lab.kinematics.rsu_ankle import jacobian as ankle_jacobian
from linkage_lab.kinematics.rsu_ankle import solve_2x2
from linkage_lab.kinematics.rsu_geometry import RSUAnkleGeometry

#: Sign patterns of the diamond's vertices, in order around it: (+,+), (+,−), (−,−), (−,+).
_VERTEX_SIGNS = ((1.0, 1.0), (1.0, -1.0), (-1.0, -1.0), (-1.0, 1.0))


@dataclass(frozen=True)
class BoxLimits:
    """The pose-independent per-axis limits a simulator with two direct joints assumes (§5).

    Attributes:
        ratio_pitch: Neutral lever ratio ``mean(|J_a,p|, |J_b,p|)`` (rad/rad).
        ratio_roll: Neutral lever ratio ``mean(|J_a,r|, |J_b,r|)`` (rad/rad).
        pitch_peak_nm: ``2 T_peak ratio_pitch`` (N·m).
        roll_peak_nm: ``2 T_peak ratio_roll`` (N·m).
        pitch_rated_nm: ``2 T_rated ratio_pitch`` (N·m).
        roll_rated_nm: ``2 T_rated ratio_roll`` (N·m).
        pitch_speed_rads: Motor no-load speed / ``ratio_pitch`` (rad/s).
        roll_speed_rads: Motor no-load speed / ``ratio_roll`` (rad/s).
    """

    ratio_pitch: float
    ratio_roll: float
    pitch_peak_nm: float
    roll_peak_nm: float
    pitch_rated_nm: float
    roll_rated_nm: float
    pitch_speed_rads: float
    roll_speed_rads: float


def neutral_jacobian(geometry: RSUAnkleGeometry) -> torch.Tensor:
    """``J`` at pitch = roll = 0, float64, ``(2, 2)``."""
    return ankle_jacobian(geometry, torch.zeros(2, dtype=torch.float64))


def neutral_ratios(geometry: RSUAnkleGeometry) -> tuple[float, float]:
    """Lever ratios at neutral: ``(mean(|J_a,p|, |J_b,p|), mean(|J_a,r|, |J_b,r|))`` (§4)."""
    ratios = neutral_jacobian(geometry).abs().mean(dim=0)
    return float(ratios[0]), float(ratios[1])


def box_limits(geometry: RSUAnkleGeometry) -> BoxLimits:
    """Box limits of ``geometry`` with its motor: torque ``2 T ratio`` and speed ``ω₀ / ratio`` per axis."""
    ratio_p, ratio_r = neutral_ratios(geometry)
    motor = geometry.motor
    return BoxLimits(
        ratio_pitch=ratio_p,
        ratio_roll=ratio_r,
        pitch_peak_nm=2.0 * motor.peak_nm * ratio_p,
        roll_peak_nm=2.0 * motor.peak_nm * ratio_r,
        pitch_rated_nm=2.0 * motor.rated_nm * ratio_p,
        roll_rated_nm=2.0 * motor.rated_nm * ratio_r,
        pitch_speed_rads=motor.speed_rads / ratio_p,
        roll_speed_rads=motor.speed_rads / ratio_r,
    )


def joint_torque(jacobian: torch.Tensor, motor_torque: torch.Tensor) -> torch.Tensor:
    """``τ_joint = Jᵀ τ_motor`` (N·m), ``(..., 2)``."""
    return _transposed_times(jacobian, motor_torque)


def _transposed_times(jacobian: torch.Tensor, vector: torch.Tensor) -> torch.Tensor:
    return (jacobian.transpose(-1, -2) @ vector.unsqueeze(-1)).squeeze(-1)


def motor_torque(jacobian: torch.Tensor, joint_torque: torch.Tensor) -> torch.Tensor:
    """``τ_motor = J⁻ᵀ τ_joint`` (N·m): the motor torques that produce a joint torque, ``(..., 2)``."""
    return solve_2x2(jacobian.transpose(-1, -2), joint_torque)


def torque_diamond(jacobian: torch.Tensor, limit_nm: float | torch.Tensor) -> torch.Tensor:
    """Vertices ``Jᵀ (±T, ±T)`` of the feasible joint-torque set at a pose, ``(..., 4, 2)`` (N·m).

    ``limit_nm`` is the motor limit ``T`` (N·m), the same for both motors: a scalar or one per
    pose, ``(...)`` (as for :func:`axis_capacity` and :func:`pure_axis_capacity`).

    The set ``{Jᵀ τ : |τ_a| ≤ T, |τ_b| ≤ T}`` is a parallelogram; the vertices come in order around
    it: motor signs (+,+), (+,−), (−,−), (−,+).
    """
    signs = torch.tensor(_VERTEX_SIGNS, dtype=jacobian.dtype, device=jacobian.device)
    corners = signs * torch.as_tensor(limit_nm, dtype=jacobian.dtype, device=jacobian.device).unsqueeze(-1).unsqueeze(
        -1
    )
    return corners @ jacobian


def axis_capacity(jacobian: torch.Tensor, limit_nm: float | torch.Tensor) -> torch.Tensor:
    """The diamond's extent along each axis j (pitch, roll): ``T (|J_a,j| + |J_b,j|)``, ``(..., 2)`` (N·m)."""
    limit = torch.as_tensor(limit_nm, dtype=jacobian.dtype, device=jacobian.device)
    return jacobian.abs().sum(dim=-2) * limit.unsqueeze(-1)


def pure_axis_capacity(jacobian: torch.Tensor, limit_nm: float | torch.Tensor) -> torch.Tensor:
    """Largest pitch torque with zero roll torque, and the reverse, ``(..., 2)`` (N·m).

    Zero roll torque confines the motor torques to the line ``τ ∝ (J_b,r, −J_a,r)``; the motor
    with the larger lever saturates first, so the pure pitch capacity is
    ``T |det J| / max(|J_a,r|, |J_b,r|)`` (and pure roll ``T |det J| / max(|J_a,p|, |J_b,p|)``).
    Where the other axis' row vanishes the pure capacity is the axis capacity.
    """
    limit = torch.as_tensor(limit_nm, dtype=jacobian.dtype, device=jacobian.device)
    det = (jacobian[..., 0, 0] * jacobian[..., 1, 1] - jacobian[..., 0, 1] * jacobian[..., 1, 0]).abs()
    largest_lever = jacobian.abs().amax(dim=-2)  # (..., 2): per joint column, the larger motor lever
    other = largest_lever.flip(-1)
    pure = det.unsqueeze(-1) / other.clamp(min=torch.finfo(jacobian.dtype).tiny)
    return torch.where(other > 0, pure, jacobian.abs().sum(dim=-2)) * limit.unsqueeze(-1)


def in_diamond(
    jacobian: torch.Tensor, joint_torque: torch.Tensor, limit_nm: float | torch.Tensor, rtol: float = 1e-9
) -> torch.Tensor:
    """``(...)`` bool: whether the motors can produce ``joint_torque``: ``|J⁻ᵀ τ|_i ≤ T_i (1 + rtol)``."""
    limit = torch.as_tensor(limit_nm, dtype=joint_torque.dtype, device=joint_torque.device)
    return (motor_torque(jacobian, joint_torque).abs() <= limit * (1.0 + rtol)).all(dim=-1)


def clamp_to_diamond(
    jacobian: torch.Tensor,
    joint_torque: torch.Tensor,
    limit_nm: float | torch.Tensor,
    mode: SaturationMode = "clip",
) -> torch.Tensor:
    """The joint torque the hardware applies for a command (§5): ``Jᵀ sat(J⁻ᵀ τ_joint)`` (N·m).

    ``mode="clip"`` saturates each motor on its own, as motor drivers do (the applied torque may
    turn); ``"scale"`` shrinks the command along its direction onto the diamond. Torques inside
    the diamond come back unchanged.

    Args:
        jacobian: ``J`` at the pose, ``(..., 2, 2)``.
        joint_torque: Commanded ``(τ_pitch, τ_roll)`` (N·m), ``(..., 2)``.
        limit_nm: Motor limit ``T`` (N·m), a scalar or per motor ``(..., 2)`` (e.g. from
            :func:`torque_speed_limit`).
        mode: ``"clip"`` or ``"scale"``.
    """
    saturated = saturate_motor_torque(motor_torque(jacobian, joint_torque), limit_nm, mode)
    return _transposed_times(jacobian, saturated)


def torque_speed_limit(
    motor_vel: torch.Tensor, limit_nm: float, no_load_speed_rads: float, stall_torque_nm: float | None = None
) -> torch.Tensor:
    """Per-motor torque limit on a linear torque–speed curve (DC motor model), ``(..., 2)`` (N·m).

    ``T(ω) = clip(T_stall (1 − |ω| / ω₀), 0, T)``: flat at ``T`` until the back-EMF line falls
    below it, zero at the no-load speed ``ω₀``. ``stall_torque_nm=None`` means ``T_stall = T``
    (the line starts at standstill).
    """
    stall = limit_nm if stall_torque_nm is None else stall_torque_nm
    return (stall * (1.0 - motor_vel.abs() / no_load_speed_rads)).clamp(min=0.0, max=limit_nm)


def motor_velocity(jacobian: torch.Tensor, joint_vel: torch.Tensor) -> torch.Tensor:
    """``φ̇ = J q̇`` (rad/s), ``(..., 2)``."""
    return (jacobian @ joint_vel.unsqueeze(-1)).squeeze(-1)


def velocity_within_limits(
    jacobian: torch.Tensor, joint_vel: torch.Tensor, speed_limit_rads: float | torch.Tensor
) -> torch.Tensor:
    """``(...)`` bool: whether every motor's speed ``|J q̇|_i`` is within its limit (rad/s)."""
    return (motor_velocity(jacobian, joint_vel).abs() <= speed_limit_rads).all(dim=-1)


def clamp_joint_velocity(
    jacobian: torch.Tensor,
    joint_vel: torch.Tensor,
    speed_limit_rads: float | torch.Tensor,
    mode: SaturationMode = "scale",
) -> torch.Tensor:
    """Joint velocities brought inside the motors' speed limits: ``J⁻¹ sat(J q̇)`` (rad/s).

    ``mode="scale"`` (default) keeps the direction of ``q̇``; ``"clip"`` saturates each motor.
    """
    saturated = saturate_motor_torque(motor_velocity(jacobian, joint_vel), speed_limit_rads, mode)
    return solve_2x2(jacobian, saturated)


def rod_forces(
    jacobian: torch.Tensor, transmission: torch.Tensor, joint_torque: torch.Tensor, crank_radius_m: float
) -> torch.Tensor:
    """Rod forces ``F_i = |τ_m,i| / (r · transmission_i)`` for a joint-torque demand (§6), ``(..., 2)`` (N).

    Args:
        jacobian: ``J`` at the pose, ``(..., 2, 2)``.
        transmission: Transmission per motor at the pose, ``(..., 2)``.
        joint_torque: Demand ``(τ_pitch, τ_roll)`` (N·m), ``(..., 2)``.
        crank_radius_m: Crank radius ``r`` (m).
    """
    return motor_torque(jacobian, joint_torque).abs() / (crank_radius_m * transmission)
