"""Forward kinematics of the 2-RSU + U ankle (docs/design/ankle_linkage.md §3): batched, warm-started Newton.

One Newton step, :func:`newton_step`, is the exportable core: :func:`forward_kinematics` iterates
it until the error bound says done (a host check per iteration), :func:`forward_kinematics_unrolled`
runs a fixed number of steps with no host check at all, for ``torch.onnx.export`` (the deploy
bridge's FK graph).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import torch

from linkage_lab.kinematics.rsu_ankle import (
    LoopConstants,
    _foot_points,
    evaluate,
    loop_constants,
    solve_2x2,
    solve_loop,
)
from linkage_lab.kinematics.rsu_geometry import JOINT_NAMES, RSUAnkleGeometry


class ForwardKinematicsError(RuntimeError):
    """Newton's method did not converge for some crank angles (or left the motion range)."""


@dataclass
class ForwardKinematicsResult:
    """Outcome of :func:`forward_kinematics`.

    Attributes:
        joint_pos: Foot poses (pitch, roll) (rad), ``(..., 2)``.
        converged: ``(...)`` bool: the error bound of the last Newton step is below the tolerance.
        in_range: ``(...)`` bool: the pose lies inside the ankle's motion range.
        iterations: Newton iterations run (shared by the batch).
        max_step_rad: Largest last Newton step over the converging ankles (rad).
    """

    joint_pos: torch.Tensor
    converged: torch.Tensor
    in_range: torch.Tensor
    iterations: int
    max_step_rad: float

    def raise_if_failed(self, geometry: RSUAnkleGeometry, require_in_range: bool = False) -> None:
        """Raise :class:`ForwardKinematicsError` naming the first failing ankle, if any.

        Args:
            geometry: The ankle (named in the message).
            require_in_range: Also fail for converged poses outside the motion range.
        """
        failed, what = ~self.converged, "did not converge"
        if require_in_range and not bool(failed.any()):
            failed, what = ~self.in_range, "left the motion range"
        if not bool(failed.any()):
            return
        index = tuple(failed.nonzero()[0].tolist())
        pose = ", ".join(
            f"{n}={math.degrees(float(v)):+.2f}°" for n, v in zip(JOINT_NAMES, self.joint_pos[index], strict=True)
        )
        raise ForwardKinematicsError(
            f"ankle {geometry.preset}/{geometry.side}: forward kinematics {what} for {int(failed.sum())} of "
            f"{failed.numel()} ankles after {self.iterations} Newton steps (first at batch index "
            f"{list(index)}: {pose})"
        )


class _Closure(NamedTuple):
    """Loop-closure residual ``½(‖e‖² − L²)`` and its gradient in q, ``(2, N)`` each (rows = motors)."""

    residual: torch.Tensor
    grad_pitch: torch.Tensor
    grad_roll: torch.Tensor


def _closure(
    c: LoopConstants,
    pitch: torch.Tensor,
    roll: torch.Tensor,
    minus_tip_x: torch.Tensor,
    minus_tip_z: torch.Tensor,
) -> _Closure:
    """Residual of the rod-length constraint with the crank tips ``C`` fixed (given negated).

    ``e = A(q) − C`` is the rod vector; ``½ ∂‖e‖²/∂q_j = e · ∂A/∂q_j`` with
    ``∂A/∂q_p = (−A_z, 0, A_x)`` (so ``e · ∂A/∂q_p = e_z C_x − e_x C_z``) and
    ``∂A/∂q_r = (−sin_p v_y, −v_z, cos_p v_y)``.
    """
    feet = _foot_points(c, pitch, roll, minus_tip_x, minus_tip_z)
    e_x, e_y, e_z = feet.rel_x, feet.vec_y - c.centre_y, feet.rel_z
    residual = (e_x * e_x).addcmul_(e_y, e_y).addcmul_(e_z, e_z).sub_(c.length_sq).mul_(0.5)
    grad_pitch = (e_x * minus_tip_z).addcmul_(e_z, minus_tip_x, value=-1.0)
    grad_roll = (e_z * feet.cos_p).addcmul_(e_x, feet.sin_p, value=-1.0).mul_(feet.vec_y)
    return _Closure(residual, grad_pitch, grad_roll.addcmul_(e_y, feet.vec_z, value=-1.0))


def _minus_crank_tips(c: LoopConstants, motor_pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Crank tips negated, ``−(M' + r (cos φ, sin φ))`` in the rotated crank plane, ``(2, N)`` each (m)."""
    return (
        torch.cos(motor_pos).mul_(-c.crank_radius_m).sub_(c.centre_x),
        torch.sin(motor_pos).mul_(-c.crank_radius_m).sub_(c.centre_z),
    )


def _solve_rows(rows: _Closure) -> tuple[torch.Tensor, torch.Tensor]:
    """Newton step ``G⁻¹ r`` per ankle, ``G`` = rows (grad_pitch, grad_roll) of motors a, b (Cramer)."""
    g_ap, g_bp, g_ar, g_br = rows.grad_pitch[0], rows.grad_pitch[1], rows.grad_roll[0], rows.grad_roll[1]
    res_a, res_b = rows.residual[0], rows.residual[1]
    inverse_det = (g_ap * g_br).addcmul_(g_ar, g_bp, value=-1.0).reciprocal_()
    step_p = (g_br * res_a).addcmul_(g_ar, res_b, value=-1.0).mul_(inverse_det)
    step_r = (g_ap * res_b).addcmul_(g_bp, res_a, value=-1.0).mul_(inverse_det)
    return step_p, step_r


def newton_step(
    constants: LoopConstants,
    pitch: torch.Tensor,
    roll: torch.Tensor,
    minus_tips: tuple[torch.Tensor, torch.Tensor],
    max_step_rad: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One Newton step ``G⁻¹ r`` on the rod-length equations, clipped to ±``max_step_rad`` per axis.

    Traceable (no host synchronisation, no raise); a singular ``G`` gives a NaN step.

    Args:
        constants: The ankle's :func:`~linkage_lab.kinematics.rsu_ankle.loop_constants`.
        pitch: Current pitch (rad), ``(N,)``.
        roll: Current roll (rad), ``(N,)``.
        minus_tips: The crank tips negated, ``(2, N)`` each, from the measured crank angles.
        max_step_rad: Clip per axis (rad).

    Returns:
        The steps ``(δ_pitch, δ_roll)`` (rad), ``(N,)`` each, fresh tensors: the new pose is
        ``q − δ``.
    """
    step_p, step_r = _solve_rows(_closure(constants, pitch, roll, *minus_tips))
    return step_p.clamp_(-max_step_rad, max_step_rad), step_r.clamp_(-max_step_rad, max_step_rad)


def forward_kinematics_unrolled(
    constants: LoopConstants,
    motor_pos: torch.Tensor,
    joint_pos_guess: torch.Tensor,
    steps: int,
    max_step_rad: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Foot poses from crank angles by ``steps`` Newton steps, no convergence test: the exportable FK.

    The same iteration as :func:`forward_kinematics` (:func:`newton_step`), unrolled to a fixed
    count so that ``torch.onnx.export`` traces it; the caller judges convergence from the size of
    the last step.

    Args:
        constants: The ankle's :func:`~linkage_lab.kinematics.rsu_ankle.loop_constants`.
        motor_pos: Crank angles from neutral (rad), ``(N, 2)``.
        joint_pos_guess: Warm start (pitch, roll) (rad), ``(N, 2)``.
        steps: Newton steps.
        max_step_rad: Clip of one step per axis (rad).

    Returns:
        The poses (rad), ``(N, 2)``, and the largest ``|δ|`` of the last step per ankle (rad),
        ``(N,)`` (zeros when ``steps`` is 0).
    """
    minus_tips = _minus_crank_tips(constants, motor_pos.transpose(0, 1))
    pitch, roll = joint_pos_guess[:, 0], joint_pos_guess[:, 1]
    last_step = torch.zeros_like(pitch)
    for _ in range(steps):
        step_p, step_r = newton_step(constants, pitch, roll, minus_tips, max_step_rad)
        pitch, roll = pitch - step_p, roll - step_r
        last_step = torch.maximum(step_p.abs(), step_r.abs())
    return torch.stack([pitch, roll], dim=-1), last_step


@functools.lru_cache(maxsize=64)
def newton_constant(geometry: RSUAnkleGeometry) -> float:
    """Bound ``C`` on the Newton error recursion ``e_{k+1} ≤ C e_k²`` of :func:`forward_kinematics` (1/rad).

    ``C = ½ max_q ‖G⁻¹‖∞ · maxᵢ Σⱼₖ |∂²rᵢ/∂qⱼ∂qₖ|`` for the closure residual ``r`` and its gradient
    ``G``, on a grid over the range widened by 2 %, with the Hessian from central differences of
    the analytic gradient; doubled for safety.
    """
    (p_lo, p_hi), (r_lo, r_hi) = geometry.pitch_range_rad, geometry.roll_range_rad
    widen_p, widen_r = 0.01 * (p_hi - p_lo), 0.01 * (r_hi - r_lo)
    pitch = torch.linspace(p_lo - widen_p, p_hi + widen_p, 51, dtype=torch.float64)
    roll = torch.linspace(r_lo - widen_r, r_hi + widen_r, 27, dtype=torch.float64)
    grid = torch.stack(torch.meshgrid(pitch, roll, indexing="ij"), dim=-1).reshape(-1, 2)
    state = evaluate(geometry, grid, with_jacobian=False)
    keep = state.reachable.all(-1)
    grid, motor_pos = grid[keep], state.motor_pos[keep]
    c = loop_constants(geometry, torch.float64, "cpu")
    tips = _minus_crank_tips(c, motor_pos.T.contiguous())

    def gradient(q: torch.Tensor) -> torch.Tensor:  # (N, motor, joint)
        rows = _closure(c, q[:, 0], q[:, 1], *tips)
        return torch.stack([rows.grad_pitch, rows.grad_roll], dim=-1).permute(1, 0, 2)

    h = 1e-5
    steps = h * torch.eye(2, dtype=torch.float64)
    hessian = torch.stack([(gradient(grid + e) - gradient(grid - e)) / (2 * h) for e in steps], dim=-1)
    inverse_norm = torch.linalg.inv(gradient(grid)).abs().sum(-1).amax(-1)
    curvature = hessian.abs().sum((-1, -2)).amax(-1)
    return float((inverse_norm * curvature).max())


#: Float32 pre-iterations stop once their predicted error ``C δ²`` is below this (rad); float32
#: resolves the pose to ~1e-6 rad, so one float64 step then lands near machine precision.
MIXED_PRECISION_SWITCH_RAD = 1e-6


def forward_kinematics(
    geometry: RSUAnkleGeometry,
    motor_pos: torch.Tensor,
    joint_pos_guess: torch.Tensor | None = None,
    tol: float = 1e-9,
    max_iter: int = 20,
    max_step_rad: float = 0.3,
    mixed_precision: bool = True,
) -> ForwardKinematicsResult:
    """Foot pose from crank angles (§3): Newton's method, all ankles at once, warm-started.

    With the cranks at the measured angles, the tips ``C_i`` are known and the pose solves the
    two rod-length equations ``r_i(q) = ½(‖A_i(q) − C_i‖² − L_i²) = 0``: Newton's method
    ``q ← q − G(q)⁻¹ r(q)`` with the analytic gradient ``G = ∂r/∂q = −(∂r/∂φ) J``. This has the
    same root as ``IK(q) = φ`` but needs neither arccos nor atan2, and ``G`` stays regular where
    a crank passes a dead point. Convergence is quadratic, ``e_{k+1} ≤ C e_k²`` with ``C`` =
    :func:`newton_constant`, and each step ``δ_k`` approximates the error it removes; so once
    ``C δ_k² ≤ tol`` for every ankle, the remaining error is below ``tol``: one reduction per
    iteration. From one control step away (≈0.05 rad) that takes 3–4 iterations to 1e-9 rad.
    In float64 with ``mixed_precision``, the first iterations run in float32 (until their
    predicted error is below :data:`MIXED_PRECISION_SWITCH_RAD`) and the last in float64, with
    the float64 test deciding convergence. Steps are clipped to ``max_step_rad`` per axis so a
    poor guess cannot jump far. A guess far outside the range can converge to the mirror
    solution (the foot flipped over the cross, roll near ±180°): a true solution of the loop
    closure, reported by ``in_range``. If ``motor_pos`` requires grad, the result carries
    ``∂q/∂φ = J⁻¹`` (one extra Newton step on ``IK(q) = φ`` with autograd on).

    Args:
        geometry: The ankle.
        motor_pos: Crank angles from neutral (rad), ``(..., 2)``.
        joint_pos_guess: Warm start (rad), broadcastable to ``motor_pos``; ``None`` = neutral.
        tol: Error tolerance on the pose (rad).
        max_iter: Maximum Newton iterations in the final precision.
        max_step_rad: Clip of one Newton step per axis (rad).
        mixed_precision: Pre-iterate in float32 when ``motor_pos`` is float64.

    Returns:
        A :class:`ForwardKinematicsResult` with explicit ``converged`` and ``in_range`` masks;
        its ``raise_if_failed`` turns failures into an exception.
    """
    dtype, device = motor_pos.dtype, motor_pos.device
    lead = motor_pos.shape[:-1]
    target = motor_pos.detach().reshape(-1, 2).T  # (2, N)
    if joint_pos_guess is None:
        pitch, roll = target.new_zeros(target.shape[1]), target.new_zeros(target.shape[1])
    else:
        guess = joint_pos_guess.detach().to(target).expand(*lead, 2).reshape(-1, 2)
        pitch, roll = guess[:, 0].clone(), guess[:, 1].clone()
    newton_c = newton_constant(geometry)
    phases = [(dtype, tol, max_iter)]
    if mixed_precision and dtype == torch.float64 and tol < MIXED_PRECISION_SWITCH_RAD:
        phases.insert(0, (torch.float32, MIXED_PRECISION_SWITCH_RAD, max_iter))
    iterations = 0
    with torch.no_grad():
        for phase_dtype, phase_tol, phase_iter in phases:
            constants = loop_constants(geometry, phase_dtype, str(device))
            minus_tips = _minus_crank_tips(constants, target.to(phase_dtype))
            pitch, roll = pitch.to(phase_dtype), roll.to(phase_dtype)
            step_size, largest, done = _newton(
                constants, pitch, roll, minus_tips, math.sqrt(phase_tol / newton_c), phase_iter, max_step_rad
            )
            iterations += done
    step_limit = math.sqrt(tol / newton_c)
    joint_pos = torch.stack([pitch, roll], dim=-1)
    if motor_pos.requires_grad:
        loop = solve_loop(loop_constants(geometry, dtype, str(device)), pitch, roll, with_jacobian=True)
        jacobian = torch.stack([loop.jacobian_pitch, loop.jacobian_roll]).permute(2, 1, 0)
        joint_pos = joint_pos - solve_2x2(jacobian, loop.motor_pos.T - motor_pos.reshape(-1, 2))
    converged = (step_size <= step_limit).reshape(lead)
    joint_pos = joint_pos.reshape(*lead, 2)
    return ForwardKinematicsResult(joint_pos, converged, in_range(geometry, joint_pos), iterations, largest)


def _newton(
    constants: LoopConstants,
    pitch: torch.Tensor,
    roll: torch.Tensor,
    minus_tips: tuple[torch.Tensor, torch.Tensor],
    step_limit: float,
    max_iter: int,
    max_step_rad: float,
) -> tuple[torch.Tensor, float, int]:
    """Newton iterations updating ``pitch`` and ``roll`` in place; returns (last |step|, its max, count)."""
    step_size, largest = torch.full_like(pitch, math.inf), math.inf
    for iteration in range(1, max_iter + 1):
        step_p, step_r = newton_step(constants, pitch, roll, minus_tips, max_step_rad)
        # The closure's temporaries are freed before the next call: keeping them alive makes
        # the CPU allocator trim and re-fault its heap on every iteration (2x slower).
        pitch.sub_(step_p)
        roll.sub_(step_r)
        step_size = torch.maximum(step_p.abs_(), step_r.abs_())
        del step_p, step_r
        # A NaN ankle (singular G) is reported, not waited for.
        largest = float(step_size.nan_to_num(nan=0.0).max())
        if largest <= step_limit:
            return step_size, largest, iteration
    return step_size, largest, max_iter


def in_range(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor, margin_rad: float = 1e-9) -> torch.Tensor:
    """``(...)`` bool: whether poses ``(..., 2)`` lie in the motion range (± ``margin_rad``)."""
    lower = torch.tensor([geometry.pitch_range_rad[0], geometry.roll_range_rad[0]], dtype=joint_pos.dtype)
    upper = torch.tensor([geometry.pitch_range_rad[1], geometry.roll_range_rad[1]], dtype=joint_pos.dtype)
    lower, upper = lower.to(joint_pos.device) - margin_rad, upper.to(joint_pos.device) + margin_rad
    return ((joint_pos >= lower) & (joint_pos <= upper)).all(-1)
