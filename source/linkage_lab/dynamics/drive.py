"""A simulator-free linkage drive: delay → PD → motor torque limits → ``Jᵀ`` → plus S3N torques.

The Isaac Lab actuator is a thin wrapper: it gives the serial simulator :meth:`LinkageDrive.native_armature`
and :meth:`LinkageDrive.native_damping` once, and applies :attr:`DriveOutput.joint_torque` every
physics step. Tensors are ``(num_envs, ..., n)`` for a group of ``n`` coupled joints (e.g.
``(num_envs, n_legs, 2)``); the first dimension is the one :meth:`LinkageDrive.reset` indexes.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import (
    motor_diagonal_in_joint_space,
    mp_matrix,
    two_link_inertia,
)
from linkage_lab.dynamics.torque_speed import dc_torque_bounds
from linkage_lab.kinematics.motor_limits import saturate_motor_torque
from linkage_lab.kinematics.transmission import Transmission


@dataclass
class DriveOutput:
    """What one :meth:`LinkageDrive.compute` call produces (all N·m)."""

    joint_torque: torch.Tensor
    """Total serial torque to apply: ``Jᵀ τ_m + τ_S3N``."""
    actuator_joint_torque: torch.Tensor
    """``Jᵀ τ_m``: the motors' torque in joint coordinates (what a torque sensor would read)."""
    motor_torque: torch.Tensor
    """Motor torques after the limits."""
    motor_torque_desired: torch.Tensor
    """Motor torques from the PD, before the limits."""
    s3n_joint_torque: torch.Tensor
    """Explicit S3N torque ``−X_M q̈_prev − X_D q̇``."""
    jacobian: torch.Tensor | None = None
    """``J(q)`` at this step's pose (rows motors, columns joints), for callers that map more torques."""


class LinkageDrive:
    """Actuator core for ``n`` joints driven through a :class:`Transmission`.

    Per step: delayed targets → PD (joint or motor space) → per-motor limit (optionally on a
    torque–speed line) → ``τ^s = Jᵀ τ^p`` → ``+ τ_S3N``. The S3N model adds to the serial tree's own
    link inertia ``M_linkˢ`` an increment ``ΔM(q)``: ``diag(J̄)`` (Kin-Only), ``Jᵀ diag(J̄) J``
    (S3N-Act) or ``Jᵀ M_p(α) J − M_linkˢ(α)`` (S3N-Full), and likewise ``diag(B̄)`` or
    ``Jᵀ diag(B̄) J`` for damping. The simulator integrates a constant diagonal of it natively
    (:meth:`native_armature`, :meth:`native_damping`); the rest is applied as
    ``τ_S3N = −(ΔM(q) − diag A) q̈_prev − (ΔD(q) − diag D) q̇``, with ``q̈_prev`` the finite difference of
    the measured velocity over the previous step.

    Args:
        cfg: Drive configuration.
        transmission: The linkage map ``θ = f(q)``, constant or pose-dependent ``J``.
    """

    def __init__(self, cfg: LinkageDriveCfg, transmission: Transmission):
        n = transmission.num_joints
        s3n = cfg.s3n
        per_joint = [cfg.joint_kp, cfg.joint_kd, cfg.motor_peak_torque_nm, s3n.reflected_inertia_kgm2]
        optional = (cfg.motor_kp, cfg.motor_kd, cfg.motor_no_load_speed_rads, cfg.motor_stall_torque_nm)
        per_joint += [x for x in optional if x is not None]
        if any(len(values) != n for values in per_joint):
            raise ValueError(f"every per-joint/per-motor tuple of the drive config needs {n} entries")
        if s3n.model == "s3n_full" and n != 2:
            raise ValueError("s3n_full's M_p(α) model is defined for a two-joint leg only")
        if cfg.acceleration_estimate == "torque_predicted" and (n != 2 or s3n.serial_link_kgm2 is None):
            raise ValueError("acceleration_estimate='torque_predicted' needs a two-joint leg and s3n.serial_link_kgm2")
        if cfg.explicit_acceleration_limit == "actuator" and (n != 2 or s3n.serial_link_kgm2 is None):
            raise ValueError("explicit_acceleration_limit='actuator' needs a two-joint leg and s3n.serial_link_kgm2")
        if cfg.explicit_acceleration_limit not in ("none", "actuator"):
            raise ValueError(f"unknown explicit_acceleration_limit {cfg.explicit_acceleration_limit!r}")
        if cfg.command_delay_steps < 0:
            raise ValueError("command_delay_steps must be >= 0")
        if cfg.motor_coupling not in ("full", "held", "diagonal"):
            raise ValueError(f"unknown motor_coupling {cfg.motor_coupling!r}")
        if cfg.motor_coupling != "full" and (
            cfg.control_space != "motor" or cfg.motor_kp is not None or cfg.motor_kd is not None
        ):
            raise ValueError("motor_coupling held or diagonal needs control_space='motor' with mapped gains")
        self.cfg = cfg
        self.transmission = transmission
        self._reference = torch.zeros(n, dtype=torch.float64)
        if cfg.reference_joint_pos_rad is not None:
            self._reference = torch.as_tensor(cfg.reference_joint_pos_rad, dtype=torch.float64)
        self._constants: dict[tuple, torch.Tensor] = {}
        self._native_armature = self._compute_native_armature()
        self._native_damping = torch.diagonal(self.damping_increment(self._reference), dim1=-2, dim2=-1).clone()
        self._acceleration_limit = (
            self.actuator_acceleration_limit() if cfg.explicit_acceleration_limit == "actuator" else None
        )
        self._prev_vel: torch.Tensor | None = None
        self._prev_actuator: torch.Tensor | None = None
        self._acc: torch.Tensor | None = None
        self._has_prev: torch.Tensor | None = None
        self._delay_buffer: torch.Tensor | None = None
        self._fresh: torch.Tensor | None = None
        # Held coupling: the motor state (position, velocity) of the last tick, the target it came with, and the
        # envs that were reset since (they sample afresh).
        self._held_state: torch.Tensor | None = None
        self._held_target: torch.Tensor | None = None
        self._hold_fresh: torch.Tensor | None = None

    # ----- what the simulator integrates natively ------------------------------------------------

    def inertia_increment(self, joint_pos: torch.Tensor) -> torch.Tensor:
        """The model's inertia on top of the tree's link inertia, ``ΔM(q)`` (kg·m²), ``(..., n, n)``."""
        s3n = self.cfg.s3n
        reflected = self._vec(s3n.reflected_inertia_kgm2, joint_pos)
        if s3n.model == "kin_only":
            return torch.diag_embed(reflected.expand(joint_pos.shape))
        increment = motor_diagonal_in_joint_space(self.transmission.jacobian(joint_pos), reflected)
        if s3n.model == "s3n_full":
            increment = increment + self._link_residual(joint_pos)
        return increment

    def damping_increment(self, joint_pos: torch.Tensor) -> torch.Tensor:
        """The model's viscous damping ``ΔD(q)`` (N·m·s/rad): ``diag(B̄)`` or ``Jᵀ diag(B̄) J``."""
        damping = self._vec(self.cfg.s3n.motor_damping_nms_per_rad, joint_pos)
        if self.cfg.s3n.model == "kin_only":
            return torch.diag_embed(damping.expand(joint_pos.shape))
        return motor_diagonal_in_joint_space(self.transmission.jacobian(joint_pos), damping)

    def native_armature(self) -> torch.Tensor:
        """Per-joint armature for the simulator (kg·m²), ``(n,)`` float64.

        Kin-Only ``diag(J̄)``; S3N on the parallelogram ``(J̄₁ + J̄₂, J̄₂)``, plus ``diag ΔM_link`` at the
        reference pose with ``explicit_split="diagonal"`` (clamped at zero).
        """
        return self._native_armature.clone()

    def native_damping(self) -> torch.Tensor:
        """Per-joint viscous damping for the simulator (N·m·s/rad), ``(n,)`` float64."""
        return self._native_damping.clone()

    def _compute_native_armature(self) -> torch.Tensor:
        reference = self._reference
        if self.cfg.s3n.model == "s3n_full" and self.cfg.explicit_split == "paper":
            reflected = self._vec(self.cfg.s3n.reflected_inertia_kgm2, reference)
            act = motor_diagonal_in_joint_space(self.transmission.jacobian(reference), reflected)
            return torch.diagonal(act, dim1=-2, dim2=-1).clone()
        diagonal = torch.diagonal(self.inertia_increment(reference), dim1=-2, dim2=-1)
        return diagonal.clamp(min=0.0)

    def actuator_acceleration_limit(self) -> torch.Tensor:
        """``(|J|ᵀ τ_peak)_j / M_jj`` at the reference pose (rad/s²), ``(n,)`` float64: the acceleration each joint's
        motors can give it at their peak torque against the serial links' inertia plus the native armature."""
        reference = self._reference.unsqueeze(0)
        peak = torch.as_tensor(self.cfg.motor_peak_torque_nm, dtype=torch.float64)
        jacobian = self.transmission.jacobian(reference)[0]
        torque = jacobian.abs().transpose(0, 1) @ peak
        motor_pos = self.transmission.motor_position(reference)
        alpha = motor_pos[..., 1] - motor_pos[..., 0]
        links = torch.diagonal(two_link_inertia(alpha, *self.cfg.s3n.serial_link_kgm2)[0])
        return torque / (links + self._native_armature)

    def explicit_inertia(self, joint_pos: torch.Tensor) -> torch.Tensor:
        """``X_M(q) = ΔM(q) − diag(native armature)`` (kg·m²): the part applied as explicit torque."""
        native = self._cast(self._native_armature, joint_pos)
        return self.inertia_increment(joint_pos) - torch.diag_embed(native.expand(joint_pos.shape))

    def explicit_damping(self, joint_pos: torch.Tensor) -> torch.Tensor:
        """``X_D(q) = ΔD(q) − diag(native damping)`` (N·m·s/rad)."""
        native = self._cast(self._native_damping, joint_pos)
        return self.damping_increment(joint_pos) - torch.diag_embed(native.expand(joint_pos.shape))

    def explicit_loop_gain(self, joint_pos: torch.Tensor, link_inertia: torch.Tensor) -> torch.Tensor:
        """Spectral radius of ``(M_linkˢ + diag A)⁻¹ X_M``: the per-step gain of the explicit ``q̈`` loop.

        Unfiltered, the explicit torque feeds the last step's acceleration back through the native
        inertia, ``q̈ₖ ≈ −M_native⁻¹ X_M q̈ₖ₋₁ + …``, which diverges when this is ``≥ 1``.

        Args:
            joint_pos: Poses (rad), ``(..., n)``.
            link_inertia: The tree's own link inertia at those poses (kg·m²), ``(..., n, n)``.
        """
        native = link_inertia + torch.diag_embed(self._cast(self._native_armature, joint_pos).expand(joint_pos.shape))
        gain = torch.linalg.solve(native, self.explicit_inertia(joint_pos))
        return torch.linalg.eigvals(gain).abs().amax(dim=-1)

    # ----- per step --------------------------------------------------------------------------------

    def reset(self, env_ids: torch.Tensor | slice | None = None) -> None:
        """Forget the velocity history and queued commands of ``env_ids`` (all when ``None``)."""
        index = slice(None) if env_ids is None else env_ids
        if self._has_prev is not None:
            self._has_prev[index] = False
            self._acc[index] = 0.0
        if self._fresh is not None:
            self._fresh[index] = True
        if self._hold_fresh is not None:
            self._hold_fresh[index] = True

    def compute(
        self,
        joint_pos_target: torch.Tensor,
        joint_vel_target: torch.Tensor,
        joint_pos: torch.Tensor,
        joint_vel: torch.Tensor,
        dt: float,
        joint_kp: torch.Tensor | None = None,
        joint_kd: torch.Tensor | None = None,
        joint_effort: torch.Tensor | None = None,
    ) -> DriveOutput:
        """One physics step.

        Args:
            joint_pos_target: Serial position targets ``q*`` (rad), ``(num_envs, ..., n)``.
            joint_vel_target: Serial velocity targets ``q̇*`` (rad/s).
            joint_pos: Measured serial positions ``q`` (rad).
            joint_vel: Measured serial velocities ``q̇`` (rad/s).
            dt: Physics step (s), for the finite-difference acceleration.
            joint_kp: Per-env joint stiffness ``K_j`` (N·m/rad), broadcastable to ``joint_pos``;
                replaces ``cfg.joint_kp`` (mapped to motor space as ``cfg.joint_kp`` is).
            joint_kd: Per-env joint damping gain (N·m·s/rad); replaces ``cfg.joint_kd`` likewise.
            joint_effort: Feed-forward serial torque (N·m), added to the PD's joint torque before
                ``J⁻ᵀ`` and the motor limits, so the motors' total stays within their limits.

        Returns:
            The torques of this step; :attr:`DriveOutput.joint_torque` is what to apply.

        Raises:
            ValueError: Per-env gains given while ``cfg.motor_kp``/``cfg.motor_kd`` fix the motor gains.
        """
        cfg = self.cfg
        if cfg.control_space == "motor" and (
            (joint_kp is not None and cfg.motor_kp is not None) or (joint_kd is not None and cfg.motor_kd is not None)
        ):
            raise ValueError("per-env joint gains cannot override the configured motor_kp/motor_kd")
        pos_target, vel_target = self._delayed(joint_pos_target, joint_vel_target)
        jacobian = self.transmission.jacobian(joint_pos)
        kp = self._vec(cfg.joint_kp, joint_pos) if joint_kp is None else joint_kp
        kd = self._vec(cfg.joint_kd, joint_pos) if joint_kd is None else joint_kd
        desired = self._pd(pos_target, vel_target, joint_pos, joint_vel, jacobian, kp, kd, joint_effort)
        motor_vel = _matvec(jacobian, joint_vel)
        motor_torque = self._saturate(desired, motor_vel)
        actuator = _matvec(jacobian.transpose(-1, -2), motor_torque)
        had_history = self._has_prev.clone() if self._has_prev is not None else None
        acc = self._update_acceleration(joint_vel, dt)
        if self.cfg.acceleration_estimate == "torque_predicted":
            acc = acc + self._torque_step_acceleration(joint_pos, actuator, had_history)
        if self._acceleration_limit is not None:
            limit = self._cast(self._acceleration_limit, acc)
            acc = torch.maximum(torch.minimum(acc, limit), -limit)
        self._prev_actuator = actuator.clone()
        if self.cfg.s3n.model == "kin_only":
            s3n_torque = torch.zeros_like(actuator)
        else:
            s3n_torque = -_matvec(self.explicit_inertia(joint_pos), acc)
            s3n_torque = s3n_torque - _matvec(self.explicit_damping(joint_pos), joint_vel)
        return DriveOutput(actuator + s3n_torque, actuator, motor_torque, desired, s3n_torque, jacobian)

    # ----- internals -------------------------------------------------------------------------------

    def _vec(self, values: tuple[float, ...], like: torch.Tensor) -> torch.Tensor:
        """A config tuple as a tensor of ``like``'s dtype and device (cached)."""
        key = ("tuple", values, like.dtype, like.device)
        if key not in self._constants:
            self._constants[key] = torch.as_tensor(values, dtype=like.dtype, device=like.device)
        return self._constants[key]

    def _cast(self, tensor: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
        """A fixed float64 tensor in ``like``'s dtype and device (cached)."""
        key = ("tensor", id(tensor), like.dtype, like.device)
        if key not in self._constants:
            self._constants[key] = tensor.to(dtype=like.dtype, device=like.device)
        return self._constants[key]

    def _link_residual(self, joint_pos: torch.Tensor) -> torch.Tensor:
        """``Jᵀ M_p(α) J − M_linkˢ(α) − Jᵀ diag(J̄) J`` is ``ΔM_link``; this returns it (kg·m²)."""
        s3n = self.cfg.s3n
        motor_pos = self.transmission.motor_position(joint_pos)
        alpha = motor_pos[..., 1] - motor_pos[..., 0]
        jacobian = self.transmission.jacobian(joint_pos)
        pulled_back = jacobian.transpose(-1, -2) @ mp_matrix(alpha, *s3n.mp_kgm2) @ jacobian
        reflected = self._vec(s3n.reflected_inertia_kgm2, joint_pos)
        act = motor_diagonal_in_joint_space(jacobian, reflected)
        return pulled_back - two_link_inertia(alpha, *s3n.serial_link_kgm2) - act

    def _delayed(self, pos_target: torch.Tensor, vel_target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        steps = self.cfg.command_delay_steps
        if steps == 0:
            return pos_target, vel_target
        command = torch.cat([pos_target, vel_target], dim=-1)
        if self._delay_buffer is None or self._delay_buffer.shape[1:] != command.shape:
            self._delay_buffer = command.unsqueeze(0).repeat(steps, *([1] * command.ndim))
            self._fresh = torch.zeros(command.shape[0], dtype=torch.bool, device=command.device)
        fresh = self._fresh.view(-1, *([1] * (command.ndim - 1)))
        self._delay_buffer = torch.where(fresh, command.unsqueeze(0), self._delay_buffer)
        self._fresh[:] = False
        delayed = self._delay_buffer[0]
        self._delay_buffer = torch.cat([self._delay_buffer[1:], command.unsqueeze(0)], dim=0)
        n = pos_target.shape[-1]
        return delayed[..., :n], delayed[..., n:]

    def _pd(
        self,
        pos_target: torch.Tensor,
        vel_target: torch.Tensor,
        joint_pos: torch.Tensor,
        joint_vel: torch.Tensor,
        jacobian: torch.Tensor,
        joint_kp: torch.Tensor,
        joint_kd: torch.Tensor,
        joint_effort: torch.Tensor | None,
    ) -> torch.Tensor:
        """Desired motor torques: the PD plus the feed-forward joint torque, before the limits (N·m)."""
        cfg = self.cfg
        jac_t = jacobian.transpose(-1, -2)
        if cfg.control_space == "joint":
            joint_torque = joint_kp * (pos_target - joint_pos) + joint_kd * (vel_target - joint_vel)
            if joint_effort is not None:
                joint_torque = joint_torque + joint_effort
            return torch.linalg.solve(jac_t, joint_torque.unsqueeze(-1)).squeeze(-1)
        transmission = self.transmission
        pos_error = transmission.motor_position(pos_target) - transmission.motor_position(joint_pos)
        vel_error = transmission.motor_velocity(vel_target, pos_target) - _matvec(jacobian, joint_vel)
        if cfg.motor_kp is not None and cfg.motor_kd is not None:
            motor = self._vec(cfg.motor_kp, pos_error) * pos_error + self._vec(cfg.motor_kd, vel_error) * vel_error
        elif cfg.motor_coupling == "held":
            jac_inv = torch.linalg.inv(jacobian)
            motor_pos, motor_vel = transmission.motor_position(joint_pos), _matvec(jacobian, joint_vel)
            held_pos, held_vel = self._held_motor_state(pos_target, motor_pos, motor_vel)
            held_pos_error = pos_error + motor_pos - held_pos
            held_vel_error = vel_error + motor_vel - held_vel
            motor = _own_and_held(_mapped_gain(joint_kp, jac_inv), pos_error, held_pos_error) + _own_and_held(
                _mapped_gain(joint_kd, jac_inv), vel_error, held_vel_error
            )
        elif cfg.motor_coupling == "diagonal":
            jac_inv = torch.linalg.inv(jacobian)
            own = lambda gain: torch.diagonal(_mapped_gain(gain, jac_inv), dim1=-2, dim2=-1)  # noqa: E731
            motor = own(joint_kp) * pos_error + own(joint_kd) * vel_error
        else:
            jac_inv = torch.linalg.inv(jacobian)
            motor = self._motor_gain(cfg.motor_kp, joint_kp, jac_inv, pos_error) + self._motor_gain(
                cfg.motor_kd, joint_kd, jac_inv, vel_error
            )
        if joint_effort is not None:
            motor = motor + torch.linalg.solve(jac_t, joint_effort.unsqueeze(-1)).squeeze(-1)
        return motor

    def _motor_gain(
        self,
        motor_gain: tuple[float, ...] | None,
        joint_gain: torch.Tensor,
        jac_inv: torch.Tensor,
        motor_error: torch.Tensor,
    ) -> torch.Tensor:
        """``K_m e``: diagonal motor gains, or ``K_m = J⁻ᵀ K_j J⁻¹`` (``K_j``'s torque for small errors)."""
        if motor_gain is not None:
            return self._vec(motor_gain, motor_error) * motor_error
        return _matvec(_mapped_gain(joint_gain, jac_inv), motor_error)

    def _held_motor_state(
        self, pos_target: torch.Tensor, motor_pos: torch.Tensor, motor_vel: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The motor position and velocity the cross terms use (``motor_coupling="held"``): sampled where the target
        changed (a new control tick) or the env was reset, else the held sample."""
        state = torch.cat([motor_pos, motor_vel], dim=-1)
        if self._held_state is None or self._held_state.shape != state.shape:
            self._held_state = state.clone()
            self._held_target = pos_target.clone()
            self._hold_fresh = torch.zeros(state.shape[0], dtype=torch.bool, device=state.device)
        else:
            fresh = self._hold_fresh.view(-1, *([1] * (state.ndim - 2)))
            sample = (pos_target != self._held_target).any(dim=-1) | fresh
            self._held_state = torch.where(sample.unsqueeze(-1), state, self._held_state)
            self._held_target = pos_target.clone()
            self._hold_fresh[:] = False
        n = motor_pos.shape[-1]
        return self._held_state[..., :n], self._held_state[..., n:]

    def _saturate(self, motor_torque: torch.Tensor, motor_vel: torch.Tensor) -> torch.Tensor:
        cfg = self.cfg
        peak = self._vec(cfg.motor_peak_torque_nm, motor_torque)
        if cfg.motor_no_load_speed_rads is None:
            return saturate_motor_torque(motor_torque, peak, cfg.saturation_mode)
        stall = None if cfg.motor_stall_torque_nm is None else self._vec(cfg.motor_stall_torque_nm, motor_torque)
        upper, lower = dc_torque_bounds(peak, motor_vel, self._vec(cfg.motor_no_load_speed_rads, motor_torque), stall)
        # Each motor's bound on the side its torque points to; a zero bound stays (just) positive
        # so that "scale" mode never divides 0 by 0.
        limit = torch.where(motor_torque >= 0.0, upper, lower).clamp(min=1e-12)
        return saturate_motor_torque(motor_torque, limit, cfg.saturation_mode)

    def _torque_step_acceleration(
        self, joint_pos: torch.Tensor, actuator: torch.Tensor, had_history: torch.Tensor | None
    ) -> torch.Tensor:
        """``M_norm(q)⁻¹ (τ_act,k − τ_act,k−1)`` (rad/s²), zero for envs without a previous step."""
        if had_history is None or self._prev_actuator is None or self._prev_actuator.shape != actuator.shape:
            return torch.zeros_like(actuator)
        motor_pos = self.transmission.motor_position(joint_pos)
        alpha = motor_pos[..., 1] - motor_pos[..., 0]
        inertia = two_link_inertia(alpha, *self.cfg.s3n.serial_link_kgm2) + self.inertia_increment(joint_pos)
        change = torch.linalg.solve(inertia, (actuator - self._prev_actuator).unsqueeze(-1)).squeeze(-1)
        mask = had_history.view(-1, *([1] * (actuator.ndim - 1)))
        return torch.where(mask, change, torch.zeros_like(change))

    def _update_acceleration(self, joint_vel: torch.Tensor, dt: float) -> torch.Tensor:
        if self._prev_vel is None or self._prev_vel.shape != joint_vel.shape:
            self._prev_vel = joint_vel.clone()
            self._acc = torch.zeros_like(joint_vel)
            self._has_prev = torch.zeros(joint_vel.shape[0], dtype=torch.bool, device=joint_vel.device)
        has_prev = self._has_prev.view(-1, *([1] * (joint_vel.ndim - 1)))
        raw = torch.where(has_prev, (joint_vel - self._prev_vel) / dt, torch.zeros_like(joint_vel))
        tau = self.cfg.accel_filter_time_constant_s
        if tau is None or tau <= 0.0:
            self._acc = raw
        else:
            blend = dt / (tau + dt)
            self._acc = torch.where(has_prev, self._acc + blend * (raw - self._acc), torch.zeros_like(raw))
        self._prev_vel = joint_vel.clone()
        self._has_prev[:] = True
        return self._acc


def _matvec(matrix: torch.Tensor, vector: torch.Tensor) -> torch.Tensor:
    return (matrix @ vector.unsqueeze(-1)).squeeze(-1)


def _mapped_gain(joint_gain: torch.Tensor, jac_inv: torch.Tensor) -> torch.Tensor:
    """``K_m = J⁻ᵀ diag(K_j) J⁻¹``, ``(..., n, n)``."""
    return jac_inv.transpose(-1, -2) @ (joint_gain.unsqueeze(-1) * jac_inv)


def _own_and_held(gain: torch.Tensor, error: torch.Tensor, held_error: torch.Tensor) -> torch.Tensor:
    """``diag(K) e + (K − diag(K)) e_held``: each motor's own gain on its error now, the cross terms on the held
    errors (what a per-motor driver applies with the coupling folded into its target)."""
    own = torch.diagonal(gain, dim1=-2, dim2=-1)
    return own * error + _matvec(gain, held_error) - own * held_error
