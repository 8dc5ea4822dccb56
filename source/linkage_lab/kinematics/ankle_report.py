"""The ankle design report (docs/design/ankle_linkage.md §7): numbers over the motion range, and its plots."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from linkage_lab.kinematics import ankle_limits as limits
from linkage_lab.kinematics.rsu_ankle import evaluate, raise_if_unreachable
from linkage_lab.kinematics.rsu_geometry import MOTOR_NAMES, RSUAnkleGeometry

#: The sizing demand of §6: pitch and roll torque (N·m), taken with all four sign combinations.
SIZING_DEMAND_NM = (60.0, 30.0)
#: Design rule of §6: transmission at least this everywhere in the range.
MIN_TRANSMISSION = 0.5


@dataclass(frozen=True)
class AnkleSurvey:
    """IK, Jacobian and transmission on a grid over the motion range (both limits included).

    Attributes:
        geometry: The ankle.
        pitch_deg: Grid pitch values, ``(P,)`` (deg).
        roll_deg: Grid roll values, ``(R,)`` (deg).
        motor_pos_deg: Crank angles from neutral, ``(P, R, 2)`` (deg).
        transmission: ``(P, R, 2)``.
        jacobian: ``J``, ``(P, R, 2, 2)``, float64 tensor.
    """

    geometry: RSUAnkleGeometry
    pitch_deg: np.ndarray
    roll_deg: np.ndarray
    motor_pos_deg: np.ndarray
    transmission: np.ndarray
    jacobian: torch.Tensor

    def pose_deg(self, index: tuple[int, int]) -> tuple[float, float]:
        """(pitch, roll) (deg) of grid point ``index``."""
        return float(self.pitch_deg[index[0]]), float(self.roll_deg[index[1]])


def range_grid(low_rad: float, high_rad: float, step_deg: float = 1.0) -> np.ndarray:
    """Evenly spaced values from ``low`` to ``high`` (both included), at most ``step_deg`` apart (deg)."""
    span = math.degrees(high_rad - low_rad)
    return np.linspace(math.degrees(low_rad), math.degrees(high_rad), math.ceil(span / step_deg - 1e-9) + 1)


def survey(geometry: RSUAnkleGeometry, step_deg: float = 1.0) -> AnkleSurvey:
    """Evaluate the ankle on the grid over its range.

    Raises:
        UnreachablePoseError: Part of the range cannot be reached; names the motor and pose.
    """
    pitch = range_grid(*geometry.pitch_range_rad, step_deg)
    roll = range_grid(*geometry.roll_range_rad, step_deg)
    grid = np.stack(np.meshgrid(pitch, roll, indexing="ij"), axis=-1)
    joint_pos = torch.as_tensor(np.radians(grid), dtype=torch.float64)
    state = evaluate(geometry, joint_pos)
    raise_if_unreachable(geometry, joint_pos, state.reachable)
    return AnkleSurvey(
        geometry=geometry,
        pitch_deg=pitch,
        roll_deg=roll,
        motor_pos_deg=np.degrees(state.motor_pos.numpy()),
        transmission=state.transmission.numpy().copy(),
        jacobian=state.jacobian.contiguous(),  # type: ignore[union-attr]
    )


def compute_report(
    geometry: RSUAnkleGeometry, demand_nm: tuple[float, float] = SIZING_DEMAND_NM, step_deg: float = 1.0
) -> dict[str, Any]:
    """The §7 numbers of ``geometry`` as a JSON-ready dict (keys as ``linkage-lab ankle report --json``).

    Args:
        geometry: The ankle, with its motor.
        demand_nm: Rod-force sizing demand (pitch, roll) (N·m), taken with all four sign combinations.
        step_deg: Grid step over the range (deg).
    """
    data = survey(geometry, step_deg)
    motor = geometry.motor
    worst_t = np.unravel_index(np.argmin(data.transmission), data.transmission.shape)
    jac_neutral = limits.neutral_jacobian(geometry)
    ratio_p, ratio_r = limits.neutral_ratios(geometry)
    axis = limits.axis_capacity(data.jacobian, 1.0).amin(dim=(0, 1))
    pure = limits.pure_axis_capacity(data.jacobian, 1.0).amin(dim=(0, 1))
    force = _largest_rod_force(data, demand_nm)
    return {
        "preset": geometry.preset,
        "motor": {"name": motor.name, "peak_nm": motor.peak_nm, "rated_nm": motor.rated_nm},
        "rod_length_mm": {
            name: 1000.0 * length for name, length in zip(MOTOR_NAMES, geometry.rod_length_m, strict=True)
        },
        "crank_swing_deg": {"min": float(data.motor_pos_deg.min()), "max": float(data.motor_pos_deg.max())},
        "worst_transmission": {
            "value": float(data.transmission[worst_t]),
            "motor": MOTOR_NAMES[worst_t[2]],
            **_pose_fields(data, worst_t[:2]),
        },
        "transmission_rule_ok": bool(data.transmission.min() >= MIN_TRANSMISSION),
        "neutral_jacobian": jac_neutral.tolist(),
        "neutral_ratio": {"pitch": ratio_p, "roll": ratio_r},
        "worst_axis_capacity_nm": _capacities(axis, motor.peak_nm, motor.rated_nm),
        "worst_pure_capacity_nm": _capacities(pure, motor.peak_nm, motor.rated_nm),
        "max_rod_force": force,
    }


def _pose_fields(data: AnkleSurvey, index: tuple[int, ...]) -> dict[str, float]:
    pitch, roll = data.pose_deg((int(index[0]), int(index[1])))
    return {"pitch_deg": pitch, "roll_deg": roll}


def _capacities(per_newton_metre: torch.Tensor, peak_nm: float, rated_nm: float) -> dict[str, float]:
    pitch, roll = float(per_newton_metre[0]), float(per_newton_metre[1])
    return {
        "pitch_peak": pitch * peak_nm,
        "pitch_rated": pitch * rated_nm,
        "roll_peak": roll * peak_nm,
        "roll_rated": roll * rated_nm,
    }


def _largest_rod_force(data: AnkleSurvey, demand_nm: tuple[float, float]) -> dict[str, Any]:
    signs = torch.tensor([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]], dtype=torch.float64)
    demands = signs * torch.tensor(demand_nm, dtype=torch.float64)  # (4, 2)
    transmission = torch.as_tensor(data.transmission)
    forces = limits.rod_forces(
        data.jacobian.unsqueeze(2), transmission.unsqueeze(2), demands, data.geometry.crank_radius_m
    )  # (P, R, 4, 2)
    index = np.unravel_index(int(forces.argmax()), tuple(forces.shape))
    return {
        "value_n": float(forces[index]),
        "motor": MOTOR_NAMES[int(index[3])],
        **_pose_fields(data, index[:2]),
        "demand_nm": demands[int(index[2])].tolist(),
    }


class PoseOutOfRangeWarning(UserWarning):
    """A design-study pose outside the ankle's joint range: the hardware cannot take it."""


def pose_range_error(geometry: RSUAnkleGeometry, pose_deg: tuple[float, float]) -> str | None:
    """Why ``pose_deg`` (pitch, roll) lies outside the joint range of ``geometry``, or ``None`` if inside.

    The limits themselves are inside (to 1e-9 rad).
    """
    outside = []
    for axis, value, (low, high) in (
        ("pitch", pose_deg[0], geometry.pitch_range_rad),
        ("roll", pose_deg[1], geometry.roll_range_rad),
    ):
        if not math.isfinite(value) or not low - 1e-9 <= math.radians(value) <= high + 1e-9:
            outside.append(f"{axis} {value:+.1f}° not in {math.degrees(low):+.1f}° … {math.degrees(high):+.1f}°")
    if not outside:
        return None
    return f"pose outside the joint range of ankle preset {geometry.preset}: {'; '.join(outside)}"


def diamond_at_pose(
    geometry: RSUAnkleGeometry, pose_deg: tuple[float, float], demand_nm: tuple[float, float]
) -> dict[str, Any]:
    """The feasible torque set at one pose against the simulator's box and a demand.

    A pose outside the joint range (a design study may ask for one) still gets its diamond, but
    with a :class:`PoseOutOfRangeWarning`, ``in_joint_range`` false and ``demand_feasible`` false:
    the hardware cannot take that pose at all.

    Returns:
        ``pose_deg``; ``in_joint_range``; ``vertices_peak_nm`` and ``vertices_rated_nm`` (4 × 2, in
        order around the diamond); ``box_peak_nm`` (pitch, roll half-widths); ``demand_nm``;
        ``demand_motor_nm`` (the motor torques it needs); ``demand_feasible`` (within peak and in the
        joint range) and ``demand_in_box``.

    Raises:
        UnreachablePoseError: The linkage cannot reach the pose at all.
    """
    range_error = pose_range_error(geometry, pose_deg)
    if range_error is not None:
        warnings.warn(f"{range_error}; the hardware cannot take it (feasible: false)", PoseOutOfRangeWarning, 2)
    joint_pos = torch.tensor([math.radians(v) for v in pose_deg], dtype=torch.float64)
    state = evaluate(geometry, joint_pos)
    raise_if_unreachable(geometry, joint_pos, state.reachable)
    jac = state.jacobian
    box = limits.box_limits(geometry)
    demand = torch.tensor(demand_nm, dtype=torch.float64)
    return {
        "pose_deg": [float(v) for v in pose_deg],
        "in_joint_range": range_error is None,
        "vertices_peak_nm": limits.torque_diamond(jac, geometry.motor.peak_nm).tolist(),
        "vertices_rated_nm": limits.torque_diamond(jac, geometry.motor.rated_nm).tolist(),
        "box_peak_nm": [box.pitch_peak_nm, box.roll_peak_nm],
        "demand_nm": [float(v) for v in demand_nm],
        "demand_motor_nm": limits.motor_torque(jac, demand).tolist(),
        "demand_feasible": range_error is None and bool(limits.in_diamond(jac, demand, geometry.motor.peak_nm)),
        "demand_in_box": abs(demand_nm[0]) <= box.pitch_peak_nm and abs(demand_nm[1]) <= box.roll_peak_nm,
    }


def format_report(report: dict[str, Any], diamond: dict[str, Any] | None = None) -> str:
    """The report as text for a person (a table), optionally with the diamond at one pose."""
    motor, swing = report["motor"], report["crank_swing_deg"]
    worst, force = report["worst_transmission"], report["max_rod_force"]
    (j_ap, j_ar), (j_bp, j_br) = report["neutral_jacobian"]
    axis, pure = report["worst_axis_capacity_nm"], report["worst_pure_capacity_nm"]
    rule = "holds" if report["transmission_rule_ok"] else "VIOLATED"
    rows = [
        ("motor", f"{motor['name']}  (peak {motor['peak_nm']:g} N·m, rated {motor['rated_nm']:g} N·m)"),
        ("rod length a / b", f"{report['rod_length_mm']['a']:.1f} / {report['rod_length_mm']['b']:.1f} mm"),
        ("crank swing (θ − π)", f"{swing['min']:+.1f}° … {swing['max']:+.1f}°"),
        ("worst transmission", f"{worst['value']:.3f}  motor {worst['motor']} at {_pose(worst)}"),
        (f"transmission ≥ {MIN_TRANSMISSION}", rule),
        ("J at neutral", f"[[{j_ap:+.3f}, {j_ar:+.3f}], [{j_bp:+.3f}, {j_br:+.3f}]]"),
        (
            "neutral ratio",
            f"pitch {report['neutral_ratio']['pitch']:.3f}, roll {report['neutral_ratio']['roll']:.3f}",
        ),
    ]
    lines = [f"Ankle report: preset {report['preset']}", ""]
    width = max(len(name) for name, _ in rows) + 2
    lines += [f"  {name:<{width}}{value}" for name, value in rows]
    lines += ["", "  worst-pose capacity (N·m)   pitch peak  pitch rated  roll peak  roll rated"]
    for label, cap in (("axis (diamond extent)", axis), ("pure axis (other = 0)", pure)):
        values = (cap["pitch_peak"], cap["pitch_rated"], cap["roll_peak"], cap["roll_rated"])
        lines.append(f"  {label:<27}" + "".join(f"{v:>11.1f}" for v in values))
    demand = force["demand_nm"]
    lines += [
        "",
        f"  largest rod force  {force['value_n']:.0f} N  rod {force['motor']} at {_pose(force)}"
        f"  for demand ({demand[0]:+g}, {demand[1]:+g}) N·m",
    ]
    if diamond is not None:
        lines += ["", *_format_diamond(diamond)]
    return "\n".join(lines)


def _pose(fields: dict[str, Any]) -> str:
    return f"pitch {fields['pitch_deg']:+.1f}°, roll {fields['roll_deg']:+.1f}°"


def _format_diamond(diamond: dict[str, Any]) -> list[str]:
    pitch, roll = diamond["pose_deg"]
    demand, motor = diamond["demand_nm"], diamond["demand_motor_nm"]
    vertices = ", ".join(f"({p:+.1f}, {r:+.1f})" for p, r in diamond["vertices_peak_nm"])
    verdict = "feasible" if diamond["demand_feasible"] else "NOT feasible"
    if not diamond.get("in_joint_range", True):
        verdict = "NOT feasible (pose outside the joint range)"
    box_p, box_r = diamond["box_peak_nm"]
    box = "inside" if diamond["demand_in_box"] else "outside"
    return [
        f"  torque diamond at pitch {pitch:+.1f}°, roll {roll:+.1f}° (peak): {vertices} N·m",
        f"  box (simulator) ±{box_p:.1f} pitch, ±{box_r:.1f} roll N·m",
        f"  demand ({demand[0]:+g}, {demand[1]:+g}) N·m needs motors ({motor[0]:+.1f}, {motor[1]:+.1f}) N·m: "
        f"{verdict} on the hardware, {box} the box",
    ]
