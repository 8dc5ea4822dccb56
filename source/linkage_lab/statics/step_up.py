"""The stair check of docs/design/robots.md §2.5: the stance ankle's static torque on a step against its capacity."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import torch

from linkage_lab.description.model import RobotModel
from linkage_lab.kinematics import ankle_limits, ankle_report
from linkage_lab.kinematics.leg_ik import LEG_AXES
from linkage_lab.kinematics.rsu_ankle import jacobian as ankle_jacobian
from linkage_lab.kinematics.rsu_geometry import MOTOR_NAMES, RSUAnkleGeometry
from linkage_lab.statics.step_up_pose import StepUpPose, StepUpPoseCfg, solve_step_up_pose
from linkage_lab.statics.tree import STANDARD_GRAVITY, KinematicTree

#: The boolean verdicts of the check, in the order the table prints them.
FIT_KEYS = ("fits_worst_axis_rated", "fits_worst_pure_rated", "fits_diamond_rated", "fits_diamond_peak")


def step_up_check(
    model: RobotModel,
    ankles: Mapping[str, RSUAnkleGeometry],
    cfg: StepUpPoseCfg | None = None,
    gravity_mps2: float = STANDARD_GRAVITY,
) -> dict[str, Any]:
    """A biped with RSU ankles standing on one foot on a step: ankle demand, capacities, motor torques.

    The result is JSON-ready.

    The stance foot carries the robot, so each ankle joint holds the weight of every link above
    it (all but the stance foot and its ankle cross) about its own axis:
    ``τ_j = u_j · Σ (c_i − o) × m_i (0, 0, −g)`` (``KinematicTree.grounded_joint_torque``). The
    whole-body COM sets where that weight sits (balance); the foot's own 0.7 kg rests on the
    ground and asks nothing of the ankle. The demand ``τ = (τ_pitch, τ_roll)`` is compared with

    * the worst-pose axis and pure-axis capacities over the ankle's range at the motor's rated
      torque (docs/design/ankle_linkage.md §5, :func:`ankle_report.compute_report`), axis by axis;
    * the diamond at the stance ankle's pose: motor torques ``τ_m = J⁻ᵀ τ`` through the linkage
      Jacobian there, each against the rated and the peak motor torque.

    Args:
        model: The biped's serial description (its masses and joints).
        ankles: Its ankle linkages by side (``"left"``, ``"right"``): any geometry preset; the masses stay
            the model's.
        cfg: The pose parameters; ``None`` takes the defaults (an 18 cm step).
        gravity_mps2: Gravitational acceleration (m/s²).

    Raises:
        StepUpPoseError: The pose cannot be built.
        UnreachablePoseError: The linkage cannot reach the stance ankle's pose.
    """
    tree = KinematicTree(model)
    pose = solve_step_up_pose(tree, cfg)
    side = pose.cfg.stance_side
    stance_torque = {name: tree.grounded_joint_torque(pose.frames, f"{side}_{name}", gravity_mps2) for name in LEG_AXES}
    demand = torch.tensor([stance_torque["ankle_pitch"], stance_torque["ankle_roll"]], dtype=torch.float64)
    ankle_pose = torch.tensor(
        [pose.joint_pos[f"{side}_ankle_pitch"], pose.joint_pos[f"{side}_ankle_roll"]], dtype=torch.float64
    )

    geometry = ankles[side]
    motor = geometry.motor
    report = ankle_report.compute_report(geometry)
    axis, pure = report["worst_axis_capacity_nm"], report["worst_pure_capacity_nm"]
    jac = ankle_jacobian(geometry, ankle_pose)
    motor_torque = ankle_limits.motor_torque(jac, demand)
    pitch, roll = (float(v) for v in demand)
    return {
        "stance_side": side,
        "preset": geometry.preset,
        "pose": _pose_fields(pose, tree),
        "com": _com_fields(pose, tree),
        "supported_mass_kg": tree.total_mass_kg
        - sum(tree.mass_kg[name] for name in tree.subtree_links(f"{side}_ankle_pitch")),
        "demand_nm": {"pitch": pitch, "roll": roll},
        "stance_joint_torques_nm": stance_torque,
        "motor": {"name": motor.name, "rated_nm": motor.rated_nm, "peak_nm": motor.peak_nm},
        "worst_axis_capacity_nm": axis,
        "worst_pure_capacity_nm": pure,
        "jacobian": jac.tolist(),
        "motor_torque_nm": dict(zip(MOTOR_NAMES, motor_torque.tolist(), strict=True)),
        "fits_worst_axis_rated": abs(pitch) <= axis["pitch_rated"] and abs(roll) <= axis["roll_rated"],
        "fits_worst_pure_rated": abs(pitch) <= pure["pitch_rated"] and abs(roll) <= pure["roll_rated"],
        "fits_diamond_rated": bool(ankle_limits.in_diamond(jac, demand, motor.rated_nm)),
        "fits_diamond_peak": bool(ankle_limits.in_diamond(jac, demand, motor.peak_nm)),
    }


def _pose_fields(pose: StepUpPose, tree: KinematicTree) -> dict[str, Any]:
    side = pose.cfg.stance_side
    params = dataclasses.asdict(pose.cfg)
    params["stance_width_m"] = abs(float(pose.swing_ankle_m[1]))
    params["max_stance_ankle_pitch_rad"] = (
        tree.joint_by_name[f"{side}_ankle_pitch"].limit_rad[1]
        if pose.cfg.max_stance_ankle_pitch_rad is None
        else pose.cfg.max_stance_ankle_pitch_rad
    )
    return {
        "params": params,
        "pelvis_position_m": pose.pelvis_position_m.tolist(),
        "torso_lean_deg": math.degrees(pose.torso_lean_rad),
        "stance_ankle_deg": {
            "pitch": math.degrees(pose.joint_pos[f"{side}_ankle_pitch"]),
            "roll": math.degrees(pose.joint_pos[f"{side}_ankle_roll"]),
        },
        "stance_ankle_at_pitch_cap": pose.ankle_pitch_limited,
        "swing_ankle_m": pose.swing_ankle_m.tolist(),
        "joint_pos_rad": dict(pose.joint_pos),
        "limit_violations": list(pose.limit_violations),
    }


def _com_fields(pose: StepUpPose, tree: KinematicTree) -> dict[str, Any]:
    inward = -1.0 if pose.cfg.stance_side == "left" else 1.0
    (x_lo, x_hi), (y_lo, y_hi) = pose.sole_m
    x, y = float(pose.com_m[0]), float(pose.com_m[1])
    return {
        "mass_kg": tree.total_mass_kg,
        "position_m": pose.com_m.tolist(),
        "ahead_of_ankle_m": x,
        "inboard_of_ankle_m": inward * y,
        "natural_ahead_of_ankle_m": float(pose.natural_com_m[0]),
        "natural_inboard_of_ankle_m": inward * float(pose.natural_com_m[1]),
        # Rounded so a COM solved onto an edge reads 0, not -1e-13.
        "margin_to_sole_edge_m": round(min(x - x_lo, x_hi - x, y - y_lo, y_hi - y), 9) + 0.0,
    }


def format_step_up(result: dict[str, Any]) -> str:
    """The check as a table for a person."""
    pose, com, params = result["pose"], result["com"], result["pose"]["params"]
    demand, motor, torque = result["demand_nm"], result["motor"], result["motor_torque_nm"]
    ankle = pose["stance_ankle_deg"]
    pelvis = pose["pelvis_position_m"]
    cap = " (at its cap: torso leans)" if pose["stance_ankle_at_pitch_cap"] else ""
    lines = [
        f"Marvin step-up: {result['stance_side']} foot on a {params['step_height_m']:.3f} m step, static, "
        f"ankle preset {result['preset']}",
        "",
        f"  trailing foot     {params['tread_m']:.3f} m behind, {params['stance_width_m']:.3f} m across, "
        f"{params['swing_clearance_m']:.3f} m above the lower floor, knee {params['swing_knee_rad']:.2f} rad",
        f"  pelvis            x {pelvis[0]:+.3f}, y {pelvis[1]:+.3f}, z {pelvis[2]:+.3f} m from the stance "
        f"ankle; torso lean {pose['torso_lean_deg']:+.1f}°",
        f"  stance ankle      pitch {ankle['pitch']:+.1f}°{cap}, roll {ankle['roll']:+.1f}°; knee "
        f"{math.degrees(pose['joint_pos_rad'][result['stance_side'] + '_knee']):.1f}°",
        f"  COM ({com['mass_kg']:.1f} kg)     {_along(com['ahead_of_ankle_m'], 'ahead of', 'behind')}, "
        f"{_along(com['inboard_of_ankle_m'], 'inboard of', 'outboard of')} the ankle "
        f"({com['margin_to_sole_edge_m'] * 100:.1f} cm inside the sole; natural pose "
        f"{_along(com['natural_ahead_of_ankle_m'], 'ahead', 'behind')}, "
        f"{_along(com['natural_inboard_of_ankle_m'], 'inboard', 'outboard')})",
    ]
    if pose["limit_violations"]:
        lines.append("  joint ranges      VIOLATED: " + "; ".join(pose["limit_violations"]))
    lines += [
        "",
        f"  ankle demand      pitch {demand['pitch']:+.1f} N·m ({_pitch_sense(demand['pitch'])}),"
        f" roll {demand['roll']:+.1f} N·m   (holding {result['supported_mass_kg']:.1f} kg)",
        "",
        f"  capacity, {motor['name']} rated {motor['rated_nm']:g} N·m    pitch    roll   fits",
    ]
    for label, key, fit in (
        ("worst-pose axis", "worst_axis_capacity_nm", "fits_worst_axis_rated"),
        ("worst-pose pure axis", "worst_pure_capacity_nm", "fits_worst_pure_rated"),
    ):
        caps = result[key]
        lines.append(f"    {label:<28}{caps['pitch_rated']:>7.1f} {caps['roll_rated']:>7.1f}   {_yes(result[fit])}")
    lines += [
        "",
        f"  diamond at the pose: motors a {torque['a']:+.1f}, b {torque['b']:+.1f} N·m  "
        f"(rated ±{motor['rated_nm']:g}: {_yes(result['fits_diamond_rated'])}, "
        f"peak ±{motor['peak_nm']:g}: {_yes(result['fits_diamond_peak'])})",
        "  stance leg (N·m)  "
        + ", ".join(f"{name} {value:+.1f}" for name, value in result["stance_joint_torques_nm"].items()),
    ]
    return "\n".join(lines)


def _along(value_m: float, positive: str, negative: str) -> str:
    return f"{abs(value_m) * 100:.1f} cm {positive if value_m >= 0 else negative}"


def _pitch_sense(pitch_nm: float) -> str:
    return "toes up" if pitch_nm >= 0 else "toes down"


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"
