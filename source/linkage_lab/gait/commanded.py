"""The biped gait driven by a velocity command: its clock, its amplitudes, and one traceable module.

A learned policy that adds corrections to a scripted gait (a residual policy) needs the gait to
follow the same velocity command it gets. :class:`CommandedBipedGait` is that gait: from a small
state ``(φ, s, a)`` (phase, stride scale, stepping scale), the command and three body-frame IMU
readings it returns the joint targets and the next state. The same module runs in the simulated
task and, exported to ONNX, on the robot, so the two cannot drift apart.

State update per control step ``dt`` (``v`` the command ``(v_x, v_y, ω_z)``)::

    c  = |(v_x, v_y)| > d_v or |ω_z| > d_ω                    the command asks to step
    s* = clip((v_x − v_0) / v_s, −s_max, s_max) if c, else 0  stride follows the forward command
    s' = s + clip(s* − s, −dt/T_s, dt/T_s)                    rate-limited (no jump in foot position)
    a* = 1 if c or |s'| > s_stop, else 0
    a' = a + clip(a* − a, −dt/T_a, dt/T_a)                    steps until the stride has run down
    φ' = (φ + 2π f dt) mod 2π while a' > 0, else φ            the phase waits while standing

The joint targets are :meth:`BipedGait.joint_targets_at_phase` at ``(φ, s, a)``: stride ``s``
scales the step length and arm swing, ``a`` the foot lift and the sway. With ``a = 0`` the robot
stands in the gait's crouch, balanced by the gait's ankle feedback. A yaw-rate command turns the
gait as its own heading loop would: each step turns by ``u = sat(k_ω ω_z)`` through the hip yaw
joints (:meth:`BipedGait.joint_targets_at_phase`), so the robot follows ``ω_z`` without the policy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from linkage_lab.gait.biped import BipedGait, TorsoState
from linkage_lab.gait.phase import BIPED_PHASE_OFFSETS, leg_phases
from linkage_lab.gait.trajectory import lift_fraction

#: Names of the gait state's three columns, in order.
STATE_NAMES = ("phase_rad", "stride_scale", "stepping_scale")
#: Number of values in the gait's observation (:func:`gait_observation`).
OBSERVATION_SIZE = 4


@dataclass(frozen=True)
class GaitCommandCfg:
    """How a velocity command drives the gait (module docstring for the update).

    Attributes:
        speed_per_stride_mps: ``v_s``, forward speed gained per unit of stride scale (m/s); None: the
            gait's ideal ``2 S f``. A measured value maps commands onto the speed the robot really walks.
        in_place_speed_mps: ``v_0``, the speed the robot drifts at when stepping with stride 0 (m/s).
        max_stride_scale: ``s_max``, largest stride scale a command may ask for (unitless).
        stride_ramp_time_s: ``T_s``, time for the stride scale to change by 1 (s); None: the gait's
            own ``step_ramp_time_s``.
        stepping_ramp_time_s: ``T_a``, time for the stepping scale to go from 0 to 1 (s).
        linear_deadband_mps: ``d_v``, planar command speed below which the robot stands (m/s).
        yaw_deadband_rads: ``d_ω``, yaw-rate command below which the robot stands (rad/s).
        stop_stride_scale: ``s_stop``, the robot keeps stepping until its stride is below this (unitless).
        turn_per_yaw_rate_s: ``k_ω``, per-step hip-yaw turn per unit yaw-rate command (rad per rad/s = s);
            0: the gait does not turn and a yaw command only makes it step.
        yaw_integral_gain_per_s: ``K_ψ``, the heading hold on the commanded yaw rate (1/s): the gait turns on
            ``ω_z + K_ψ e`` where ``e`` integrates the commanded minus the gyro's yaw rate, the heading the
            robot has fallen behind (:func:`yaw_rate_with_integral`); 0: open loop, ``u = k_ω ω_z``.
        yaw_integral_limit_rad: ``e_max``, the bound of ``e`` (rad): how far behind the loop still pulls.
    """

    speed_per_stride_mps: float | None = None
    in_place_speed_mps: float = 0.0
    max_stride_scale: float = 1.0
    stride_ramp_time_s: float | None = None
    stepping_ramp_time_s: float = 0.5
    linear_deadband_mps: float = 0.1
    yaw_deadband_rads: float = 0.1
    stop_stride_scale: float = 0.05
    turn_per_yaw_rate_s: float = 0.0
    yaw_integral_gain_per_s: float = 0.0
    yaw_integral_limit_rad: float = 0.5

    def __post_init__(self) -> None:
        """Reject non-positive speeds and times and negative bands.

        Raises:
            ValueError: Naming the field and its value.
        """
        positive = ("speed_per_stride_mps", "max_stride_scale", "stride_ramp_time_s", "stepping_ramp_time_s")
        for name in positive:
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"gait command parameter {name} must be a positive number, got {value!r}")
        non_negative = (
            "linear_deadband_mps",
            "yaw_deadband_rads",
            "stop_stride_scale",
            "turn_per_yaw_rate_s",
            "yaw_integral_gain_per_s",
            "yaw_integral_limit_rad",
        )
        for name in non_negative:
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"gait command parameter {name} must be a non-negative number, got {value!r}")
        if not math.isfinite(self.in_place_speed_mps):
            raise ValueError(
                f"gait command parameter in_place_speed_mps must be finite, got {self.in_place_speed_mps!r}"
            )


def yaw_rate_with_integral(
    cfg: GaitCommandCfg,
    command: torch.Tensor,
    yaw_rate_b: torch.Tensor,
    integral_rad: torch.Tensor,
    dt_s: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The command the gait turns on, and the next heading integral: a PI loop on the yaw rate.

    While the command asks to turn (``|ω_z|`` above the yaw deadband ``d_ω``), ``e' = clip(e + (ω_z − ω_gyro) dt,
    ±e_max)`` and the gait is given ``ω_z + K_ψ e'``: a plant that turns at a fraction ``g`` of what the gait asks
    (the closed chain under loop latency turns at about half) settles at ``e = ω_z (1 − g) / (g K_ψ)`` and then
    follows ``ω_z`` on the mean, its steps' own yaw swing averaging out in ``e``. Otherwise ``e'`` is 0: a straight
    walk and a stand run open loop as before (held straight, Marvin under 40 ms of latency fell once in two kicked
    starts at 0.5 m/s), and the gait's deadband sees the bare command. The robot runs the same numbers
    (:class:`~linkage_lab.deploy.residual_gait.ResidualGaitComposer`).

    Args:
        cfg: ``yaw_integral_gain_per_s`` (``K_ψ``), ``yaw_integral_limit_rad`` (``e_max``), ``yaw_deadband_rads``.
        command: ``(N, 3)``: ``v_x``, ``v_y`` (m/s), ``ω_z`` (rad/s).
        yaw_rate_b: ``(N,)`` the gyro's body ``z`` rate (rad/s).
        integral_rad: ``(N,)`` ``e`` before this step (rad).
        dt_s: Control step (s).

    Returns:
        ``(command', e')``: the command with ``ω_z + K_ψ e'`` (a new tensor) and ``e'``, ``(N,)``.
    """
    turning = command[..., 2].abs() > cfg.yaw_deadband_rads
    limit = cfg.yaw_integral_limit_rad
    stepped = (integral_rad + (command[..., 2] - yaw_rate_b) * dt_s).clamp(-limit, limit)
    next_integral = torch.where(turning, stepped, torch.zeros_like(stepped))
    adjusted = command.clone()
    adjusted[..., 2] = command[..., 2] + cfg.yaw_integral_gain_per_s * next_integral
    return adjusted, next_integral


def torso_from_body(projected_gravity_b: torch.Tensor, ang_vel_b: torch.Tensor, lin_vel_b: torch.Tensor) -> TorsoState:
    """The gait's torso readings from body-frame IMU values (each ``(N, 3)``), no heading or position.

    With ``g_b`` the unit gravity direction in the body frame (ZYX Euler angles, REP-103):
    ``pitch = asin(g_x)``, ``roll = atan2(−g_y, −g_z)``; the velocity in the heading frame is
    ``R_y(pitch) R_x(roll) v_b`` (the yaw drops out). Pitch rate is the body ``y`` rate.

    Args:
        projected_gravity_b: Gravity direction in the body frame (unit vector, ``(0, 0, −1)`` upright).
        ang_vel_b: Body angular velocity (rad/s).
        lin_vel_b: Body linear velocity (m/s).
    """
    gx, gy, gz = projected_gravity_b.unbind(-1)
    pitch = torch.asin(gx.clamp(-1.0, 1.0))
    roll = torch.atan2(-gy, -gz)
    vx, vy, vz = lin_vel_b.unbind(-1)
    cos_roll, sin_roll = torch.cos(roll), torch.sin(roll)
    forward = torch.cos(pitch) * vx + torch.sin(pitch) * (sin_roll * vy + cos_roll * vz)
    lateral = cos_roll * vy - sin_roll * vz
    zeros = torch.zeros_like(pitch)
    return TorsoState(roll, pitch, zeros, ang_vel_b[..., 1], zeros, zeros, forward, lateral)


def gait_observation(state: torch.Tensor) -> torch.Tensor:
    """The policy's view of the gait state: ``(sin φ, cos φ, s, a)``, ``(N, 4)``."""
    phase, stride, stepping = state.unbind(-1)
    return torch.stack((torch.sin(phase), torch.cos(phase), stride, stepping), dim=-1)


class CommandedBipedGait(torch.nn.Module):
    """``(state, command, g_b, ω_b, v_b) → (joint targets, next state)``; see the module docstring.

    Args:
        gait: The biped gait; it must have no heading loop (``heading_gain = 0``): with a velocity
            command the policy steers, and the robot has no lane.
        command_cfg: How the command drives the gait.
        control_period_s: Control step ``dt`` (s).
        joint_names: Output order of the joint targets; None: the gait's own order.

    Raises:
        ValueError: A heading loop, a non-positive period, or a joint the gait does not drive.
    """

    def __init__(
        self,
        gait: BipedGait,
        command_cfg: GaitCommandCfg,
        control_period_s: float,
        joint_names: Sequence[str] | None = None,
    ):
        super().__init__()
        if gait.cfg.heading_gain != 0.0:
            raise ValueError(
                f"the commanded gait has no lane to keep: heading_gain must be 0 (got {gait.cfg.heading_gain}); "
                "the policy steers"
            )
        if not (math.isfinite(control_period_s) and control_period_s > 0.0):
            raise ValueError(f"control_period_s must be positive, got {control_period_s!r}")
        names = tuple(gait.joint_names if joint_names is None else joint_names)
        missing = sorted(set(names) - set(gait.joint_names))
        if missing:
            raise ValueError(f"the gait drives no joint named {missing}; it drives {list(gait.joint_names)}")
        self.gait = gait
        self.command_cfg = command_cfg
        self.control_period_s = float(control_period_s)
        self.joint_names = names
        cfg = gait.cfg
        self.speed_per_stride_mps = float(
            command_cfg.speed_per_stride_mps or 2.0 * cfg.step_length_m * cfg.frequency_hz
        )
        self.stride_ramp_time_s = float(command_cfg.stride_ramp_time_s or cfg.step_ramp_time_s or control_period_s)
        self.phase_step_rad = 2.0 * math.pi * cfg.frequency_hz * self.control_period_s

    def with_frequency(self, frequency_hz: float) -> CommandedBipedGait:
        """This prior stepping at ``frequency_hz`` (a new module; this one is unchanged).

        The steps keep their length, so the speed a stride scale walks at scales with the cadence:
        ``v_s`` becomes ``v_s f' / f`` (the measured or ideal ``2 S f`` alike); the drift ``v_0`` and
        every other command parameter stay. A faster cadence thus maps a command onto a shorter stride.

        Raises:
            ValueError: ``frequency_hz`` not a positive number.
        """
        number = isinstance(frequency_hz, (int, float)) and not isinstance(frequency_hz, bool)
        if not (number and math.isfinite(frequency_hz) and frequency_hz > 0.0):
            raise ValueError(f"frequency_hz must be a positive number, got {frequency_hz!r}")
        ratio = frequency_hz / self.gait.cfg.frequency_hz
        gait = BipedGait(replace(self.gait.cfg, frequency_hz=float(frequency_hz)))
        command_cfg = replace(self.command_cfg, speed_per_stride_mps=self.speed_per_stride_mps * ratio)
        return CommandedBipedGait(gait, command_cfg, self.control_period_s, self.joint_names)

    def initial_state(self, num_envs: int, device: torch.device | str = "cpu") -> torch.Tensor:
        """The state after a reset: phase 0, stride 0, standing; ``(num_envs, 3)``."""
        return torch.zeros(num_envs, len(STATE_NAMES), device=device)

    def forward(
        self,
        state: torch.Tensor,
        command: torch.Tensor,
        projected_gravity_b: torch.Tensor,
        ang_vel_b: torch.Tensor,
        lin_vel_b: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Joint targets at ``state`` and the state of the next control step.

        Args:
            state: ``(N, 3)``: phase ``φ`` (rad), stride scale ``s``, stepping scale ``a``.
            command: ``(N, 3)``: ``v_x``, ``v_y`` (m/s, base frame), ``ω_z`` (rad/s).
            projected_gravity_b: ``(N, 3)`` gravity direction in the body frame (unitless).
            ang_vel_b: ``(N, 3)`` body angular velocity (rad/s).
            lin_vel_b: ``(N, 3)`` body linear velocity (m/s).

        Returns:
            ``(targets, next_state)``: ``(N, len(joint_names))`` joint targets (rad, clamped to the
            gait's joint limits) and ``(N, 3)``.
        """
        phase, stride, stepping = state.unbind(-1)
        torso = torso_from_body(projected_gravity_b, ang_vel_b, lin_vel_b)
        turn = self.command_cfg.turn_per_yaw_rate_s * command[..., 2]
        targets = self.gait.joint_targets_at_phase(phase, torso, stride, stepping, stepping, turn_rad=turn)
        joint_targets = torch.stack([targets[name] for name in self.joint_names], dim=-1)
        return joint_targets, self.next_state(state, command)

    def next_state(self, state: torch.Tensor, command: torch.Tensor) -> torch.Tensor:
        """The state one control step later under ``command`` (module docstring)."""
        cfg = self.command_cfg
        dt = self.control_period_s
        phase, stride, stepping = state.unbind(-1)
        commanded = (torch.linalg.vector_norm(command[..., :2], dim=-1) > cfg.linear_deadband_mps) | (
            command[..., 2].abs() > cfg.yaw_deadband_rads
        )
        stride_target = ((command[..., 0] - cfg.in_place_speed_mps) / self.speed_per_stride_mps).clamp(
            -cfg.max_stride_scale, cfg.max_stride_scale
        )
        # Standing needs no stride: the drift correction applies only while a command asks to step.
        stride_target = torch.where(commanded, stride_target, torch.zeros_like(stride_target))
        stride_step = dt / self.stride_ramp_time_s
        next_stride = stride + (stride_target - stride).clamp(-stride_step, stride_step)
        active = commanded | (next_stride.abs() > cfg.stop_stride_scale)
        stepping_step = dt / cfg.stepping_ramp_time_s
        next_stepping = stepping + (active.to(stepping.dtype) - stepping).clamp(-stepping_step, stepping_step)
        moving = (next_stepping > 0.0).to(phase.dtype)
        next_phase = torch.remainder(phase + self.phase_step_rad * moving, 2.0 * math.pi)
        return torch.stack((next_phase, next_stride, next_stepping), dim=-1)

    def swing_legs(self, state: torch.Tensor) -> torch.Tensor:
        """Which feet the gait has in the air at ``state``: ``(N, legs)`` bool, legs in ``BIPED_SIDES`` order.

        A foot swings while its lift ``max(0, sin ψ − c)`` is positive and the gait steps (``a > 0``);
        standing (``a = 0``) keeps both feet down.
        """
        phase, _, stepping = state.unbind(-1)
        psi = leg_phases(phase, BIPED_PHASE_OFFSETS)
        lifted = lift_fraction(psi, self.gait.cfg.double_support_margin) > 0.0
        return lifted & (stepping > 0.0).unsqueeze(-1)

    def swing_time_s(self) -> float:
        """How long each foot is in the air per step at full stepping (s): ``sin ψ > c`` over ``1/f``."""
        cfg = self.gait.cfg
        return (math.pi - 2.0 * math.asin(cfg.double_support_margin)) / (2.0 * math.pi * cfg.frequency_hz)
