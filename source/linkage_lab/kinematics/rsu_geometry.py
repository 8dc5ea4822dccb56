"""Geometry of Marvin's 2-RSU + U ankle (docs/design/ankle_linkage.md §1): loading, presets, mirroring."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from linkage_lab.config import ConfigError, deep_merge
from linkage_lab.typed_config import parse, positive

Side = Literal["left", "right"]

#: Motor names in the order every per-motor array uses (rows of ``J``).
MOTOR_NAMES = ("a", "b")
#: Joint names in the order every per-joint array uses (columns of ``J``).
JOINT_NAMES = ("pitch", "roll")

Vector3 = tuple[float, float, float]


@dataclass(frozen=True)
class MotorSpec:
    """Datasheet numbers of one motor model (configs/robots/<robot>.yaml, section ``motors``).

    Attributes:
        name: Model name as the config spells it, e.g. ``"RS03"``.
        peak_nm: Peak torque ``T_peak`` (N·m).
        rated_nm: Rated (continuous) torque ``T_rated`` (N·m).
        speed_rads: No-load speed (rad/s).
    """

    name: str
    peak_nm: float
    rated_nm: float
    speed_rads: float


@dataclass(frozen=True)
class RSUAnkleGeometry:
    """One 2-RSU + U ankle, in the shin frame at the ankle centre (+x forward, +y left, +z up; m).

    Crank tip of motor ``i``: ``C_i(θ) = M_i + r (cos θ, 0, sin θ)``; the rod joins it to the foot
    point ``A_i = R_y(-q_p) R_x(q_r) A0_i``. Rod lengths follow from the neutral pose.

    Attributes:
        preset: Name of the geometry variant (docs/design/ankle_linkage.md §7).
        side: ``"left"`` or ``"right"`` (the mirror image in y).
        crank_radius_m: Crank radius ``r`` of both motors (m).
        rod_end_foot_m: Rod ends on the foot at zero pose, ``(A0_a, A0_b)`` (m).
        motor_centre_m: Motor (crank) centres ``(M_a, M_b)`` (m); the axes are parallel to y.
        neutral_crank_angle_rad: Crank angle ``θ`` of both motors at pitch = roll = 0 (rad).
        pitch_range_rad: Ankle pitch range ``(min, max)`` (rad), + = toes up.
        roll_range_rad: Ankle roll range ``(min, max)`` (rad), right-hand about +x.
        motor: The motor model driving both cranks.
    """

    preset: str
    side: Side
    crank_radius_m: float
    rod_end_foot_m: tuple[Vector3, Vector3]
    motor_centre_m: tuple[Vector3, Vector3]
    neutral_crank_angle_rad: float
    pitch_range_rad: tuple[float, float]
    roll_range_rad: tuple[float, float]
    motor: MotorSpec

    @property
    def rod_length_m(self) -> tuple[float, float]:
        """Rod lengths ``L_i = ‖C_i(θ_neutral) − A0_i‖`` (m)."""
        return tuple(float(v) for v in _rod_lengths(self))  # type: ignore[return-value]

    def crank_tip_m(self, motor: int, crank_angle_rad: float) -> np.ndarray:
        """Crank tip ``C_i(θ) = M_i + r (cos θ, 0, sin θ)`` (m) of motor index ``motor``."""
        centre = np.asarray(self.motor_centre_m[motor], dtype=np.float64)
        return centre + self.crank_radius_m * np.array([math.cos(crank_angle_rad), 0.0, math.sin(crank_angle_rad)])

    def mirrored(self) -> RSUAnkleGeometry:
        """The mirror image in y (left ↔ right): every y negated, roll range negated.

        The pose convention stays the same (+roll = right-hand about +x), so the roll column of
        the mirrored ankle's Jacobian changes sign: ``J_right(p, r) = J_left(p, −r) · diag(1, −1)``.
        """
        lo, hi = self.roll_range_rad
        return dataclasses.replace(
            self,
            side="right" if self.side == "left" else "left",
            rod_end_foot_m=tuple(_flip_y(p) for p in self.rod_end_foot_m),  # type: ignore[arg-type]
            motor_centre_m=tuple(_flip_y(p) for p in self.motor_centre_m),  # type: ignore[arg-type]
            roll_range_rad=(-hi, -lo),
        )

    def with_motor(self, motor: MotorSpec) -> RSUAnkleGeometry:
        """A copy driven by another motor model."""
        return dataclasses.replace(self, motor=motor)


def _flip_y(point: Vector3) -> Vector3:
    return (point[0], -point[1], point[2])


def _rod_lengths(geometry: RSUAnkleGeometry) -> np.ndarray:
    tips = np.stack([geometry.crank_tip_m(i, geometry.neutral_crank_angle_rad) for i in range(2)])
    return np.linalg.norm(tips - np.asarray(geometry.rod_end_foot_m, dtype=np.float64), axis=-1)


def motor_spec(name: str, motors: Mapping[str, Any]) -> MotorSpec:
    """The datasheet numbers of motor model ``name`` (case-insensitive, e.g. ``"rs03"``).

    Args:
        name: The motor model.
        motors: A robot config's ``motors`` section (name → ``peak_nm``, ``rated_nm``, ``speed_rads``).

    Raises:
        ConfigError: No such motor in the robot config; the message lists the choices.
    """
    by_upper = {key.upper(): key for key in motors}
    key = by_upper.get(name.upper())
    if key is None:
        choices = ", ".join(k.lower() for k in motors)
        raise ConfigError(f"unknown motor {name!r}; choices: {choices}")
    data = motors[key]
    return MotorSpec(key, data.peak_nm, data.rated_nm, data.speed_rads)


@dataclass(frozen=True, kw_only=True)
class AnkleLinkageSection:
    """A robot config's ``ankle_linkage`` section merged with one preset (docs/design/ankle_linkage.md §1, §7)."""

    motor: str
    crank_radius_m: float = positive()
    rod_end_foot_m: dict[str, Vector3]
    motor_centre_m: dict[str, Vector3]
    neutral_crank_angle_rad: float
    range_rad: dict[str, tuple[float, float]]


def ankle_geometry(
    section: Mapping[str, Any],
    motors: Mapping[str, Any],
    preset: str | None = None,
    side: Side = "left",
    motor: str | None = None,
    source: str = "robot config",
) -> RSUAnkleGeometry:
    """An ankle from a config's ``ankle_linkage`` section merged with one preset, and its ``motors``.

    Args:
        section: The ``ankle_linkage`` mapping: the base geometry and its ``presets``.
        motors: Motor models by name, each with ``peak_nm``, ``rated_nm`` and ``speed_rads``.
        preset: A preset name; ``None``: the first (the robot's own).
        side: ``"left"`` or ``"right"``.
        motor: Motor model overriding the preset's.
        source: Where the section came from, for error messages.
    """
    presets = section.get("presets") or {}
    if preset is None:
        if not presets:
            raise ConfigError(f"{source}: ankle_linkage.presets: missing")
        preset = next(iter(presets))
    if preset not in presets:
        raise ConfigError(f"unknown ankle preset {preset!r}; choices: {', '.join(presets)}")
    if side not in ("left", "right"):
        raise ConfigError(f"unknown ankle side {side!r}; choices: left, right")
    merged = deep_merge({k: v for k, v in section.items() if k != "presets"}, presets[preset] or {})
    linkage = parse(AnkleLinkageSection, merged, source, f"ankle_linkage (preset {preset})")
    for name, points in (("rod_end_foot_m", linkage.rod_end_foot_m), ("motor_centre_m", linkage.motor_centre_m)):
        if set(points) != set(MOTOR_NAMES):
            raise ConfigError(f"{source}: ankle_linkage.{name}: expected motors {', '.join(MOTOR_NAMES)}")
    if set(linkage.range_rad) != set(JOINT_NAMES):
        raise ConfigError(f"{source}: ankle_linkage.range_rad: expected {', '.join(JOINT_NAMES)}")
    geometry = RSUAnkleGeometry(
        preset=preset,
        side="left",
        crank_radius_m=linkage.crank_radius_m,
        rod_end_foot_m=tuple(linkage.rod_end_foot_m[m] for m in MOTOR_NAMES),  # type: ignore[arg-type]
        motor_centre_m=tuple(linkage.motor_centre_m[m] for m in MOTOR_NAMES),  # type: ignore[arg-type]
        neutral_crank_angle_rad=linkage.neutral_crank_angle_rad,
        pitch_range_rad=linkage.range_rad["pitch"],
        roll_range_rad=linkage.range_rad["roll"],
        motor=motor_spec(motor if motor is not None else linkage.motor, motors=motors),
    )
    return geometry.mirrored() if side == "right" else geometry
