"""Configuration of the biped's scripted walk: the NAO reference and the gait parameters with their
valid ranges (pure Python; the gait itself is :mod:`.biped`; a robot's own settings live with it)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from linkage_lab.kinematics.leg_ik import LegConvention


@dataclass(frozen=True)
class NaoReference:
    """The gait lesson's values for a 0.58 m NAO (docs/design/gait.md §3), the starting point for scaling.

    Attributes:
        leg_length_m: Hip-to-ankle length, thigh 0.100 + tibia 0.1029 (m).
        hip_height_m: Walking hip height above the ankle ``z`` (m).
        step_length_m: Step length ``S`` (m).
        step_height_m: Step height ``H`` (m).
        frequency_hz: Gait frequency ``f`` (cycles/s).
        double_support_margin: ``c`` (unitless).
        pitch_gain: ``K_θ`` (rad of ankle per rad of torso pitch).
        pitch_rate_gain_s: ``K_θ̇`` (rad of ankle per rad/s of torso pitch rate, i.e. s).
        roll_gain: ``K_ϕ`` (rad of ankle per rad of torso roll).
    """

    leg_length_m: float = 0.2029
    hip_height_m: float = 0.17
    step_length_m: float = 0.10
    step_height_m: float = 0.038
    frequency_hz: float = 2.2
    double_support_margin: float = 0.27
    pitch_gain: float = 0.05
    pitch_rate_gain_s: float = 0.08
    roll_gain: float = 0.38


@dataclass
class BipedGaitCfg:
    """Parameters of the biped gait. Build Marvin's with :func:`marvin_gait_cfg`.

    Sign conventions are those of Marvin's joints (docs/design/robots.md §2.1). The sensor-side signs are
    REP-103: torso roll + = leaning right, pitch + = leaning forward, yaw + = heading left.
    """

    thigh_length_m: float
    """Thigh, hip pitch → knee (m)."""
    shin_length_m: float
    """Shin, knee → ankle (m)."""
    leg_convention: LegConvention
    """Joint axis signs and knee direction of the sagittal leg joints."""
    hip_height_m: float
    """Hip height above the ankle while walking, ``z`` (m); below the leg length (bent knees)."""
    step_length_m: float
    """Step length ``S`` (m); ideal speed ``2 S f``."""
    step_height_m: float
    """Step height ``H`` (m)."""
    frequency_hz: float
    """Gait frequency ``f`` (cycles/s)."""
    double_support_margin: float = 0.27
    """``c ∈ [0, 1)``: the foot lifts only while ``sin ψ > c`` (unitless)."""
    neutral_foot_x_m: float = 0.0
    """Forward offset of the foot's mid-stride point from the hip (m)."""
    torso_lean_rad: float = 0.0
    """Forward lean of the torso (rad, + = leaning forward): added to both hip pitches with the legs
    unchanged, it moves the torso's centre of mass forward without moving the feet."""
    step_ramp_time_s: float = 3.0
    """Step length and arm swing rise from 0 to full over this time after the start (s)."""
    sway_amplitude_rad: float = 0.07
    """Lateral sway ``A``: hip roll ``θ_hr = −A sin(φ + δ)`` (rad). Initial guess, not from the lesson."""
    sway_phase_lead_rad: float = 0.5
    """Sway phase lead ``δ`` (rad). Initial guess, not from the lesson."""
    sway_ramp_time_s: float = 1.0
    """The sway amplitude rises from 0 to ``A`` over this time after the start (s)."""
    pitch_gain: float = 0.05
    """``K_θ``: ankle pitch correction per torso pitch (rad/rad); acts toes-down when leaning forward."""
    pitch_rate_gain_s: float = 0.08
    """``K_θ̇``: ankle pitch correction per torso pitch rate (rad per rad/s = s)."""
    roll_gain: float = 0.38
    """``K_ϕ``: ankle roll correction ``Δankle_roll = −K_ϕ ϕ`` (rad/rad)."""
    hip_pitch_gain: float = 0.0
    """Stance-hip torso pitch feedback ``Δhip_pitch = K_hθ θ w`` (rad/rad), ``w = ½(1 − sin ψ)`` the
    leg's stance weight: the stance hip turns the pelvis back upright (0 = docs/design/gait.md's ankle-only loop)."""
    stance_compensation_rad: dict[str, float] | None = None
    """Feed-forward sag compensation of the stance leg by leg joint (``hip_roll``, ``hip_pitch``, ``knee``,
    ``ankle_pitch``, ``ankle_roll``; left-leg signs, roll mirrored for the right), in rad, each times
    the other foot's lift fraction ``max(0, sin ψ_other − c) / (1 − c)``: only in single support.
    There the stance joints carry the whole robot and their PD sags by ``τ / K_p``; the pelvis drops
    toward the swing side and the swing foot drags. The offsets pre-load that sag;
    :func:`~linkage_lab.gait.compensation.stance_sag_compensation` gives its static value."""
    foot_placement_velocity_gain_s: float = 0.0
    """Sagittal foot placement: each swing foot lands ``K_v (v − 2 S f)`` further forward (m per m/s = s),
    ``v`` the torso's forward speed (heading frame); a robot running ahead of its stride catches itself
    with a longer step (Raibert). The offset follows ``½(1 − cos ψ)``: 0 at lift-off, full at touch-down,
    and it is walked back off during stance."""
    foot_placement_pitch_gain_m: float = 0.0
    """Sagittal foot placement per torso pitch (m/rad), added to the velocity term."""
    lateral_placement_velocity_gain_s: float = 0.0
    """Lateral foot placement ``K_vy v_y`` (m per m/s = s), ``v_y`` the torso's sideways speed (+ left)."""
    foot_placement_limit_m: float = 0.12
    """Saturation of each foot placement offset (m)."""
    hip_roll_gain: float = 0.0
    """Stance-hip torso roll feedback ``Δhip_roll = K_hϕ ϕ w`` (rad/rad), as ``hip_pitch_gain``."""
    lane_gain_rad_per_m: float = 0.5
    """``K_y``: heading reference per metre of lateral error, ``ψ_ref = sat(−K_y (y − y_lane))`` (rad/m)."""
    heading_ref_limit_rad: float = 0.3
    """Saturation of ``ψ_ref`` (rad)."""
    heading_gain: float = 0.3
    """``K_ψ``: turn per heading error, ``u = sat(K_ψ (ψ_ref − ψ))`` (rad/rad)."""
    turn_limit_rad: float = 0.15
    """Saturation of the per-step hip-yaw turn ``u`` (rad)."""
    arm_swing_amplitude_rad: float = 0.25
    """Shoulder pitch swing at full stride, in phase with the same-side foot's backward motion (rad)."""
    shoulder_pitch_offset_rad: float = 0.0
    """Mean shoulder pitch (rad; − = arm forward)."""
    elbow_rad: float = 0.3
    """Constant elbow bend (rad)."""
    joint_limits_rad: dict[str, tuple[float, float]] | None = None
    """Per-joint ``(lower, upper)`` clamp of the targets (rad), by full joint name; None: no clamp."""

    def __post_init__(self) -> None:
        """Reject parameters outside their meaning (a negative step length, a margin ≥ 1, a NaN).

        Raises:
            ValueError: Naming the parameter, its value and its valid range.
        """
        for name, kind in _GAIT_RANGES.items():
            value = getattr(self, name)
            if not _is_real(value) or not math.isfinite(value):
                raise ValueError(f"gait parameter {name} must be a finite number, got {value!r}")
            low_open, low, high, high_open = kind
            if (low is not None and (value <= low if low_open else value < low)) or (
                high is not None and (value >= high if high_open else value > high)
            ):
                raise ValueError(f"gait parameter {name} = {value!r} is outside {_range_text(kind)}")
        for name, value in (self.stance_compensation_rad or {}).items():
            if not _is_real(value) or not math.isfinite(value):
                raise ValueError(f"gait parameter stance_compensation_rad[{name!r}] must be a finite number (rad)")


#: Valid range of each numeric :class:`BipedGaitCfg` field: ``(low open, low, high, high open)``;
#: ``None`` is unbounded. Gains may have either sign (the sprint gait's roll gain is negative).
_POSITIVE = (True, 0.0, None, False)
_NON_NEGATIVE = (False, 0.0, None, False)
_ANY = (False, None, None, False)
_GAIT_RANGES: dict[str, tuple[bool, float | None, float | None, bool]] = {
    "thigh_length_m": _POSITIVE,
    "shin_length_m": _POSITIVE,
    "hip_height_m": _POSITIVE,
    "step_length_m": _NON_NEGATIVE,
    "step_height_m": _NON_NEGATIVE,
    "frequency_hz": _POSITIVE,
    "double_support_margin": (False, 0.0, 1.0, True),
    "neutral_foot_x_m": _ANY,
    "torso_lean_rad": _ANY,
    "step_ramp_time_s": _NON_NEGATIVE,
    "sway_amplitude_rad": _NON_NEGATIVE,
    "sway_phase_lead_rad": _ANY,
    "sway_ramp_time_s": _NON_NEGATIVE,
    "pitch_gain": _ANY,
    "pitch_rate_gain_s": _ANY,
    "roll_gain": _ANY,
    "hip_pitch_gain": _ANY,
    "foot_placement_velocity_gain_s": _ANY,
    "foot_placement_pitch_gain_m": _ANY,
    "lateral_placement_velocity_gain_s": _ANY,
    "foot_placement_limit_m": _NON_NEGATIVE,
    "hip_roll_gain": _ANY,
    "lane_gain_rad_per_m": _ANY,
    "heading_ref_limit_rad": _NON_NEGATIVE,
    "heading_gain": _ANY,
    "turn_limit_rad": _NON_NEGATIVE,
    "arm_swing_amplitude_rad": _NON_NEGATIVE,
    "shoulder_pitch_offset_rad": _ANY,
    "elbow_rad": _ANY,
}


def _is_real(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _range_text(kind: tuple[bool, float | None, float | None, bool]) -> str:
    low_open, low, high, high_open = kind
    left = "(-inf" if low is None else f"{'(' if low_open else '['}{low:g}"
    right = "inf)" if high is None else f"{high:g}{')' if high_open else ']'}"
    return f"{left}, {right}"


def gait_parameter_names() -> list[str]:
    """The :class:`BipedGaitCfg` fields a user may override (``sprint --gait``), sorted."""
    return sorted(f.name for f in fields(BipedGaitCfg) if f.name != "leg_convention")


def check_gait_overrides(overrides: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming the unknown keys of ``overrides`` and listing the valid ones."""
    unknown = sorted(set(overrides) - set(gait_parameter_names()))
    if unknown:
        raise ValueError(
            f"unknown gait parameter(s) {', '.join(map(repr, unknown))}; valid: {', '.join(gait_parameter_names())}"
        )
