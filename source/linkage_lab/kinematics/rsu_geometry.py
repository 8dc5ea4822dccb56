"""Geometry of Marvin's 2-RSU + U ankle (ankle_linkage.md §1): loading, presets, mirroring."""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from linkage_lab.config import ConfigError, deep_merge, load_robot_config

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
        preset: Name of the geometry variant (ankle_linkage.md §7).
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


def available_presets(robot: str = "marvin") -> list[str]:
    """Names of the ankle geometry presets in ``configs/robots/<robot>.yaml`` (§7)."""
    return list(load_robot_config(robot)["ankle_linkage"].get("presets", {}))


def available_motors(robot: str = "marvin") -> list[str]:
    """Motor model names of the robot config (section ``motors``)."""
    return list(load_robot_config(robot)["motors"])


def motor_spec(name: str, robot: str = "marvin") -> MotorSpec:
    """The datasheet numbers of motor model ``name`` (case-insensitive, e.g. ``"rs03"``).

    Raises:
        ConfigError: No such motor in the robot config; the message lists the choices.
    """
    motors = load_robot_config(robot)["motors"]
    by_upper = {key.upper(): key for key in motors}
    key = by_upper.get(name.upper())
    if key is None:
        choices = ", ".join(k.lower() for k in motors)
        raise ConfigError(f"unknown motor {name!r}; choices: {choices}")
    data = motors[key]
    return MotorSpec(key, float(data["peak_nm"]), float(data["rated_nm"]), float(data["speed_rads"]))


def load_ankle_geometry(
    preset: str = "marvin", side: Side = "left", motor: str | None = None, robot: str = "marvin"
) -> RSUAnkleGeometry:
    """Build an ankle from the robot config: section ``ankle_linkage`` merged with one preset.

    Args:
        preset: A key of ``ankle_linkage.presets`` (e.g. ``"marvin"``, ``"narrow_rods"``).
        side: ``"left"`` (the config's geometry) or ``"right"`` (its mirror in y).
        motor: Motor model overriding the preset's (case-insensitive); ``None`` keeps the preset's.
        robot: Robot config name.

    Returns:
        The geometry.

    Raises:
        ConfigError: Unknown preset, side or motor; the message lists the choices.
    """
    section: dict[str, Any] = load_robot_config(robot)["ankle_linkage"]
    presets = section.get("presets", {})
    if preset not in presets:
        raise ConfigError(f"unknown ankle preset {preset!r}; choices: {', '.join(presets)}")
    if side not in ("left", "right"):
        raise ConfigError(f"unknown ankle side {side!r}; choices: left, right")
    merged = deep_merge({k: v for k, v in section.items() if k != "presets"}, presets[preset] or {})
    ranges = merged["range_rad"]
    geometry = RSUAnkleGeometry(
        preset=preset,
        side="left",
        crank_radius_m=float(merged["crank_radius_m"]),
        rod_end_foot_m=tuple(_vector(merged["rod_end_foot_m"][m]) for m in MOTOR_NAMES),  # type: ignore[arg-type]
        motor_centre_m=tuple(_vector(merged["motor_centre_m"][m]) for m in MOTOR_NAMES),  # type: ignore[arg-type]
        neutral_crank_angle_rad=float(merged["neutral_crank_angle_rad"]),
        pitch_range_rad=(float(ranges["pitch"][0]), float(ranges["pitch"][1])),
        roll_range_rad=(float(ranges["roll"][0]), float(ranges["roll"][1])),
        motor=motor_spec(motor if motor is not None else merged["motor"], robot),
    )
    return geometry.mirrored() if side == "right" else geometry


def _vector(values: Any) -> Vector3:
    if len(values) != 3:
        raise ConfigError(f"expected a 3-vector, got {values!r}")
    return (float(values[0]), float(values[1]), float(values[2]))


def loop_coefficients(geometry: RSUAnkleGeometry, dtype: torch.dtype, device: torch.device | str) -> torch.Tensor:
    """Constant matrix ``W`` (9 × 18) of the loop-closure equations, cached per dtype and device.

    With the pose basis ``b(q) = (c_p, s_p, 1) ⊗ (c_r, s_r, 1)`` (9 terms, ``c_p = cos q_p`` ...),
    ``b @ W`` gives, per motor and for the value and both partial derivatives in q, the terms of

        G_i(φ, q) = P_i(q) cos φ + Q_i(q) sin φ − K_i(q) = 0,     φ = θ − θ_neutral,

    the rod-length constraint ``‖M + r u(θ) − A(q)‖² = L²`` rewritten around the neutral angle,
    scaled by ``1 / (2 r L_i)`` so that ``|∂G_i/∂φ|`` is the transmission of motor ``i`` (§6).
    Everything is linear in ``b`` because ``‖A‖ = ‖A0‖`` under rotation. The columns are
    ordered ``(value, ∂/∂q_p, ∂/∂q_r) × (P, Q, K) × (a, b)``.
    """
    return _loop_coefficients_cached(geometry, dtype, str(torch.device(device)))


@functools.lru_cache(maxsize=64)
def _loop_coefficients_cached(geometry: RSUAnkleGeometry, dtype: torch.dtype, device: str) -> torch.Tensor:
    r = geometry.crank_radius_m
    lengths = _rod_lengths(geometry)
    cos0, sin0 = math.cos(geometry.neutral_crank_angle_rad), math.sin(geometry.neutral_crank_angle_rad)
    values = np.zeros((9, 3, 2))
    for i, ((x0, y0, z0), centre) in enumerate(zip(geometry.rod_end_foot_m, geometry.motor_centre_m, strict=True)):
        # Foot point A = R_y(-q_p) R_x(q_r) A0 in the basis b (index 3 * pitch term + roll term).
        foot = np.zeros((9, 3))
        foot[2, 0], foot[4, 0], foot[3, 0] = x0, -y0, -z0  # A_x = x0 c_p - y0 s_p s_r - z0 s_p c_r
        foot[6, 1], foot[7, 1] = y0, -z0  # A_y = y0 c_r - z0 s_r
        foot[5, 2], foot[1, 2], foot[0, 2] = x0, y0, z0  # A_z = x0 s_p + y0 c_p s_r + z0 c_p c_r
        centre = np.asarray(centre)
        offset = foot.copy()
        offset[8] -= centre  # d = A - M
        # P cos θ + Q sin θ = K with P = -2 r d_x, Q = -2 r d_z, K = L² - ‖d‖² - r² and
        # ‖d‖² = ‖A0‖² - 2 A·M + ‖M‖².
        p_theta, q_theta = -2.0 * r * offset[:, 0], -2.0 * r * offset[:, 2]
        k = 2.0 * foot @ centre
        k[8] += lengths[i] ** 2 - r**2 - float(np.dot((x0, y0, z0), (x0, y0, z0))) - float(centre @ centre)
        # Substitute θ = θ0 + φ.
        p_phi = p_theta * cos0 + q_theta * sin0
        q_phi = q_theta * cos0 - p_theta * sin0
        values[:, :, i] = np.stack([p_phi, q_phi, k], axis=-1) / (2.0 * r * lengths[i])
    values = values.reshape(9, 6)
    # d/dq of (c, s, 1) is (-s, c, 0) = T (c, s, 1); on b that is kron(T, I) (pitch) or kron(I, T) (roll).
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    d_pitch = np.kron(turn, np.eye(3)).T @ values
    d_roll = np.kron(np.eye(3), turn).T @ values
    matrix = np.concatenate([values, d_pitch, d_roll], axis=1)
    return torch.as_tensor(matrix, dtype=dtype, device=device)


def branch_signs(geometry: RSUAnkleGeometry) -> tuple[float, float]:
    """Sign ``s_i`` of the assembled branch, ``φ = atan2(Q, P) + s_i arccos(K / √(P² + Q²))``.

    The linkage is assembled at ``φ = 0`` (θ = θ_neutral) at pitch = roll = 0; this is the sign
    whose solution is 0 there.

    Raises:
        ValueError: The neutral pose sits on the singularity (the two branches coincide).
    """
    terms = loop_coefficients(geometry, torch.float64, "cpu")[8, :6].reshape(3, 2).numpy()
    signs = []
    for i, name in enumerate(MOTOR_NAMES):
        p, q, k = terms[:, i]
        base, spread = math.atan2(q, p), math.acos(max(-1.0, min(1.0, k / math.hypot(p, q))))
        if spread < 1e-6 or spread > math.pi - 1e-6:
            raise ValueError(f"ankle {geometry.preset}: motor {name} is singular at the neutral pose")
        err_plus = abs(math.remainder(base + spread, 2 * math.pi))
        err_minus = abs(math.remainder(base - spread, 2 * math.pi))
        signs.append(1.0 if err_plus < err_minus else -1.0)
    return signs[0], signs[1]
