"""Kinematics of the 2-RSU + U ankle (docs/design/ankle_linkage.md §2, §4, §6): closed-form IK, Jacobian, transmission.

Conventions (batched over any leading shape ``...``; float32 or float64):

* ``joint_pos`` = ``(pitch, roll)`` (rad), + pitch = toes up, + roll = right-hand about +x.
* ``motor_pos`` = ``(φ_a, φ_b)`` = crank angle minus its neutral value, ``θ − π`` (rad). Both
  motors use the *linkage* sign convention: ``θ`` is the angle of the crank in its own plane,
  tip at ``M + r (cos θ, 0, sin θ)``, i.e. a right-hand rotation about −y for both motors. The
  real motors face opposite ways, so one of them reads ``−φ`` in its own convention; converting
  is the hardware layer's job, not this module's.
* ``J = ∂φ/∂q``, ``(..., 2, 2)``, rows = motors (a, b), columns = (pitch, roll).

The math is one exportable core, :func:`evaluate_core` on the constants of :func:`loop_constants`:
plain tensor ops that ``torch.onnx.export`` traces (no host synchronisation, no branch on tensor
values, no raise; validity is the ``reachable`` output). The deploy bridge
(:mod:`linkage_lab.deploy.ankle_bridge`) exports it as is; the public functions here wrap it and
raise :class:`UnreachablePoseError` outside the core. The forward kinematics (Newton) lives in
:mod:`linkage_lab.kinematics.rsu_fk`.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
import torch

from linkage_lab.kinematics.rsu_geometry import (
    MOTOR_NAMES,
    RSUAnkleGeometry,
)


class UnreachablePoseError(ValueError):
    """A rod cannot reach the requested foot pose (no real solution of the loop closure)."""


class AnkleState(NamedTuple):
    """Result of the closed-form IK at a batch of poses.

    Attributes:
        motor_pos: Crank angles from neutral ``φ = θ − θ_neutral`` (rad), ``(..., 2)``. NaN where
            ``reachable`` is False.
        jacobian: ``J = ∂φ/∂q``, ``(..., 2, 2)``; ``None`` when not requested.
        transmission: Sine of the crank–rod angle per motor (§6), ``(..., 2)``, in ``[0, 1]``.
        reachable: Whether each rod reaches the pose, ``(..., 2)`` bool.
    """

    motor_pos: torch.Tensor
    jacobian: torch.Tensor | None
    transmission: torch.Tensor
    reachable: torch.Tensor


class LoopConstants(NamedTuple):
    """Per-motor constants of the loop closure, ``(2, 1)`` each, in the crank plane rotated by −θ0.

    Built once per geometry, dtype and device by :func:`loop_constants`; the exportable core takes
    them instead of the geometry, so tracing it records them as graph constants.
    """

    foot_x: torch.Tensor  # A0_x (m)
    foot_y: torch.Tensor  # A0_y (m)
    foot_z: torch.Tensor  # A0_z (m)
    centre_x: torch.Tensor  # M'_x, M' = R(−θ0) M (m)
    centre_y: torch.Tensor  # M_y (m)
    centre_z: torch.Tensor  # M'_z (m)
    length_offset: torch.Tensor  # r² − L² (m²)
    transmission_scale: torch.Tensor  # 1 / (2 r L) (1/m²)
    length_sq: torch.Tensor  # L² (m²)
    branch: torch.Tensor  # s = ±1
    half_branch: torch.Tensor  # −s / 2
    crank_radius_m: float
    neutral_crank_angle_rad: float


class LoopSolution(NamedTuple):
    """IK and J in structure-of-arrays layout: ``(2, N)`` each, rows = motors (a, b)."""

    motor_pos: torch.Tensor
    perp2: torch.Tensor  # 2 r S = 2 r L · transmission (m²); NaN (or 0, stretched) where the rod cannot reach
    perp2_sq: torch.Tensor  # (2 r S)², negative where the rod cannot reach (m⁴)
    jacobian_pitch: torch.Tensor | None
    jacobian_roll: torch.Tensor | None


class _FootPoints(NamedTuple):
    """Rod ends on the foot at a pose relative to a base point ``B`` (``(2, N)``; trig ``(N,)``)."""

    cos_p: torch.Tensor  # cos(q_p − θ0)
    sin_p: torch.Tensor  # sin(q_p − θ0)
    vec_y: torch.Tensor  # v = R_x(q_r) A0, y (m)
    vec_z: torch.Tensor  # v, z (m)
    rel_x: torch.Tensor  # A'_x − B_x, A' = R(q_p − θ0) (A0_x, v_z) (m)
    rel_z: torch.Tensor  # A'_z − B_z (m)


@functools.lru_cache(maxsize=64)
def loop_constants(geometry: RSUAnkleGeometry, dtype: torch.dtype, device: str) -> LoopConstants:
    """The loop-closure constants of an ankle as tensors of ``dtype`` on ``device`` (cached).

    Also picks the assembled branch (the one through φ = 0 at neutral).

    Raises:
        ValueError: A rod is singular at the neutral pose (no branch to pick).
    """
    r, theta0 = geometry.crank_radius_m, geometry.neutral_crank_angle_rad
    foot = np.asarray(geometry.rod_end_foot_m, dtype=np.float64)
    centre = np.asarray(geometry.motor_centre_m, dtype=np.float64)
    lengths = np.asarray(geometry.rod_length_m)
    # Both the crank and the ankle pitch turn in the xz plane; rotating it by −θ0 makes the
    # crank angle count from neutral.
    centre_x = centre[:, 0] * math.cos(theta0) + centre[:, 2] * math.sin(theta0)
    centre_z = centre[:, 2] * math.cos(theta0) - centre[:, 0] * math.sin(theta0)
    values = [foot[:, 0], foot[:, 1], foot[:, 2], centre_x, centre[:, 1], centre_z]
    values += [r**2 - lengths**2, 1.0 / (2 * r * lengths), lengths**2]

    def build(signs: np.ndarray) -> LoopConstants:
        columns = [torch.tensor(v, dtype=dtype, device=device).unsqueeze(-1) for v in [*values, signs, -signs / 2]]
        return LoopConstants(*columns, crank_radius_m=r, neutral_crank_angle_rad=theta0)

    # The assembled branch is the one through φ = 0 at neutral: compare both there.
    neutral = torch.zeros(1, dtype=dtype, device=device)
    plus, minus = (
        solve_loop(build(np.full(2, s)), neutral, neutral, False).motor_pos.abs().squeeze(-1).cpu() for s in (1, -1)
    )
    if bool(((plus - minus).abs() < 1e-6).any()):
        raise ValueError(f"ankle {geometry.preset}/{geometry.side}: a rod is singular at the neutral pose")
    return build(np.where((plus < minus).numpy(), 1.0, -1.0))


def _foot_points(
    c: LoopConstants,
    pitch: torch.Tensor,
    roll: torch.Tensor,
    minus_base_x: torch.Tensor,
    minus_base_z: torch.Tensor,
) -> _FootPoints:
    """Rod ends on the foot: the roll turns A0 about x, then the pitch turns (A0_x, v_z) in the xz plane.

    In-place updates of fresh tensors throughout: fewer allocations keep the CPU allocator from
    returning and re-faulting memory on every call (a large share of the time otherwise).
    """
    shifted = pitch - c.neutral_crank_angle_rad
    cos_p, sin_p, cos_r, sin_r = torch.cos(shifted), torch.sin(shifted), torch.cos(roll), torch.sin(roll)
    vec_y = (cos_r * c.foot_y).addcmul_(sin_r, c.foot_z, value=-1.0)
    vec_z = (sin_r * c.foot_y).addcmul_(cos_r, c.foot_z)
    rel_x = torch.addcmul(minus_base_x, cos_p, c.foot_x).addcmul_(sin_p, vec_z, value=-1.0)
    rel_z = torch.addcmul(minus_base_z, sin_p, c.foot_x).addcmul_(cos_p, vec_z)
    return _FootPoints(cos_p, sin_p, vec_y, vec_z, rel_x, rel_z)


def solve_loop(
    c: LoopConstants,
    pitch: torch.Tensor,
    roll: torch.Tensor,
    with_jacobian: bool,
    stretch_unreachable: bool = False,
    angle_dtype: torch.dtype | None = None,
) -> LoopSolution:
    """The math of :func:`evaluate` on flat ``(N,)`` pitch and roll; results ``(2, N)``; traceable.

    Works with ``K = 2r κ = ‖d‖² + r² − L²`` and ``2r S = √(4r² h² − K²)``; atan2 does not mind
    the common factor 2r.

    Args:
        c: The ankle's :func:`loop_constants`.
        pitch: Foot pitch (rad), ``(N,)``.
        roll: Foot roll (rad), ``(N,)``.
        with_jacobian: Also compute ``J`` (a Python flag: decided when tracing, not per pose).
        stretch_unreachable: Where a rod cannot reach, return the angle of the fully stretched
            rod (``S = 0``) instead of NaN; the Jacobian there is infinite or NaN either way.
        angle_dtype: Evaluate the final atan2 in this dtype (``None``: the input's). ONNX Runtime
            has no float64 Atan; the atan2 arguments are exact to float32 rounding, so is the angle.
    """
    feet = _foot_points(c, pitch, roll, -c.centre_x, -c.centre_z)
    d_x, d_y, d_z = feet.rel_x, feet.vec_y - c.centre_y, feet.rel_z
    h_sq = (d_x * d_x).addcmul_(d_z, d_z)
    k = torch.addcmul(h_sq, d_y, d_y).add_(c.length_offset)
    perp2_sq = (h_sq * (4.0 * c.crank_radius_m**2)).addcmul_(k, k, value=-1.0)
    perp2 = torch.sqrt(perp2_sq.clamp(min=0.0) if stretch_unreachable else perp2_sq)
    signed_perp2 = perp2 * c.branch
    cos_num = (d_x * k).addcmul_(d_z, signed_perp2, value=-1.0)
    sin_num = (d_z * k).addcmul_(d_x, signed_perp2)
    if angle_dtype is None:
        motor_pos = torch.atan2(sin_num, cos_num)
    else:
        motor_pos = torch.atan2(sin_num.to(angle_dtype), cos_num.to(angle_dtype)).to(sin_num.dtype)
    if not with_jacobian:
        return LoopSolution(motor_pos, perp2, perp2_sq, None, None)
    # Rod vector e = d − r u(φ), with r (cos φ, sin φ) = (cos_num, sin_num) / (2 h²).
    inverse_h_sq = h_sq.reciprocal()
    e_x = torch.addcmul(d_x, cos_num, inverse_h_sq, value=-0.5)
    e_z = torch.addcmul(d_z, sin_num, inverse_h_sq, value=-0.5)
    # J = (e·∂A/∂q) / (−r s S), ∂A/∂q_p = (−A_z, 0, A_x), ∂A/∂q_r = (−sin_p v_y, −v_z, cos_p v_y);
    # for pitch e·∂A/∂q_p = −r s S + e_z M'_x − e_x M'_z since e_z d_x − e_x d_z = r d·u′ = −r s S.
    inverse_denominator = (perp2 * c.half_branch).reciprocal_()
    jac_pitch = (e_z * c.centre_x).addcmul_(e_x, c.centre_z, value=-1.0).mul_(inverse_denominator).add_(1.0)
    jac_roll = (e_z * feet.cos_p).addcmul_(e_x, feet.sin_p, value=-1.0).mul_(feet.vec_y)
    jac_roll = jac_roll.addcmul_(d_y, feet.vec_z, value=-1.0).mul_(inverse_denominator)
    return LoopSolution(motor_pos, perp2, perp2_sq, jac_pitch, jac_roll)


def evaluate(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor, with_jacobian: bool = True) -> AnkleState:
    """Closed-form IK (§2), its Jacobian (§4) and the transmission (§6) in one pass; never raises.

    Both the crank and the ankle pitch turn in the xz plane. In that plane, rotated by −θ0 so
    that crank angles count from neutral, let ``d = A(q) − M`` (foot point minus crank centre).
    The rod-length constraint ``‖d − r u(φ)‖ = L``, ``u = (cos φ, 0, sin φ)``, becomes

        d_x cos φ + d_z sin φ = κ,   κ = (‖d‖² + r² − L²) / (2r),

    the §2 equation ``P cos θ + Q sin θ = K`` divided by −2r. With ``h² = d_x² + d_z²`` and
    ``S = √(h² − κ²)`` (no solution when negative: the rod cannot reach),

        φ = atan2(d_z κ + s d_x S, d_x κ − s d_z S)  =  atan2(d_z, d_x) + s arccos(κ / h),

    with ``s = ±1`` the branch the linkage is assembled on (φ = 0 at neutral). ``S = |d·u′|`` is
    the crank-perpendicular component of the rod, so the transmission is ``S / L``. The Jacobian
    follows from the implicit function theorem on ``F = ‖d − r u‖² − L² = 0``:

        ∂φ/∂q_j = −(∂F/∂q_j) / (∂F/∂φ) = −(e · ∂A/∂q_j) / (r s S),   e = d − r u(φ).

    The outputs are views on a structure-of-arrays layout (fast on the CPU), not contiguous.

    Args:
        geometry: The ankle.
        joint_pos: ``(..., 2)`` (pitch, roll) (rad).
        with_jacobian: Also compute ``J``.

    Returns:
        The :class:`AnkleState`; check ``reachable`` (or use :func:`inverse_kinematics`).
    """
    constants = loop_constants(geometry, joint_pos.dtype, str(joint_pos.device))
    return evaluate_core(constants, joint_pos, with_jacobian)


def evaluate_core(
    constants: LoopConstants,
    joint_pos: torch.Tensor,
    with_jacobian: bool = True,
    stretch_unreachable: bool = False,
    angle_dtype: torch.dtype | None = None,
) -> AnkleState:
    """:func:`evaluate` on an ankle's :func:`loop_constants`: the exportable core of the IK and J.

    Plain tensor ops only, so ``torch.onnx.export`` traces it with a dynamic batch: no host
    synchronisation, no Python branch on tensor values, no raise. Validity is the ``reachable``
    output; the public functions of this module turn it into :class:`UnreachablePoseError`.

    Args:
        constants: The ankle's :func:`loop_constants`, in the dtype and on the device of ``joint_pos``.
        joint_pos: ``(..., 2)`` (pitch, roll) (rad).
        with_jacobian: Also compute ``J``.
        stretch_unreachable: See :func:`solve_loop` (crank angle of the stretched rod, transmission
            0, where a rod cannot reach; default NaN).
        angle_dtype: See :func:`solve_loop` (dtype of the final atan2).

    Returns:
        The :class:`AnkleState`.
    """
    flat = joint_pos.reshape(-1, 2)
    loop = solve_loop(constants, flat[:, 0], flat[:, 1], with_jacobian, stretch_unreachable, angle_dtype)
    transmission = loop.perp2 * constants.transmission_scale
    jacobian = _unflatten_jacobian(loop, joint_pos) if with_jacobian else None
    reachable = _unflatten(loop.perp2_sq >= 0.0, joint_pos)
    return AnkleState(_unflatten(loop.motor_pos, joint_pos), jacobian, _unflatten(transmission, joint_pos), reachable)


def _flat_loop(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor, with_jacobian: bool) -> LoopSolution:
    flat = joint_pos.reshape(-1, 2)
    return solve_loop(
        loop_constants(geometry, joint_pos.dtype, str(joint_pos.device)), flat[:, 0], flat[:, 1], with_jacobian
    )


def _unflatten(per_motor: torch.Tensor, joint_pos: torch.Tensor) -> torch.Tensor:
    """``(2, N)`` → ``(..., 2)`` like ``joint_pos`` (a view)."""
    return per_motor.T.reshape(joint_pos.shape)


def _unflatten_jacobian(loop: LoopSolution, joint_pos: torch.Tensor) -> torch.Tensor:
    """Rows (joint, motor, N) → ``(..., motor, joint)``."""
    stacked = torch.stack([loop.jacobian_pitch, loop.jacobian_roll])  # type: ignore[list-item]
    return stacked.permute(2, 1, 0).reshape(*joint_pos.shape, 2)


def _check_reachable(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor, loop: LoopSolution) -> None:
    # One reduction in the common case; the mask only to describe a failure (NaN poses fail too).
    if not bool(loop.perp2_sq.amin() >= 0.0):
        raise_if_unreachable(geometry, joint_pos, _unflatten(loop.perp2_sq >= 0.0, joint_pos))


def inverse_kinematics(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor) -> torch.Tensor:
    """Crank angles from neutral (rad), ``(..., 2)``, for foot poses ``(..., 2)`` (rad).

    Raises:
        UnreachablePoseError: A rod cannot reach a pose; the message names motor and pose.
    """
    loop = _flat_loop(geometry, joint_pos, with_jacobian=False)
    _check_reachable(geometry, joint_pos, loop)
    return _unflatten(loop.motor_pos, joint_pos)


def ik_and_jacobian(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Crank angles from neutral (rad) and ``J = ∂φ/∂q`` at ``joint_pos``; raises like IK."""
    loop = _flat_loop(geometry, joint_pos, with_jacobian=True)
    _check_reachable(geometry, joint_pos, loop)
    return _unflatten(loop.motor_pos, joint_pos), _unflatten_jacobian(loop, joint_pos)


def jacobian(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor) -> torch.Tensor:
    """``J = ∂φ/∂q`` (rows motors a, b; columns pitch, roll), ``(..., 2, 2)``; raises like IK."""
    return ik_and_jacobian(geometry, joint_pos)[1]


def transmission_quality(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor) -> torch.Tensor:
    """Transmission per motor, ``|(u × w)·ŷ|`` (§6), ``(..., 2)``: 1 = rod square to crank, 0 = singular.

    Raises:
        UnreachablePoseError: A rod cannot reach a pose.
    """
    state = evaluate(geometry, joint_pos, with_jacobian=False)
    raise_if_unreachable(geometry, joint_pos, state.reachable)
    return state.transmission


def raise_if_unreachable(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor, reachable: torch.Tensor) -> None:
    """Raise :class:`UnreachablePoseError` naming the first unreachable motor and pose, if any."""
    if bool(reachable.all()):
        return
    bad = (~reachable).nonzero()
    index, motor = tuple(bad[0, :-1].tolist()), int(bad[0, -1])
    pitch, roll = (math.degrees(float(v)) for v in joint_pos.detach().expand(*reachable.shape[:-1], 2)[index])
    raise UnreachablePoseError(
        f"ankle {geometry.preset}/{geometry.side}: rod {MOTOR_NAMES[motor]} cannot reach pose "
        f"pitch={pitch:+.2f}°, roll={roll:+.2f}° (batch index {list(index)}; "
        f"{int((~reachable).any(-1).sum())} of {reachable[..., 0].numel()} poses unreachable)"
    )


def solve_2x2(matrix: torch.Tensor, vector: torch.Tensor) -> torch.Tensor:
    """Solve ``matrix @ x = vector`` for batched 2 × 2 systems by Cramer's rule (cheap on CPU)."""
    a, b = matrix[..., 0, 0], matrix[..., 0, 1]
    c, d = matrix[..., 1, 0], matrix[..., 1, 1]
    v0, v1 = vector[..., 0], vector[..., 1]
    det = a * d - b * c
    return torch.stack([d * v0 - b * v1, a * v1 - c * v0], dim=-1) / det.unsqueeze(-1)
