"""Transmissions: the map from serial joint coordinates to motor coordinates, q^p = f(q^s).

One abstraction carries both robots: a constant J = [[1, 0], [1, 1]] for the Limit's
parallel-link legs, the pose-dependent RSU map for Marvin's ankles, the identity for joints
driven directly. Everything downstream (actuators, the ankle-torque replay, the hardware
bridge) talks to this interface only.

Conventions (all tensors batched over any leading shape ``...``, last dim = joints of the group):

* ``q`` serial joint positions (rad), ``(..., n)``.
* motor positions are measured from the motors' neutral pose, so ``f(0) = 0`` (rad).
* ``J(q) = ∂f/∂q``, ``(..., n, n)``: rows = motors, columns = joints.
* velocities map as ``θ̇ = J q̇``; torques by virtual work, ``τ_joint = Jᵀ τ_motor``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

# Defined once in a torch-free module, which the deploy code imports; re-exported here for the math.
from linkage_lab.linkage_constants import PARALLELOGRAM_LEG_JACOBIAN


class Transmission(ABC):
    """Base class: subclasses implement ``motor_position``, ``jacobian`` and ``joint_position``."""

    #: Number of coupled joints (= number of motors).
    num_joints: int

    @abstractmethod
    def motor_position(self, joint_pos: torch.Tensor) -> torch.Tensor:
        """Motor angles (rad, from neutral) for serial joint positions ``joint_pos`` (rad)."""

    @abstractmethod
    def jacobian(self, joint_pos: torch.Tensor) -> torch.Tensor:
        """``J = ∂θ/∂q`` at ``joint_pos``, shape ``(..., n, n)``."""

    @abstractmethod
    def joint_position(self, motor_pos: torch.Tensor, joint_pos_guess: torch.Tensor | None = None) -> torch.Tensor:
        """Inverse of :meth:`motor_position` (forward kinematics of the linkage)."""

    @property
    def is_constant(self) -> bool:
        """True when ``J`` does not depend on the pose (lets callers cache it)."""
        return False

    def motor_velocity(self, joint_vel: torch.Tensor, joint_pos: torch.Tensor) -> torch.Tensor:
        """``θ̇ = J(q) q̇`` (rad/s)."""
        return _matvec(self.jacobian(joint_pos), joint_vel)

    def joint_velocity(self, motor_vel: torch.Tensor, joint_pos: torch.Tensor) -> torch.Tensor:
        """``q̇ = J(q)⁻¹ θ̇`` (rad/s)."""
        return torch.linalg.solve(self.jacobian(joint_pos), motor_vel.unsqueeze(-1)).squeeze(-1)

    def joint_torque(self, motor_torque: torch.Tensor, joint_pos: torch.Tensor) -> torch.Tensor:
        """``τ_joint = J(q)ᵀ τ_motor`` (N·m), by virtual work."""
        return _matvec(self.jacobian(joint_pos).transpose(-1, -2), motor_torque)

    def motor_torque(self, joint_torque: torch.Tensor, joint_pos: torch.Tensor) -> torch.Tensor:
        """``τ_motor = J(q)⁻ᵀ τ_joint`` (N·m): the motor torques that produce a joint torque."""
        jac_t = self.jacobian(joint_pos).transpose(-1, -2)
        return torch.linalg.solve(jac_t, joint_torque.unsqueeze(-1)).squeeze(-1)


class ConstantJacobianTransmission(Transmission):
    """A linear transmission ``θ = J q`` with a constant ``J`` (e.g. a parallelogram leg).

    Args:
        jacobian: The ``n × n`` matrix ``J`` (rows = motors, columns = joints). Must be invertible.
    """

    def __init__(self, jacobian: Sequence[Sequence[float]] | torch.Tensor):
        matrix = torch.as_tensor(jacobian, dtype=torch.float64)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"transmission Jacobian must be square, got shape {tuple(matrix.shape)}")
        if abs(float(torch.linalg.det(matrix))) < 1e-12:
            raise ValueError(f"transmission Jacobian is singular: {matrix.tolist()}")
        self._matrix = matrix
        self.num_joints = matrix.shape[0]

    @property
    def is_constant(self) -> bool:
        return True

    def matrix(self, like: torch.Tensor) -> torch.Tensor:
        """``J`` with the dtype and device of ``like``."""
        return self._matrix.to(dtype=like.dtype, device=like.device)

    def motor_position(self, joint_pos: torch.Tensor) -> torch.Tensor:
        return _matvec(self.matrix(joint_pos), joint_pos)

    def jacobian(self, joint_pos: torch.Tensor) -> torch.Tensor:
        return self.matrix(joint_pos).expand(*joint_pos.shape[:-1], self.num_joints, self.num_joints)

    def joint_position(self, motor_pos: torch.Tensor, joint_pos_guess: torch.Tensor | None = None) -> torch.Tensor:
        inverse = torch.linalg.inv(self.matrix(motor_pos))
        return _matvec(inverse, motor_pos)


class IdentityTransmission(ConstantJacobianTransmission):
    """Joints driven directly by their own motor: ``θ = q``."""

    def __init__(self, num_joints: int = 1):
        super().__init__(torch.eye(num_joints, dtype=torch.float64))


def parallelogram_leg() -> ConstantJacobianTransmission:
    """The hip/knee transmission of a parallelogram leg, ``J = [[1, 0], [1, 1]]`` (docs/design/s3n.md §1)."""
    return ConstantJacobianTransmission(PARALLELOGRAM_LEG_JACOBIAN)


def _matvec(matrix: torch.Tensor, vector: torch.Tensor) -> torch.Tensor:
    return (matrix @ vector.unsqueeze(-1)).squeeze(-1)


@dataclass
class JointDomain:
    """Where a pose-dependent transmission is defined: a joint range it reaches everywhere, and a
    test for any pose. Constant transmissions are defined everywhere and have none.

    Attributes:
        lower: Per-joint lower bound of the range (rad), ``(n,)``.
        upper: Per-joint upper bound (rad), ``(n,)``.
        reachable: ``(..., n)`` poses → ``(...)`` bool; never raises, False for non-finite poses.
    """

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    reachable: Callable[[torch.Tensor], torch.Tensor]
    _cache: dict = field(default_factory=dict, repr=False)

    def bounds(self, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(lower, upper)`` in ``like``'s dtype and device (cached)."""
        key = (like.dtype, like.device)
        if key not in self._cache:
            self._cache[key] = tuple(
                torch.as_tensor(v, dtype=like.dtype, device=like.device) for v in (self.lower, self.upper)
            )
        return self._cache[key]
