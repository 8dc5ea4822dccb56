"""Marvin's scripted walk: phase, foot trajectories, leg IK, sway, ankle feedback, heading, arms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

# The configuration lives in biped_cfg; its public names are re-exported here, where users import them.
from linkage_lab.gait.biped_cfg import (  # noqa: F401
    BipedGaitCfg,
    NaoReference,
    check_gait_overrides,
    gait_parameter_names,
)
from linkage_lab.gait.heading import wrap_angle
from linkage_lab.gait.phase import BIPED_PHASE_OFFSETS, as_tensor, gait_phase, leg_phases, stepping_time
from linkage_lab.gait.trajectory import foot_trajectory, lift_fraction, step_ramp
from linkage_lab.kinematics.leg_ik import LegReachError, leg_ik

#: Leg order of the biped: index 0 runs on φ, index 1 on φ + π (``BIPED_PHASE_OFFSETS``).
BIPED_SIDES = tuple(BIPED_PHASE_OFFSETS)


@dataclass
class TorsoState:
    """Torso sensor readings, each a tensor of shape ``(num_envs,)`` (REP-103 world frame).

    Attributes:
        roll_rad: Roll ``ϕ`` about +x (rad), + = leaning right.
        pitch_rad: Pitch ``θ`` about +y (rad), + = leaning forward.
        yaw_rad: Heading ``ψ`` about +z (rad), + = turned left.
        pitch_rate_rads: ``θ̇`` (rad/s).
        x_m: Torso position along the track (m).
        y_m: Torso lateral position (m), + = left.
        forward_velocity_mps: Torso velocity along its heading (m/s); None reads as 0.
        lateral_velocity_mps: Torso velocity to its left, perpendicular to the heading (m/s); None reads as 0.
    """

    roll_rad: torch.Tensor
    pitch_rad: torch.Tensor
    yaw_rad: torch.Tensor
    pitch_rate_rads: torch.Tensor
    x_m: torch.Tensor
    y_m: torch.Tensor
    forward_velocity_mps: torch.Tensor | None = None
    lateral_velocity_mps: torch.Tensor | None = None

    @classmethod
    def from_tensors(
        cls, roll_pitch_yaw_rad: torch.Tensor, pitch_rate_rads: torch.Tensor, position_m: torch.Tensor
    ) -> TorsoState:
        """From ``(N, 3)`` Euler angles, ``(N,)`` pitch rate and ``(N, ≥2)`` world position."""
        return cls(
            roll_rad=roll_pitch_yaw_rad[..., 0],
            pitch_rad=roll_pitch_yaw_rad[..., 1],
            yaw_rad=roll_pitch_yaw_rad[..., 2],
            pitch_rate_rads=pitch_rate_rads,
            x_m=position_m[..., 0],
            y_m=position_m[..., 1],
        )


def _or_zeros(value: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(like) if value is None else value


def lateral_sway(phase: torch.Tensor, amplitude_rad: torch.Tensor | float, lead_rad: float) -> torch.Tensor:
    """Hip roll of both legs, ``θ_hr = −A sin(φ + δ)`` (rad); the ankle roll is ``−θ_hr``.

    Negative hip roll (about +x) moves the feet to −y, i.e. the pelvis over the left foot,
    while the right leg swings (``φ ∈ [0, π)``).
    """
    return -as_tensor(amplitude_rad, phase) * torch.sin(phase + lead_rad)


def heading_turn(torso: TorsoState, lane_y_m: torch.Tensor | float, cfg: BipedGaitCfg) -> torch.Tensor:
    """Per-step turn ``u = sat(K_ψ · wrap(ψ_ref − ψ))`` with ``ψ_ref = sat(−K_y (y − y_lane))`` (rad)."""
    lateral_error = torso.y_m - as_tensor(lane_y_m, torso.y_m)
    heading_ref = (-cfg.lane_gain_rad_per_m * lateral_error).clamp(
        -cfg.heading_ref_limit_rad, cfg.heading_ref_limit_rad
    )
    wrapped = wrap_angle(heading_ref - torso.yaw_rad)
    return (cfg.heading_gain * wrapped).clamp(-cfg.turn_limit_rad, cfg.turn_limit_rad)


class BipedGait:
    """Joint position targets of Marvin's 16 joints from time and torso sensors (no internal state).

    Args:
        cfg: The gait parameters.

    Raises:
        LegReachError: A point of the foot trajectory lies outside the leg's reach.
    """

    def __init__(self, cfg: BipedGaitCfg):
        self.cfg = cfg
        legs = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
        arms = ("shoulder_pitch", "elbow")
        self.joint_names: tuple[str, ...] = tuple(
            f"{side}_{joint}" for group in (legs, arms) for side in ("left", "right") for joint in group
        )
        unknown = set(cfg.stance_compensation_rad or {}) - set(legs) - {"hip_yaw"}
        if unknown:
            raise ValueError(f"stance_compensation_rad: unknown leg joints {sorted(unknown)}; expected some of {legs}")
        half = 0.5 * cfg.step_length_m
        corner_x = torch.tensor([-half, half, 0.0, -half, half], dtype=torch.float64) + cfg.neutral_foot_x_m
        corner_z = cfg.hip_height_m - torch.tensor([0.0, 0.0, cfg.step_height_m, 0.0, 0.0], dtype=torch.float64)
        try:
            leg_ik(corner_x, corner_z, cfg.thigh_length_m, cfg.shin_length_m, cfg.leg_convention, strict=True)
        except LegReachError as exc:
            raise LegReachError(f"biped gait trajectory leaves the leg's reach: {exc}") from exc

    def joint_targets(
        self,
        time_s: torch.Tensor | float,
        torso: TorsoState,
        start_time_s: torch.Tensor | float = 0.0,
        lane_y_m: torch.Tensor | float = 0.0,
    ) -> dict[str, torch.Tensor]:
        """Joint position targets (rad) by joint name, each ``(num_envs,)``.

        Args:
            time_s: Simulation time (s), scalar or ``(num_envs,)``.
            torso: Torso sensor readings.
            start_time_s: Start of stepping ``t₀`` (s); before it the robot holds its crouch.
            lane_y_m: Lateral centre of the robot's lane (m).
        """
        cfg = self.cfg
        time = as_tensor(time_s, torso.pitch_rad).expand_as(torso.pitch_rad)
        elapsed = stepping_time(time, start_time_s)
        return self.joint_targets_at_phase(
            gait_phase(time, cfg.frequency_hz, start_time_s),
            torso,
            stride_scale=step_ramp(elapsed, cfg.step_ramp_time_s),
            sway_scale=step_ramp(elapsed, cfg.sway_ramp_time_s),
            lane_y_m=lane_y_m,
        )

    def joint_targets_at_phase(
        self,
        phase: torch.Tensor,
        torso: TorsoState,
        stride_scale: torch.Tensor | float = 1.0,
        sway_scale: torch.Tensor | float = 1.0,
        stepping_scale: torch.Tensor | float = 1.0,
        lane_y_m: torch.Tensor | float = 0.0,
        turn_rad: torch.Tensor | float = 0.0,
    ) -> dict[str, torch.Tensor]:
        """Joint position targets (rad) by joint name at a given phase and amplitudes, each ``(num_envs,)``.

        :meth:`joint_targets` is this with its own clock and start ramps; a caller with its own
        clock (a command-driven gait) sets the phase and the three amplitudes itself.

        Args:
            phase: Master phase ``φ`` (rad), ``(num_envs,)``.
            torso: Torso sensor readings.
            stride_scale: Step length and arm swing over their full values (unitless, scalar or
                ``(num_envs,)``); negative steps backwards.
            sway_scale: Lateral sway amplitude over ``A`` (unitless).
            stepping_scale: How much the robot steps, 0 (both feet planted) to 1 (unitless): scales
                the foot lift and everything tied to one leg being in the air (swing-foot placement
                and turn, single-support sag compensation, the stance weighting of the hip feedback).
            lane_y_m: Lateral centre of the robot's lane (m).
            turn_rad: Per-step turn ``u`` asked from outside the heading loop (rad, + = left, scalar or
                ``(num_envs,)``), added to the loop's and saturated with it at ``turn_limit_rad``.
        """
        cfg = self.cfg
        stepping = as_tensor(stepping_scale, phase).expand_as(phase).unsqueeze(-1)
        stride_scale = as_tensor(stride_scale, phase).expand_as(phase).unsqueeze(-1)
        psi = leg_phases(phase, BIPED_PHASE_OFFSETS)
        forward, lift = foot_trajectory(
            psi, cfg.step_length_m * stride_scale, cfg.step_height_m * stepping, cfg.double_support_margin
        )
        # Foot placement: the swing foot lands where the torso's speed error says (0 at lift-off).
        place_weight = 0.5 * (1.0 - torch.cos(psi)) * stepping
        forward_speed = _or_zeros(torso.forward_velocity_mps, torso.pitch_rad)
        lateral_speed = _or_zeros(torso.lateral_velocity_mps, torso.pitch_rad)
        nominal_speed = 2.0 * cfg.step_length_m * stride_scale[..., 0] * cfg.frequency_hz
        limit = cfg.foot_placement_limit_m
        forward_place = (
            cfg.foot_placement_velocity_gain_s * (forward_speed - nominal_speed)
            + cfg.foot_placement_pitch_gain_m * torso.pitch_rad
        ).clamp(-limit, limit)
        lateral_place = (cfg.lateral_placement_velocity_gain_s * lateral_speed).clamp(-limit, limit)
        forward = forward + forward_place.unsqueeze(-1) * place_weight
        angles = leg_ik(
            forward + cfg.neutral_foot_x_m,
            cfg.hip_height_m - lift,
            cfg.thigh_length_m,
            cfg.shin_length_m,
            cfg.leg_convention,
            strict=False,
        )
        sway_amplitude = cfg.sway_amplitude_rad * as_tensor(sway_scale, phase)
        hip_roll = lateral_sway(phase, sway_amplitude, cfg.sway_phase_lead_rad)
        # The lesson's pitch feedback is written for an ankle about +y (+ = toes down); the
        # axis sign maps it onto the robot's ankle, so leaning forward always presses the toes down.
        ankle_pitch_feedback = cfg.leg_convention.ankle_axis_sign * (
            cfg.pitch_gain * torso.pitch_rad + cfg.pitch_rate_gain_s * torso.pitch_rate_rads
        )
        # Marvin's ankle roll axis is +x, as the NAO's: the lesson's roll term carries over unchanged.
        ankle_roll = -hip_roll - cfg.roll_gain * torso.roll_rad
        turn = (heading_turn(torso, lane_y_m, cfg) + as_tensor(turn_rad, phase)).clamp(
            -cfg.turn_limit_rad, cfg.turn_limit_rad
        )
        turn = turn.expand_as(phase).unsqueeze(-1)
        hip_yaw = turn * 0.5 * (1.0 - torch.cos(psi)) * stepping
        # −cos ψ is the same-side foot's forward offset over S/2: each arm swings back (+ pitch)
        # as its own foot swings forward, i.e. forward with the opposite leg.
        shoulder = cfg.shoulder_pitch_offset_rad - cfg.arm_swing_amplitude_rad * stride_scale * torch.cos(psi)

        # Hip roll + moves the foot to +y: a lateral placement ``dy`` is ``asin(dy / z)`` at the hip.
        lateral_roll = torch.asin((lateral_place.unsqueeze(-1) * place_weight / cfg.hip_height_m).clamp(-1.0, 1.0))
        targets: dict[str, torch.Tensor] = {}
        for index, side in enumerate(BIPED_SIDES):
            targets[f"{side}_hip_yaw"] = hip_yaw[..., index]
            # Standing (stepping 0) puts both legs in stance: weight ½ each.
            stance_weight = 0.5 * (1.0 - stepping[..., 0] * torch.sin(psi[..., index]))
            # Single support of this leg: the other foot's lift over H (0 in double support).
            single_support = lift_fraction(psi[..., 1 - index], cfg.double_support_margin) * stepping[..., 0]
            compensation = self._stance_compensation(side, single_support)
            targets[f"{side}_hip_roll"] = (
                hip_roll + cfg.hip_roll_gain * torso.roll_rad * stance_weight + lateral_roll[..., index]
            )
            # Hip pitch − = thigh forward of the pelvis: a forward-leaning pelvis over the same leg.
            targets[f"{side}_hip_pitch"] = (
                angles.hip[..., index] - cfg.torso_lean_rad + cfg.hip_pitch_gain * torso.pitch_rad * stance_weight
            )
            targets[f"{side}_knee"] = angles.knee[..., index]
            targets[f"{side}_ankle_pitch"] = angles.ankle[..., index] + ankle_pitch_feedback
            targets[f"{side}_ankle_roll"] = ankle_roll - lateral_roll[..., index]
            targets[f"{side}_shoulder_pitch"] = shoulder[..., index]
            targets[f"{side}_elbow"] = torch.full_like(phase, cfg.elbow_rad)
            for joint, offset in compensation.items():
                targets[f"{side}_{joint}"] = targets[f"{side}_{joint}"] + offset
        return {name: self._clamp(name, targets[name]) for name in self.joint_names}

    def _stance_compensation(self, side: str, single_support: torch.Tensor) -> dict[str, torch.Tensor]:
        """The stance leg's sag offsets for one side (rad); roll and yaw mirror on the right."""
        out: dict[str, torch.Tensor] = {}
        for joint, offset in (self.cfg.stance_compensation_rad or {}).items():
            mirrored = side == "right" and ("roll" in joint or "yaw" in joint)
            out[joint] = (-offset if mirrored else offset) * single_support
        return out

    def joint_targets_tensor(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        """:meth:`joint_targets` stacked in :attr:`joint_names` order, ``(num_envs, 16)`` (rad)."""
        targets = self.joint_targets(*args, **kwargs)
        return torch.stack([targets[name] for name in self.joint_names], dim=-1)

    def _clamp(self, name: str, target: torch.Tensor) -> torch.Tensor:
        limits = self.cfg.joint_limits_rad
        if limits is None or name not in limits:
            return target
        lower, upper = limits[name]
        return target.clamp(lower, upper)
