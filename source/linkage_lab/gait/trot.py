"""The Limit's trot: diagonal pairs half a cycle apart, sole-flat ankles, speed from a command."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from linkage_lab.gait.phase import as_tensor, gait_phase, leg_phases, stepping_time
from linkage_lab.gait.trajectory import foot_trajectory, step_ramp
from linkage_lab.kinematics.leg_ik import LegConvention, LegReachError, leg_ik


@dataclass
class TrotGaitCfg:
    """Parameters of the trot. Build the Limit's with :func:`limit_trot_cfg`.

    Joint signs follow the Limit (docs/design/robots.md §1.2): all axes +y, a positive hip swings the foot
    backwards, the knee bends backwards (knee < 0), and ``hip + knee + ankle = 0`` keeps the sole flat.
    """

    thigh_length_m: float
    """Thigh L1, hip → knee (m)."""
    shank_length_m: float
    """Shank L2, knee → ankle (m)."""
    leg_convention: LegConvention
    """Joint axis signs and knee direction of the leg joints."""
    leg_names: tuple[str, ...]
    """Legs in canonical order (``fl, fr, rl, rr``)."""
    joint_names: tuple[str, ...]
    """The 12 joints in canonical order (``fl_hip, fl_knee, fl_ankle, fr_hip, …``)."""
    phase_offsets_rad: tuple[float, ...]
    """Per-leg phase offset in ``leg_names`` order (rad): 0 for pair A, π for pair B."""
    hip_height_m: float = 0.172
    """Hip height above the ankle while trotting (m). The standing pose (0.153 m) already puts the
    flat-foot ankle on its 0.60 rad limit; at 0.172 m the whole stance of a 0.10 m step keeps the
    sole flat inside ±0.60 rad (only the swing, foot in the air, gets clamped)."""
    step_height_m: float = 0.03
    """Step height ``H`` (m)."""
    frequency_hz: float = 2.5
    """Gait frequency ``f`` (cycles/s)."""
    double_support_margin: float = 0.1
    """``c ∈ [0, 1)``: a foot lifts only while ``sin ψ > c`` (unitless)."""
    max_step_length_m: float = 0.10
    """Largest step length ``|S|`` a velocity command may ask for (m)."""
    neutral_foot_x_m: float = 0.0
    """Forward offset of each foot's mid-stride point from its hip (m)."""
    step_ramp_time_s: float = 1.0
    """The step length rises from 0 to full over this time after the start (s)."""
    joint_limits_rad: dict[str, tuple[float, float]] | None = None
    """Per-joint ``(lower, upper)`` clamp of the targets (rad), by joint name; None: no clamp."""


def step_length_for_velocity(velocity_mps: torch.Tensor, frequency_hz: float, max_step_length_m: float) -> torch.Tensor:
    """Step length from a forward speed, ``S = v / (2 f)`` (two steps per cycle), saturated (m)."""
    return (velocity_mps / (2.0 * frequency_hz)).clamp(-max_step_length_m, max_step_length_m)


class TrotGait:
    """Joint position targets of the Limit's 12 joints, canonical order (no internal state).

    Args:
        cfg: The trot parameters.

    Raises:
        LegReachError: A point of the foot trajectory lies outside the leg's reach.
    """

    def __init__(self, cfg: TrotGaitCfg):
        if len(cfg.joint_names) != 3 * len(cfg.leg_names) or len(cfg.phase_offsets_rad) != len(cfg.leg_names):
            raise ValueError("trot config needs three joints and one phase offset per leg")
        self.cfg = cfg
        self.joint_names = cfg.joint_names
        half = 0.5 * cfg.max_step_length_m
        corner_x = torch.tensor([-half, half, 0.0], dtype=torch.float64) + cfg.neutral_foot_x_m
        corner_z = cfg.hip_height_m - torch.tensor([0.0, 0.0, cfg.step_height_m], dtype=torch.float64)
        try:
            leg_ik(corner_x, corner_z, cfg.thigh_length_m, cfg.shank_length_m, cfg.leg_convention, strict=True)
        except LegReachError as exc:
            raise LegReachError(f"trot trajectory leaves the leg's reach: {exc}") from exc

    def leg_phases(self, time_s: torch.Tensor | float, start_time_s: torch.Tensor | float = 0.0) -> torch.Tensor:
        """Per-leg phases ``ψ`` in ``leg_names`` order (rad), ``(..., 4)``."""
        return leg_phases(gait_phase(time_s, self.cfg.frequency_hz, start_time_s), self.cfg.phase_offsets_rad)

    def joint_targets(
        self,
        time_s: torch.Tensor | float,
        forward_velocity_mps: torch.Tensor | float,
        start_time_s: torch.Tensor | float = 0.0,
    ) -> torch.Tensor:
        """Joint position targets (rad), ``(num_envs, 12)`` in canonical joint order.

        Args:
            time_s: Simulation time (s), scalar or ``(num_envs,)``.
            forward_velocity_mps: Commanded forward speed (m/s), scalar or ``(num_envs,)``;
                negative walks backwards. Sets ``S = v / 2f``, saturated at ``max_step_length_m``.
            start_time_s: Start of stepping ``t₀`` (s); before it the robot holds its crouch.
        """
        cfg = self.cfg
        # Whichever input is a tensor sets the dtype and device (the other may be a Python float).
        if isinstance(forward_velocity_mps, torch.Tensor):
            velocity = as_tensor(forward_velocity_mps)
            time = as_tensor(time_s, velocity)
        else:
            time = as_tensor(time_s)
            velocity = as_tensor(forward_velocity_mps, time)
        time, velocity = torch.broadcast_tensors(time, velocity)
        time = time.reshape(-1) if time.ndim == 0 else time
        velocity = velocity.reshape(time.shape)
        psi = self.leg_phases(time, start_time_s)
        ramp = step_ramp(stepping_time(time, start_time_s), cfg.step_ramp_time_s)
        step_length = step_length_for_velocity(velocity, cfg.frequency_hz, cfg.max_step_length_m) * ramp
        forward, lift = foot_trajectory(psi, step_length.unsqueeze(-1), cfg.step_height_m, cfg.double_support_margin)
        angles = leg_ik(
            forward + cfg.neutral_foot_x_m,
            cfg.hip_height_m - lift,
            cfg.thigh_length_m,
            cfg.shank_length_m,
            cfg.leg_convention,
            strict=False,
        )
        targets = torch.stack((angles.hip, angles.knee, angles.ankle), dim=-1).flatten(-2)
        if cfg.joint_limits_rad is None:
            return targets
        lower = as_tensor([cfg.joint_limits_rad[name][0] for name in self.joint_names], targets)
        upper = as_tensor([cfg.joint_limits_rad[name][1] for name in self.joint_names], targets)
        return torch.maximum(torch.minimum(targets, upper), lower)
