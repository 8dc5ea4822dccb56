"""A two-motor parallel (RSU) ankle as a :class:`~linkage_lab.kinematics.transmission.Transmission`."""

from __future__ import annotations

import torch

from linkage_lab.kinematics.ankle_limits import clamp_to_diamond
from linkage_lab.kinematics.motor_limits import SaturationMode
from linkage_lab.kinematics.rsu_ankle import (
    evaluate,
    ik_and_jacobian,
    inverse_kinematics,
    raise_if_unreachable,
    solve_2x2,
)
from linkage_lab.kinematics.rsu_fk import ForwardKinematicsResult, forward_kinematics
from linkage_lab.kinematics.rsu_geometry import RSUAnkleGeometry
from linkage_lab.kinematics.transmission import JointDomain, Transmission


class RSUAnkleTransmission(Transmission):
    """The pose-dependent map (pitch, roll) → (crank a, crank b) of a 2-RSU + U ankle.

    Joint positions are ``(pitch, roll)`` (rad); motor positions are crank angles from neutral,
    ``θ − π`` (rad), both in the linkage sign convention (see :mod:`~linkage_lab.kinematics.rsu_ankle`);
    ``J = ∂θ/∂q`` has rows motors (a, b) and columns (pitch, roll). Poses a rod cannot reach raise
    :class:`~linkage_lab.kinematics.rsu_ankle.UnreachablePoseError`; :meth:`joint_position` raises
    :class:`~linkage_lab.kinematics.rsu_fk.ForwardKinematicsError` when Newton's method fails.

    Args:
        geometry: The ankle.
        fk_tol: Pose tolerance of the forward kinematics (rad).
        fk_max_iter: Newton iteration cap of the forward kinematics.
    """

    num_joints = 2

    def __init__(self, geometry: RSUAnkleGeometry, fk_tol: float = 1e-9, fk_max_iter: int = 20):
        self.geometry = geometry
        self.fk_tol = fk_tol
        self.fk_max_iter = fk_max_iter

    def joint_domain(self):
        """Where the linkage is defined: the geometry's joint range, and a never-raising reachability test."""
        geometry = self.geometry

        def reachable(pose: torch.Tensor) -> torch.Tensor:
            return evaluate(geometry, pose, with_jacobian=False).reachable.all(-1)

        (p_lo, p_hi), (r_lo, r_hi) = geometry.pitch_range_rad, geometry.roll_range_rad
        return JointDomain((p_lo, r_lo), (p_hi, r_hi), reachable)

    def motor_position(self, joint_pos: torch.Tensor) -> torch.Tensor:
        return inverse_kinematics(self.geometry, joint_pos)

    def jacobian(self, joint_pos: torch.Tensor) -> torch.Tensor:
        return ik_and_jacobian(self.geometry, joint_pos)[1]

    def joint_position(self, motor_pos: torch.Tensor, joint_pos_guess: torch.Tensor | None = None) -> torch.Tensor:
        """Forward kinematics (Newton, warm-started from ``joint_pos_guess``, else neutral).

        Raises:
            ForwardKinematicsError: Some ankle did not converge. Converged poses outside the
                motion range are returned (use :meth:`forward_kinematics` for the masks).
        """
        result = self.forward_kinematics(motor_pos, joint_pos_guess)
        result.raise_if_failed(self.geometry)
        return result.joint_pos

    def forward_kinematics(
        self, motor_pos: torch.Tensor, joint_pos_guess: torch.Tensor | None = None
    ) -> ForwardKinematicsResult:
        """Forward kinematics with explicit ``converged`` and ``in_range`` masks; never raises."""
        return forward_kinematics(self.geometry, motor_pos, joint_pos_guess, tol=self.fk_tol, max_iter=self.fk_max_iter)

    def transmission_quality(self, joint_pos: torch.Tensor) -> torch.Tensor:
        """Transmission per motor (§6), ``(..., 2)``, 1 = rod square to the crank, 0 = singular."""
        state = evaluate(self.geometry, joint_pos, with_jacobian=False)
        raise_if_unreachable(self.geometry, joint_pos, state.reachable)
        return state.transmission

    def joint_velocity(self, motor_vel: torch.Tensor, joint_pos: torch.Tensor) -> torch.Tensor:
        return solve_2x2(self.jacobian(joint_pos), motor_vel)

    def motor_torque(self, joint_torque: torch.Tensor, joint_pos: torch.Tensor) -> torch.Tensor:
        return solve_2x2(self.jacobian(joint_pos).transpose(-1, -2), joint_torque)

    def clamp_joint_torque(
        self,
        joint_torque: torch.Tensor,
        joint_pos: torch.Tensor,
        limit_nm: float | torch.Tensor | None = None,
        mode: SaturationMode = "clip",
    ) -> torch.Tensor:
        """The joint torque the motors can apply for a command (§5), ``(..., 2)`` (N·m).

        Args:
            joint_torque: Commanded (pitch, roll) torque (N·m).
            joint_pos: Pose (rad).
            limit_nm: Motor limit; ``None`` = the motor's peak torque.
            mode: ``"clip"`` (each motor on its own) or ``"scale"`` (keeps the direction).
        """
        limit = self.geometry.motor.peak_nm if limit_nm is None else limit_nm
        return clamp_to_diamond(self.jacobian(joint_pos), joint_torque, limit, mode)
