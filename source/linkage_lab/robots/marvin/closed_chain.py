"""Marvin with its 2-RSU + U ankles closed (docs/design/ankle_linkage.md §1), as a MuJoCo model for sim-to-sim.

Made from the same serial description as the URDF/USD (:func:`build_marvin_model` on the config), plus
what the tree leaves out. The hips, knees and arms stay motor joints (their motor's armature). Each ankle's
pitch and roll become passive (the universal joint); two motor hinges on the shin, at the motor centres
of the config's ``ankle_linkage`` and about −y (so a hinge angle is the library's ``φ = θ − θ_neutral``),
each turn a crank of radius ``r``; a rod on a ball joint at the crank tip, as long as the neutral pose
makes it, is held on its rod end on the foot by an equality ``connect`` (the second ball). The motors'
housings are already on the shin of the serial model; the cranks and rods are extra, light parts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from linkage_lab.robots.marvin.ankle import transmission_name
from linkage_lab.robots.marvin.joints import JOINT_NAMES, SIDES
from linkage_lab.sim2sim.mjcf import bar_inertial, robot_document
from linkage_lab.sim2sim.model import ClosedChainModel, Linkage, Motor, Rod

#: Visual radii of a crank and a rod (m): pictures only.
_CRANK_RADIUS_M = 0.008
_ROD_RADIUS_M = 0.005


def _ankle(doc: Any, serial_joints: dict, geometry: Any, side: str, parts: tuple[float, float]) -> tuple[list, list]:
    """Add one ankle's two motor–crank–rod branches and their loop closures; returns motor joints, rods."""

    pitch, roll = serial_joints[f"{side}_ankle_pitch"], serial_joints[f"{side}_ankle_roll"]
    centre = np.asarray(pitch.origin_m, dtype=float)  # the ankle centre in the shin frame
    foot_origin = np.asarray(roll.origin_m, dtype=float)  # the foot frame's origin from the ankle centre
    theta0, radius = geometry.neutral_crank_angle_rad, geometry.crank_radius_m
    tip = radius * np.array([np.cos(theta0), 0.0, np.sin(theta0)])
    crank_mass, rod_mass = parts
    names, rods = [], []
    for index, motor in enumerate("ab"):
        motor_centre = np.asarray(geometry.motor_centre_m[index], dtype=float)
        rod = np.asarray(geometry.rod_end_foot_m[index], dtype=float) - (motor_centre + tip)
        crank, rod_body = f"{side}_ankle_crank_{motor}", f"{side}_ankle_rod_{motor}"
        joint, ball = f"{side}_ankle_motor_{motor}", f"{side}_ankle_ball_{motor}"
        rod_end, foot_pin = f"{side}_ankle_rod_end_{motor}", f"{side}_ankle_foot_pin_{motor}"
        doc.add_body(pitch.parent, crank, centre + motor_centre, bar_inertial(crank_mass, (0, 0, 0), tip))
        doc.add_joint(crank, joint, axis=(0.0, -1.0, 0.0))
        doc.add_visual_capsule(crank, (0, 0, 0), tip, _CRANK_RADIUS_M)
        doc.add_body(crank, rod_body, tip, bar_inertial(rod_mass, (0, 0, 0), rod))
        doc.add_joint(rod_body, ball, kind="ball")
        doc.add_visual_capsule(rod_body, (0, 0, 0), rod, _ROD_RADIUS_M)
        doc.add_site(rod_body, rod_end, rod)
        doc.add_site(roll.child, foot_pin, np.asarray(geometry.rod_end_foot_m[index]) - foot_origin)
        doc.add_connect(rod_end, foot_pin)
        names.append(joint)
        rods.append(Rod(ball, rod_end, foot_pin))
    return names, rods


def marvin_closed_chain(
    cfg: Any = None,
    preset: str | None = None,
    crank_mass_kg: float = 0.02,
    rod_mass_kg: float = 0.02,
    settings: Any = None,
    floating_base: bool = True,
) -> Any:
    """Marvin's :class:`~linkage_lab.sim2sim.model.ClosedChainModel`.

    Args:
        cfg: The robot config (``None``: the registered one, ``configs/robots/marvin.yaml``).
        preset: Ankle geometry preset (docs/design/ankle_linkage.md §7); ``None``: the robot's own.
        crank_mass_kg: Mass of a crank, a bar from the motor axis to the tip (kg; not in the config).
        rod_mass_kg: Mass of a rod (kg; not in the config). Light but not zero: a massless body on a ball
            joint leaves the loop closure's solve ill-conditioned.
        settings: MuJoCo settings (:class:`~linkage_lab.sim2sim.mjcf.SolverSettings`); ``None``: defaults.
        floating_base: A free base (``False``: welded to the world, for bench checks).
    """
    from linkage_lab.kinematics.rsu_geometry import ankle_geometry
    from linkage_lab.robots.marvin.description import build_marvin_model

    if cfg is None:
        from linkage_lab.robots.registry import get_robot

        cfg = get_robot("marvin").config()
    serial = build_marvin_model(cfg)
    doc = robot_document(serial, settings, floating_base=floating_base, base_pos_m=(0.0, 0.0, 1.0))
    serial_joints = {joint.name: joint for joint in serial.joints}
    specs = {**cfg.leg_joints, **cfg.arm_joints}

    motors, linkages, rods, passive = [], [], [], []
    for name in JOINT_NAMES:
        side, kind = name.split("_", 1)
        motor = specs[kind].motor
        if motor != "linkage":
            data = cfg.motors[motor]
            doc.set_joint(name, armature=data.armature_kgm2)
            motors.append(Motor(name, data.peak_nm, data.speed_rads, data.armature_kgm2))
            continue
        passive.append(name)
        if kind != "ankle_pitch":
            continue  # the roll joint joins its pitch joint's linkage
        geometry = ankle_geometry(cfg.ankle_linkage, cfg.motors, preset, side, source=f"{cfg.name} config")
        data = cfg.motors[geometry.motor.name]
        joints, side_rods = _ankle(doc, serial_joints, geometry, side, (crank_mass_kg, rod_mass_kg))
        for joint in joints:
            doc.set_joint(joint, armature=data.armature_kgm2)
            motors.append(Motor(joint, data.peak_nm, data.speed_rads, data.armature_kgm2))
        linkages.append(
            Linkage(
                (f"{side}_ankle_pitch", f"{side}_ankle_roll"),
                tuple(joints),
                transmission_name(side, preset),
                factory=lambda geometry=geometry: _rsu_transmission(geometry),
            )
        )
        rods += side_rods
    pose = cfg.control.standing_pose_rad
    return ClosedChainModel.assemble(
        doc,
        motors,
        linkages,
        rods,
        passive_joints=passive,
        joint_names=JOINT_NAMES,
        default_joint_pos={f"{side}_{joint}": float(value) for side in SIDES for joint, value in pose.items()},
        notes=(
            f"ankle cranks {crank_mass_kg} kg and rods {rod_mass_kg} kg each added to the serial model's mass "
            "(not in the config); motor housings stay on the shin as in the serial model",
            "rod: ball joint at the crank tip (3 dof, its spin free) and a connect at the foot (the second "
            "ball); ankle pitch/roll passive, no damping",
            "motor joints carry their motor's armature (config motors.*.armature_kgm2), no damping (none in "
            "the config)",
        ),
    )


def _rsu_transmission(geometry: Any) -> Any:
    from linkage_lab.kinematics.ankle_transmission import RSUAnkleTransmission

    return RSUAnkleTransmission(geometry)
