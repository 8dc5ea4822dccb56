"""Kinematics of the 2-RSU + U ankle (ankle_linkage.md §2–§4, §6): IK, Jacobian, FK, transmission.

Conventions (batched over any leading shape ``...``; float32 or float64):

* ``joint_pos`` = ``(pitch, roll)`` (rad), + pitch = toes up, + roll = right-hand about +x.
* ``motor_pos`` = ``(φ_a, φ_b)`` = crank angle minus its neutral value, ``θ − π`` (rad). Both
  motors use the *linkage* sign convention: ``θ`` is the angle of the crank in its own plane,
  tip at ``M + r (cos θ, 0, sin θ)``, i.e. a right-hand rotation about −y for both motors. The
  real motors face opposite ways, so one of them reads ``−φ`` in its own convention; converting
  is the hardware layer's job, not this module's.
* ``J = ∂φ/∂q``, ``(..., 2, 2)``, rows = motors (a, b), columns = (pitch, roll).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import torch

from linkage_lab.kinematics.rsu_geometry import (
    JOINT_NAMES,
    MOTOR_NAMES,
    RSUAnkleGeometry,
    branch_signs,
    loop_coefficients,
)


class UnreachablePoseError(ValueError):
    """A rod cannot reach the requested foot pose (no real solution of the loop closure)."""


class ForwardKinematicsError(RuntimeError):
    """Newton's method did not converge for some crank angles."""


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


@functools.lru_cache(maxsize=64)
def _constants(geometry: RSUAnkleGeometry, dtype: torch.dtype, device: str) -> tuple[torch.Tensor, ...]:
    coefficients = loop_coefficients(geometry, dtype, device)
    signs = torch.tensor(branch_signs(geometry), dtype=dtype, device=device)
    phase = torch.tensor([0.0, math.pi / 2], dtype=dtype, device=device)
    return coefficients, signs, phase


def evaluate(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor, with_jacobian: bool = True) -> AnkleState:
    """Closed-form IK (§2), its Jacobian (§4) and the transmission (§6) in one pass; never raises.

    Per motor, the rod-length constraint reads ``P cos φ + Q sin φ = K`` (see
    :func:`~linkage_lab.kinematics.rsu_geometry.loop_coefficients`), so

        φ = atan2(Q, P) + s · arccos(K / √(P² + Q²)),

    with ``s`` the sign of the assembled branch (through φ = 0 at neutral). The Jacobian follows
    from the implicit function theorem on ``G(φ, q) = P cos φ + Q sin φ − K = 0``:
    ``∂φ/∂q_j = −(∂G/∂q_j) / (∂G/∂φ)``, and ``|∂G/∂φ|`` is the transmission.

    Args:
        geometry: The ankle.
        joint_pos: ``(..., 2)`` (pitch, roll) (rad).
        with_jacobian: Also compute ``J``.

    Returns:
        The :class:`AnkleState`; check ``reachable`` (or use :func:`inverse_kinematics`).
    """
    coefficients, signs, phase = _constants(geometry, joint_pos.dtype, str(joint_pos.device))
    # trig[..., j, :] = (cos q_j, sin q_j, 1); basis = pitch terms ⊗ roll terms (9).
    trig = torch.nn.functional.pad(torch.cos(joint_pos.unsqueeze(-1) - phase), (0, 1), value=1.0)
    basis = (trig[..., 0, :, None] * trig[..., 1, None, :]).flatten(-2)
    terms = (basis @ coefficients).unflatten(-1, (3, 3, 2))  # (value, ∂p, ∂r) × (P, Q, K) × motor
    p, q, k = terms[..., 0, 0, :], terms[..., 0, 1, :], terms[..., 0, 2, :]
    cos_spread = k / torch.hypot(p, q)
    reachable = cos_spread.abs() <= 1.0
    motor_pos = torch.addcmul(torch.atan2(q, p), signs, torch.acos(cos_spread))
    motor_pos = torch.remainder(motor_pos + math.pi, 2.0 * math.pi) - math.pi
    cos_sin = torch.cos(motor_pos.unsqueeze(-2) - phase.unsqueeze(-1))  # (..., (cos, sin), motor)
    d_g_d_phi = q * cos_sin[..., 0, :] - p * cos_sin[..., 1, :]
    transmission = d_g_d_phi.abs()
    if not with_jacobian:
        return AnkleState(motor_pos, None, transmission, reachable)
    # ∂G/∂q_j, (..., joint, motor).
    d_g_d_q = (terms[..., 1:, :2, :] * cos_sin.unsqueeze(-3)).sum(-2) - terms[..., 1:, 2, :]
    jacobian = (d_g_d_q / -d_g_d_phi.unsqueeze(-2)).transpose(-1, -2)
    return AnkleState(motor_pos, jacobian, transmission, reachable)


def inverse_kinematics(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor) -> torch.Tensor:
    """Crank angles from neutral (rad), ``(..., 2)``, for foot poses ``(..., 2)`` (rad).

    Raises:
        UnreachablePoseError: A rod cannot reach a pose; the message names motor and pose.
    """
    state = evaluate(geometry, joint_pos, with_jacobian=False)
    raise_if_unreachable(geometry, joint_pos, state.reachable)
    return state.motor_pos


def ik_and_jacobian(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Crank angles from neutral (rad) and ``J = ∂φ/∂q`` at ``joint_pos``; raises like IK."""
    state = evaluate(geometry, joint_pos)
    raise_if_unreachable(geometry, joint_pos, state.reachable)
    return state.motor_pos, state.jacobian  # type: ignore[return-value]


def jacobian(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor) -> torch.Tensor:
    """``J = ∂φ/∂q`` (rows motors a, b; columns pitch, roll), ``(..., 2, 2)``; raises like IK."""
    return ik_and_jacobian(geometry, joint_pos)[1]


def transmission(geometry: RSUAnkleGeometry, joint_pos: torch.Tensor) -> torch.Tensor:
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
    pitch, roll = (math.degrees(float(v)) for v in joint_pos.expand(*reachable.shape[:-1], 2)[index])
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


@dataclass
class ForwardKinematicsResult:
    """Outcome of :func:`forward_kinematics`.

    Attributes:
        joint_pos: Foot poses (pitch, roll) (rad), ``(..., 2)``.
        converged: Per ankle, the last Newton step was below the tolerance (and finite).
        in_range: Per ankle, the pose lies inside the ankle's motion range.
        iterations: Newton iterations run (shared by the batch).
        max_step_rad: Largest last Newton step over the batch (rad); the remaining error is
            of the order of its square.
    """

    joint_pos: torch.Tensor
    converged: torch.Tensor
    in_range: torch.Tensor
    iterations: int
    max_step_rad: float

    def raise_if_failed(self, geometry: RSUAnkleGeometry, require_in_range: bool = False) -> None:
        """Raise :class:`ForwardKinematicsError` if some ankle did not converge (or left the range)."""
        failed = ~self.converged
        what = "did not converge"
        if require_in_range and not bool(failed.any()):
            failed, what = ~self.in_range, "left the motion range"
        if not bool(failed.any()):
            return
        index = tuple(failed.nonzero()[0].tolist())
        pose = ", ".join(f"{n}={math.degrees(float(v)):+.2f}°" for n, v in zip(JOINT_NAMES, self.joint_pos[index]))
        raise ForwardKinematicsError(
            f"ankle {geometry.preset}/{geometry.side}: forward kinematics {what} for {int(failed.sum())} of "
            f"{failed.numel()} ankles after {self.iterations} Newton steps (first at batch index "
            f"{list(index)}: {pose}; last step {self.max_step_rad:.2e} rad)"
        )


def forward_kinematics(
    geometry: RSUAnkleGeometry,
    motor_pos: torch.Tensor,
    joint_pos_guess: torch.Tensor | None = None,
    tol: float = 1e-9,
    max_iter: int = 20,
    max_step_rad: float = 0.3,
) -> ForwardKinematicsResult:
    """Foot pose from crank angles (§3): Newton's method on ``IK(q) = φ``, batched, warm-started.

    ``q ← q − J(q)⁻¹ (IK(q) − φ)``, all ankles at once, until the largest step is below ``tol``
    (one reduction per iteration). Convergence is quadratic: from one control step away (a few
    hundredths of a rad) it takes 3–4 steps. Steps are clipped to ``max_step_rad`` per axis so
    that a poor guess cannot jump out of the reachable set. If ``motor_pos`` requires grad, the
    result carries ``∂q/∂φ = J⁻¹`` (one extra Newton step with autograd on).

    Args:
        geometry: The ankle.
        motor_pos: Crank angles from neutral (rad), ``(..., 2)``.
        joint_pos_guess: Warm start (rad), broadcastable to ``motor_pos``; ``None`` = neutral.
        tol: Convergence threshold on the Newton step (rad).
        max_iter: Maximum Newton iterations.
        max_step_rad: Clip of one Newton step per axis (rad).

    Returns:
        A :class:`ForwardKinematicsResult` with explicit ``converged`` and ``in_range`` masks;
        call its ``raise_if_failed`` to turn failures into an exception.
    """
    target = motor_pos.detach()
    if joint_pos_guess is None:
        joint_pos = torch.zeros_like(target)
    else:
        joint_pos = joint_pos_guess.detach().to(target).expand_as(target).clone()
    step_size = torch.full_like(target[..., 0], math.inf)
    largest = math.inf
    iterations = 0
    with torch.no_grad():
        while iterations < max_iter:
            state = evaluate(geometry, joint_pos)
            step = solve_2x2(state.jacobian, state.motor_pos - target).clamp(-max_step_rad, max_step_rad)
            joint_pos = joint_pos - step
            iterations += 1
            step_size = step.abs().amax(-1)
            largest = float(step_size.nan_to_num(math.inf).max())
            if largest < tol:
                break
    if motor_pos.requires_grad:
        state = evaluate(geometry, joint_pos)
        joint_pos = joint_pos - solve_2x2(state.jacobian, state.motor_pos - motor_pos)
    converged = step_size < tol
    margin = 1e-9
    in_range = (
        (joint_pos[..., 0] >= geometry.pitch_range_rad[0] - margin)
        & (joint_pos[..., 0] <= geometry.pitch_range_rad[1] + margin)
        & (joint_pos[..., 1] >= geometry.roll_range_rad[0] - margin)
        & (joint_pos[..., 1] <= geometry.roll_range_rad[1] + margin)
    )
    return ForwardKinematicsResult(joint_pos, converged, in_range, iterations, largest)
