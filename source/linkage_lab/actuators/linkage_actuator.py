"""One explicit Isaac Lab actuator for joints coupled through any transmission.

Each physics step, for every coupled group (a Limit leg's hip + knee, a Marvin ankle's pitch +
roll): serial targets → (optionally) motor space → PD → per-motor limits → ``Jᵀ`` → serial torques,
plus the S3N explicit torques. The math is :class:`~linkage_lab.dynamics.drive.LinkageDrive`;
this class gathers the group's joints with each env's current gains (what Isaac Lab's
``randomize_actuator_gains`` writes into ``stiffness``/``damping``) and feed-forward efforts (which
go through the motor limits too), calls it, and scatters the torques back. A pose a pose-dependent
transmission cannot evaluate (NaN, or beyond the rods' reach) is handled in its own env, so one
diverged env never stops the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import MISSING
from types import EllipsisType
from typing import Any

import torch
from isaaclab.actuators import ActuatorBase, ActuatorBaseCfg
from isaaclab.utils import configclass
from isaaclab.utils.types import ArticulationActions

from linkage_lab.actuators.transmissions import joint_domain, make_transmission
from linkage_lab.dynamics.drive import LinkageDrive
from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import S3NCfg
from linkage_lab.kinematics.transmission import JointDomain

#: What :meth:`LinkageActuator.reset` accepts: ``None``, ``slice(None)`` and ``...`` mean all envs.
EnvIds = Sequence[int] | torch.Tensor | slice | EllipsisType | None


class LinkageActuator(ActuatorBase):
    """Explicit actuator driving coupled joint groups through their transmissions."""

    cfg: LinkageActuatorCfg

    def __init__(
        self,
        cfg: LinkageActuatorCfg,
        joint_names: list[str],
        joint_ids: slice | torch.Tensor,
        num_envs: int,
        device: str,
        stiffness: torch.Tensor | float = 0.0,
        damping: torch.Tensor | float = 0.0,
        **kwargs,
    ):
        super().__init__(cfg, joint_names, joint_ids, num_envs, device, **kwargs)
        from isaaclab.actuators.actuator_base import resolve_joint_parameter

        self.stiffness = resolve_joint_parameter(cfg.stiffness, stiffness, joint_names, num_envs, device)
        self.damping = resolve_joint_parameter(cfg.damping, damping, joint_names, num_envs, device)
        if len(cfg.transmissions) != len(cfg.coupled_joints):
            raise ValueError("LinkageActuatorCfg: one transmission name per coupled joint group is required")
        missing = sorted({n for group in cfg.coupled_joints for n in group} - set(joint_names))
        if missing:
            raise ValueError(f"LinkageActuatorCfg: coupled joints {missing} are not in the group {joint_names}")
        # Groups sharing a transmission run as one batch: (num_envs, n_groups, n).
        # The drive's config gains are env 0's; compute() passes every env's current gains.
        self._batches: list[tuple[LinkageDrive, torch.Tensor, JointDomain | None]] = []
        for name in dict.fromkeys(cfg.transmissions):
            groups = [g for g, t in zip(cfg.coupled_joints, cfg.transmissions) if t == name]
            index = torch.tensor([[joint_names.index(j) for j in g] for g in groups], device=device)
            kp = self.stiffness[0, index[0]].tolist()
            kd = self.damping[0, index[0]].tolist()
            drive = LinkageDrive(drive_cfg(cfg, kp, kd), make_transmission(name))
            self._check_native_terms(drive, groups)
            self._batches.append((drive, index, joint_domain(name)))
        self._dt = cfg.physics_dt_s
        self.unreachable_poses = torch.zeros(num_envs, dtype=torch.long, device=device)
        """Per env: group poses the transmission could not evaluate (non-finite or unreachable),
        moved into the joint range before the drive ran; cumulative, never reset."""

    def _check_native_terms(self, drive: LinkageDrive, groups: list[list[str]]) -> None:
        """The articulation's armature must be what the drive's model assumes (set by :func:`native_terms`)."""
        expected = drive.native_armature().tolist()
        for group in groups:
            for name, value in zip(group, expected):
                configured = _lookup(self.cfg.armature, name)
                if configured is None or abs(configured - value) > 1e-9 * max(1.0, abs(value)):
                    raise ValueError(
                        f"actuator armature of {name} is {configured}, but model {self.cfg.model!r} needs {value:.6g}: "
                        "build the config with linkage_actuator_cfg() (or select the model through its preset) "
                        "so the native armature follows the model"
                    )

    def reset(self, env_ids: EnvIds) -> None:
        """Forget the drives' history of ``env_ids`` (``None``, ``slice(None)`` or ``...``: all envs)."""
        index = env_index(env_ids, self._device)
        for drive, _, _ in self._batches:
            drive.reset(index)

    def compute(
        self, control_action: ArticulationActions, joint_pos: torch.Tensor, joint_vel: torch.Tensor
    ) -> ArticulationActions:
        feed_forward = control_action.joint_efforts
        # Joints outside every coupled group (none with linkage_actuator_cfg) keep the feed-forward.
        effort = torch.zeros_like(joint_pos) if feed_forward is None else feed_forward.clone()
        computed = effort.clone()
        for drive, index, domain in self._batches:
            pos, target = joint_pos[:, index], control_action.joint_positions[:, index]
            if domain is not None:
                pos = self._guard(domain, pos)
                if self.cfg.control_space == "motor":  # only motor-space PD maps the target through f(q)
                    target = self._guard(domain, target)
            out = drive.compute(
                target,
                control_action.joint_velocities[:, index],
                pos,
                joint_vel[:, index],
                self._dt,
                joint_kp=self.stiffness[:, index],
                joint_kd=self.damping[:, index],
                joint_effort=None if feed_forward is None else feed_forward[:, index],
            )
            effort[:, index] = out.joint_torque
            # The commanded joint torque before the motor limits (what the ankle replay reads).
            computed[:, index] = (out.jacobian.transpose(-1, -2) @ out.motor_torque_desired.unsqueeze(-1)).squeeze(-1)
        self.computed_effort = computed
        self.applied_effort = effort
        control_action.joint_efforts = effort
        control_action.joint_positions = None
        control_action.joint_velocities = None
        return control_action

    def _guard(self, domain: JointDomain, pose: torch.Tensor) -> torch.Tensor:
        """``pose`` with every group pose the transmission cannot evaluate moved into its joint range.

        A non-finite or unreachable pose of one env would make the transmission raise for the whole
        batch; here it goes to the nearest point of the joint range (NaN to the range's centre) and
        is counted in :attr:`unreachable_poses`. Reachable poses, inside the range or not, pass as
        they are, and the common case (all finite and in range) costs a few comparisons.
        """
        lower, upper = domain.bounds(pose)
        # NaN fails both comparisons, ±inf one: one test finds every pose to look at.
        inside = ((pose >= lower) & (pose <= upper)).all(-1)
        if bool(inside.all()):
            return pose
        suspect = ~inside
        bad = suspect & ~domain.reachable(pose)
        if not bool(bad.any()):
            return pose
        self.unreachable_poses += bad.reshape(bad.shape[0], -1).sum(dim=1)
        centre = ((lower + upper) / 2).expand_as(pose)
        inside = torch.where(torch.isfinite(pose), pose, centre).clamp(lower, upper)
        return torch.where(bad.unsqueeze(-1), inside, pose)


def env_index(env_ids: Any, device: str | torch.device) -> torch.Tensor | None:
    """Env ids as a long tensor, or ``None`` for all envs (``None``, ``slice(None)``, ``...``).

    Args:
        env_ids: ``None``, ``slice(None)``, ``Ellipsis``, a tensor, a warp array or a sequence of ints.
        device: Device of the returned tensor.

    Raises:
        ValueError: A slice other than ``slice(None)``.
    """
    if env_ids is None or env_ids is Ellipsis:
        return None
    if isinstance(env_ids, slice):
        if env_ids == slice(None):
            return None
        raise ValueError(f"env_ids: only slice(None) selects envs by slice, got {env_ids}")
    if not isinstance(env_ids, torch.Tensor) and hasattr(env_ids, "numpy") and hasattr(env_ids, "dtype"):
        import warp as wp

        env_ids = wp.to_torch(env_ids)
    return torch.as_tensor(env_ids, device=device).to(torch.long).reshape(-1)


def _lookup(values: dict[str, float] | float | None, joint_name: str) -> float | None:
    """A per-joint value of a config field given as a scalar or a ``{regex: value}`` dict."""
    import re

    if values is None or isinstance(values, (int, float)):
        return values
    for pattern, value in values.items():
        if re.fullmatch(pattern, joint_name):
            return float(value)
    return None


@configclass
class LinkageActuatorCfg(ActuatorBaseCfg):
    """Config of :class:`LinkageActuator`. Build it with :func:`linkage_actuator_cfg` so that the
    joint armature and viscous friction the simulator integrates follow the chosen model."""

    class_type: type = LinkageActuator

    coupled_joints: list[list[str]] = MISSING
    """Joint names of each coupled group, in the transmission's joint order (e.g. ``[["fl_hip", "fl_knee"], ...]``)."""

    transmissions: list[str] = MISSING
    """One transmission name per group (see :func:`~linkage_lab.actuators.transmissions.known_transmissions`)."""

    control_space: str = LinkageDriveCfg.control_space
    """``"joint"``: PD on serial joints with the policy's gains, then ``τ_m = J⁻ᵀ τ_j``. ``"motor"``: PD on
    motor angles with ``K_m = J⁻ᵀ K_j J⁻¹`` at the current pose (what a motor driver runs)."""

    motor_coupling: str = LinkageDriveCfg.motor_coupling
    """With ``control_space="motor"``: how ``K_m``'s cross terms act (:attr:`LinkageDriveCfg.motor_coupling`):
    ``full`` every physics step, ``held`` from the last control tick's motor sample, ``diagonal`` not at all."""

    motor_peak_torque_nm: list[float] = MISSING
    """Peak torque of each motor of a group (N·m). With the identity transmission these are the
    per-axis (box) limits."""

    motor_no_load_speed_rads: list[float] | None = None
    """No-load speed per motor (rad/s) for a linear torque–speed limit; ``None``: no speed dependence."""

    motor_stall_torque_nm: list[float] | None = None
    """Stall torque per motor (N·m) where the torque–speed line starts, capped by the peak torque; ``None``: the
    line starts at the peak torque."""

    saturation_mode: str = LinkageDriveCfg.saturation_mode
    """``"clip"`` each motor on its own (as hardware), or ``"scale"`` (keeps the torque's direction)."""

    model: str = S3NCfg.model
    """Dynamics model: ``kin_only``, ``s3n_act`` or ``s3n_full`` (docs/design/s3n.md)."""

    reflected_inertia_kgm2: list[float] = list(S3NCfg.reflected_inertia_kgm2)
    """Reflected rotor inertia ``J̄`` per motor (kg·m²)."""

    motor_damping_nms_per_rad: list[float] = list(S3NCfg.motor_damping_nms_per_rad)
    """Reflected viscous damping ``B̄`` per motor (N·m·s/rad)."""

    mp_kgm2: list[float] | None = None
    """Identified ``(M₁₁, M₁₂, M₂₂)`` of ``M_p(α)`` (kg·m²), for ``s3n_full``; ``None``: not identified."""

    serial_link_kgm2: list[float] | None = None
    """``(a, b, c)`` of the serial tree's link inertia ``M_linkˢ(α)`` (kg·m²), for ``s3n_full``."""

    command_delay_steps: int = LinkageDriveCfg.command_delay_steps
    """Physics steps between a command and its use."""

    accel_filter_time_constant_s: float | None = None
    """Low-pass time constant on the explicit S3N acceleration (s); ``None``: unfiltered."""

    acceleration_estimate: str = LinkageDriveCfg.acceleration_estimate
    """``previous``: the last step's finite-difference ``q̈`` (the paper); ``torque_predicted``: plus the
    change of actuator torque through ``M_norm⁻¹`` (much smaller timing error at 5 ms steps)."""

    explicit_acceleration_limit: str = LinkageDriveCfg.explicit_acceleration_limit
    """``actuator``: the explicit torque's ``q̈`` bounded by what the motors can give each joint
    (:attr:`LinkageDriveCfg.explicit_acceleration_limit`); ``none``: unbounded."""

    explicit_split: str = LinkageDriveCfg.explicit_split
    """How much of the inertia increment is native armature (``paper`` or ``diagonal``, see the drive)."""

    reference_joint_pos_rad: list[float] | None = None
    """Pose at which pose-dependent diagonals become native armature (rad); ``None``: zeros."""

    physics_dt_s: float = 0.005
    """Physics step (s) for the finite-difference acceleration; the task sets it to ``sim.dt``."""


#: The actuator fields that are the drive's (same names, same defaults): copied by :func:`drive_cfg`.
DRIVE_FIELDS = (
    "control_space",
    "motor_coupling",
    "motor_peak_torque_nm",
    "saturation_mode",
    "motor_no_load_speed_rads",
    "motor_stall_torque_nm",
    "command_delay_steps",
    "accel_filter_time_constant_s",
    "acceleration_estimate",
    "explicit_acceleration_limit",
    "explicit_split",
    "reference_joint_pos_rad",
)
#: The actuator fields that are the S3N model's (:class:`~linkage_lab.dynamics.s3n.S3NCfg`).
S3N_FIELDS = ("model", "reflected_inertia_kgm2", "motor_damping_nms_per_rad", "mp_kgm2", "serial_link_kgm2")


def drive_cfg(cfg: LinkageActuatorCfg, kp: Sequence[float], kd: Sequence[float]) -> LinkageDriveCfg:
    """The :class:`LinkageDriveCfg` of one group of ``cfg`` with joint gains ``kp``, ``kd``: the fields
    of :data:`DRIVE_FIELDS` and :data:`S3N_FIELDS` copied by name (lists become tuples)."""

    def plain(value: Any) -> Any:
        return tuple(float(v) for v in value) if isinstance(value, (list, tuple)) else value

    return LinkageDriveCfg(
        s3n=S3NCfg(**{name: plain(getattr(cfg, name)) for name in S3N_FIELDS}),
        joint_kp=tuple(float(v) for v in kp),
        joint_kd=tuple(float(v) for v in kd),
        **{name: plain(getattr(cfg, name)) for name in DRIVE_FIELDS},
    )


def native_terms(cfg: LinkageActuatorCfg) -> tuple[dict[str, float], dict[str, float]]:
    """Per-joint armature (kg·m²) and viscous friction (N·m·s/rad) the simulator integrates natively."""
    armature: dict[str, float] = {}
    viscous: dict[str, float] = {}
    for group, name in zip(cfg.coupled_joints, cfg.transmissions):
        zeros = [0.0] * len(group)
        drive = LinkageDrive(drive_cfg(cfg, zeros, zeros), make_transmission(name))
        for joint, a, d in zip(group, drive.native_armature().tolist(), drive.native_damping().tolist()):
            armature[joint] = a
            viscous[joint] = d
    return armature, viscous


def linkage_actuator_cfg(**fields) -> LinkageActuatorCfg:
    """A :class:`LinkageActuatorCfg` whose ``joint_names_expr``, ``armature`` and ``viscous_friction``
    follow its coupled joints and model."""
    cfg = LinkageActuatorCfg(**fields)
    cfg.joint_names_expr = [name for group in cfg.coupled_joints for name in group]
    cfg.armature, cfg.viscous_friction = native_terms(cfg)
    return cfg
