"""The Limit with its parallelogram legs closed (docs/design/robots.md §1.3), as a MuJoCo model for sim-to-sim.

Made from the same serial description as the URDF/USD (:func:`build_limit_model` on the config), plus the
parts the tree leaves out. Per leg, the hip joint is the hip motor's own joint (same axis; armature and
damping of the hip motor); the knee is passive; a second hinge on the hip axis, on the base, is the knee
motor: it turns a crank of radius ``r`` pointing away from the thigh, and a rod on a pin at the crank tip,
as long as the thigh, is held by an equality ``connect`` on a lever ``r`` beyond the knee on the lower
link. The loop hip–crank tip–lever–knee is a parallelogram, so the knee motor angle is the lower link's
absolute angle, ``θ_knee_motor = q_hip + q_knee`` (``J = [[1, 0], [1, 1]]``). The ankle keeps its own
motor. Crank radius and the crank's and rod's masses are the closed-chain oracle's assumptions
(:class:`~linkage_lab.dynamics.serial_leg.LinkageParts`): the config has no linkage data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from linkage_lab.robots.limit.description import build_limit_model
from linkage_lab.robots.limit.joints import JOINT_NAMES, JOINT_TYPES, LEGS
from linkage_lab.sim2sim.mjcf import bar_inertial, robot_document
from linkage_lab.sim2sim.model import ClosedChainModel, Linkage, Motor, Rod

#: The registered name of the hip/knee transmission (a built-in of the actuator layer).
LEG_TRANSMISSION = "parallelogram"


def limit_closed_chain(
    cfg: Any = None,
    linkage: Any = None,
    settings: Any = None,
    floating_base: bool = True,
) -> Any:
    """The Limit's :class:`~linkage_lab.sim2sim.model.ClosedChainModel`.

    Args:
        cfg: The robot config (``None``: the registered one, ``configs/robots/limit.yaml``).
        linkage: Crank radius and crank/rod masses (:class:`~linkage_lab.dynamics.serial_leg.LinkageParts`);
            ``None``: the oracle's defaults (r = 25 mm, 20 g each).
        settings: MuJoCo settings (:class:`~linkage_lab.sim2sim.mjcf.SolverSettings`); ``None``: defaults.
        floating_base: A free base (``False``: welded to the world, for bench checks).
    """
    from linkage_lab.dynamics.serial_leg import LinkageParts

    if cfg is None:
        from linkage_lab.robots.registry import get_robot

        cfg = get_robot("limit").config()
    parts = linkage or LinkageParts()
    serial = build_limit_model(cfg)
    doc = robot_document(serial, settings, floating_base=floating_base, base_pos_m=(0.0, 0.0, 0.4))
    joints = {joint.name: joint for joint in serial.joints}
    (hip_rotor, knee_rotor), (hip_damping, knee_damping) = cfg.s3n.reflected_inertia_kgm2, cfg.s3n.damping_nms_per_rad
    ankle_rotor = cfg.s3n.ankle_armature_kgm2
    speed, stall = cfg.motor.no_load_speed_rads, cfg.motor.stall_torque_nm
    peak = {joint: cfg.joint_limits[joint].effort_nm for joint in JOINT_TYPES}

    motors, linkages, rods = [], [], []
    for leg in LEGS:
        hip, knee, ankle = (joints[f"{leg}_{joint}"] for joint in JOINT_TYPES)
        thigh = np.asarray(knee.origin_m, dtype=float)  # hip axis → knee axis, zero pose
        crank = -parts.crank_length_m * thigh / np.linalg.norm(thigh)
        knee_motor, rod_body, pin = f"{leg}_knee_motor", f"{leg}_knee_rod", f"{leg}_knee_rod_pin"
        rod_end, lever = f"{leg}_knee_rod_end", f"{leg}_knee_lever"

        doc.set_joint(hip.name, armature=hip_rotor, damping=hip_damping)
        doc.add_body(hip.parent, f"{leg}_knee_crank", hip.origin_m, bar_inertial(parts.crank_mass_kg, (0, 0, 0), crank))
        doc.add_joint(f"{leg}_knee_crank", knee_motor, axis=hip.axis, armature=knee_rotor, damping=knee_damping)
        doc.add_visual_capsule(f"{leg}_knee_crank", (0, 0, 0), crank, 0.005)
        doc.add_body(f"{leg}_knee_crank", rod_body, crank, bar_inertial(parts.rod_mass_kg, (0, 0, 0), thigh))
        doc.add_joint(rod_body, pin, axis=hip.axis)
        doc.add_visual_capsule(rod_body, (0, 0, 0), thigh, 0.004)
        doc.add_site(rod_body, rod_end, thigh)
        doc.add_site(knee.child, lever, crank)
        doc.add_connect(rod_end, lever)
        # The knee's stop seen by its motor: θ_knee_motor - θ_hip is q_knee on the parallelogram. Without it the
        # motor, driven past the knee joint's own stop, pushes the soft loop through its fold onto the crossed branch.
        doc.add_relative_stop(f"{leg}_knee_motor_stop", knee_motor, hip.name, cfg.joint_limits["knee"].range_rad)
        doc.set_joint(ankle.name, armature=ankle_rotor)

        motors += [
            Motor(hip.name, peak["hip"], speed, hip_rotor, hip_damping, stall),
            Motor(knee_motor, peak["knee"], speed, knee_rotor, knee_damping, stall),
            Motor(ankle.name, peak["ankle"], speed, ankle_rotor, stall_torque_nm=stall),
        ]
        linkages.append(Linkage((hip.name, knee.name), (hip.name, knee_motor), LEG_TRANSMISSION))
        rods.append(Rod(pin, rod_end, lever))
    pose = cfg.control.standing_pose_rad
    standing = {f"{leg}_{joint}": float(pose[joint]) for leg in LEGS for joint in JOINT_TYPES}
    return ClosedChainModel.assemble(
        doc,
        motors,
        linkages,
        rods,
        passive_joints=(f"{leg}_knee" for leg in LEGS),
        joint_names=JOINT_NAMES,
        default_joint_pos=standing,
        notes=(
            f"parallelogram crank r = {parts.crank_length_m} m pointing away from the thigh, rod of the thigh's "
            f"length; crank {parts.crank_mass_kg} kg and rod {parts.rod_mass_kg} kg per leg added to the serial "
            "model's mass (assumptions: the config has no linkage data)",
            "the parallelogram folds flat (singular) at q_knee = 0 and ±π: valid for the bent knee, -π < q_knee < 0; "
            "the knee's one-sided range is a stop on the knee and on its motor relative to the hip",
            "rod on a pin at the crank, closed on the lever by a connect (the out-of-plane row is redundant)",
            "motor joints: hip (the hip joint itself), knee motor (on the base, hip axis), ankle; J̄ and B̄ "
            "from the config's s3n section (placeholders), ankle without damping as in the serial model",
        ),
    )
