"""Marvin's description (docs/design/robots.md §2), generated from ``configs/robots/marvin.yaml``.

17 links and 16 revolute joints. The base link ``pelvis`` carries the torso, head and battery;
its frame sits on the hip line, midway between the hips, 0.70 m above the sole in the zero pose.
Per leg (``left_``/``right_``), body to foot, each joint with its child link::

    hip_yaw → hip_yaw_link, hip_roll → hip_roll_link, hip_pitch → thigh,
    knee → shin, ankle_pitch → ankle_cross, ankle_roll → foot

and per arm ``shoulder_pitch → upper_arm``, ``elbow → forearm``. The three hip axes meet at one
point, the hip centre; the two ankle axes meet at the ankle centre (the passive universal joint
of the real robot). Only the pelvis (torso box) and the feet collide.
"""

from __future__ import annotations

from linkage_lab.description.model import Joint, Link, RobotModel, Solid, cylinder_between
from linkage_lab.kinematics.ankle_limits import box_limits
from linkage_lab.kinematics.rsu_geometry import ankle_geometry
from linkage_lab.robots.marvin.config import JointSpec, MarvinConfig

Vector3 = tuple[float, float, float]

SIDES = ("left", "right")
#: Leg joints body to foot, each with its child link (both get the ``{side}_`` prefix).
LEG_CHILD_LINK = {
    "hip_yaw": "hip_yaw_link",
    "hip_roll": "hip_roll_link",
    "hip_pitch": "thigh",
    "knee": "shin",
    "ankle_pitch": "ankle_cross",
    "ankle_roll": "foot",
}
#: Arm joints, shoulder to hand, each with its child link.
ARM_CHILD_LINK = {"shoulder_pitch": "upper_arm", "elbow": "forearm"}
#: Joints whose right-side range is the left range negated (the mirror in y of a yaw or roll).
MIRRORED_RANGE_JOINTS = ("hip_yaw", "hip_roll", "ankle_roll")

# Housing shapes for the inertia of the small links (no CAD yet), m. The hip-yaw stage is a
# drum above the hip centre, the hip-roll link the block around the hip-pitch motor, the ankle
# cross the universal joint's spider; an ankle motor is a box around its crank axis (y).
_HIP_YAW_DRUM_RADIUS_M = 0.05
_HIP_YAW_DRUM_HEIGHT_M = 0.08
_HIP_ROLL_BLOCK_M = (0.10, 0.08, 0.10)
_ANKLE_CROSS_M = (0.04, 0.04, 0.02)
_ANKLE_MOTOR_BOX_M = (0.08, 0.05, 0.08)


def _mirror(point: Vector3, side: str) -> Vector3:
    """``point`` on the left side, or its mirror image in y on the right."""
    # ``or 0.0`` turns -0.0 into 0.0 so the URDF never reads "-0".
    return (point[0], -point[1] or 0.0, point[2]) if side == "right" else point


def _pelvis_solids(cfg: MarvinConfig) -> list[Solid]:
    """Torso box and head box, placed so their combined CoM is ``com_above_hip_m`` above the hip line."""
    base, geom = cfg.base, cfg.geometry
    head = base.head
    head_size = tuple(float(v) for v in head.size_m)
    head_z = float(geom.total_height_m) - float(geom.hip_height_m) - head_size[2] / 2
    head_mass = float(head.mass_kg)
    torso_mass = float(base.mass_kg) - head_mass
    torso_z = (float(base.mass_kg) * float(base.com_above_hip_m) - head_mass * head_z) / torso_mass
    torso_size = tuple(float(v) for v in base.size_m)
    return [
        Solid("box", torso_mass, (0.0, 0.0, torso_z), torso_size, collide=True),
        Solid("box", head_mass, (0.0, 0.0, head_z), head_size),
    ]


def _leg_links(cfg: MarvinConfig, side: str) -> list[Link]:
    """The six links of one leg, each in its joint's frame (the child frame of its parent joint)."""
    geom, masses = cfg.geometry, cfg.masses_kg
    thigh, shin = float(geom.thigh_length_m), float(geom.shin_length_m)
    radius = geom.limb_radius_m
    # The shin carries the two ankle motors at their crank centres (ankle frame = shin frame
    # shifted down by the shin length): this is what sets the shin's CoM and inertia.
    ankle = ankle_geometry(cfg.ankle_linkage, cfg.motors, side="left")
    motor_mass = cfg.motors[ankle.motor.name].mass_kg
    structure_mass = float(masses.shin) - 2 * motor_mass
    if structure_mass <= 0:
        raise ValueError(f"shin mass {masses.shin} kg does not cover its two ankle motors ({motor_mass} kg each)")
    motors = []
    for x, y, z in ankle.motor_centre_m:
        motors.append(Solid("box", motor_mass, _mirror((x, y, z - shin), side), _ANKLE_MOTOR_BOX_M))
    foot = geom.foot
    length, width, thickness = float(foot.length_m), float(foot.width_m), float(foot.thickness_m)
    sole_center = (
        length / 2 - float(foot.ankle_from_heel_m),
        0.0,
        -float(geom.ankle_height_m) + thickness / 2,
    )
    solids = {
        "hip_yaw_link": [
            cylinder_between(float(masses.hip_yaw_link), _HIP_YAW_DRUM_RADIUS_M, _HIP_YAW_DRUM_HEIGHT_M, 0.0)
        ],
        "hip_roll_link": [Solid("box", float(masses.hip_roll_link), (0.0, 0.0, 0.0), _HIP_ROLL_BLOCK_M)],
        "thigh": [cylinder_between(float(masses.thigh), float(radius["thigh"]), 0.0, -thigh)],
        "shin": [cylinder_between(structure_mass, float(radius["shin"]), 0.0, -shin), *motors],
        "ankle_cross": [Solid("box", float(masses.ankle_cross), (0.0, 0.0, 0.0), _ANKLE_CROSS_M)],
        "foot": [Solid("box", float(masses.foot), sole_center, (length, width, thickness), collide=True)],
    }
    return [Link(f"{side}_{name}", solids[name]) for name in LEG_CHILD_LINK.values()]


def _joint_limits(cfg: MarvinConfig) -> dict[str, tuple[float, float]]:
    """``(effort N·m, velocity rad/s)`` per joint type: motor peak torque and no-load speed.

    The ankle joints (motor ``linkage``) take the linkage's box limits (docs/design/robots.md §2.4):
    ``2 T_peak ratio`` and ``ω₀ / ratio`` at the neutral lever ratios. The linkage geometry is
    read by the ankle library from ``cfg``'s ``ankle_linkage`` section (its own preset, the first).
    """
    box = box_limits(ankle_geometry(cfg.ankle_linkage, cfg.motors, side="left"))
    limits = {
        "ankle_pitch": (box.pitch_peak_nm, box.pitch_speed_rads),
        "ankle_roll": (box.roll_peak_nm, box.roll_speed_rads),
    }
    for name, spec in {**cfg.leg_joints, **cfg.arm_joints}.items():
        if spec.motor != "linkage":
            motor = cfg.motors[spec.motor]
            limits[name] = (float(motor.peak_nm), float(motor.speed_rads))
    return limits


def build_marvin_model(cfg: MarvinConfig) -> RobotModel:
    """Build Marvin's serial-tree model from its robot config.

    Raises:
        ValueError: The leg lengths do not add up to the hip height.
    """
    geom = cfg.geometry
    thigh, shin = float(geom.thigh_length_m), float(geom.shin_length_m)
    if abs(thigh + shin + float(geom.ankle_height_m) - float(geom.hip_height_m)) > 1e-9:
        raise ValueError("thigh + shin + ankle height must equal the hip height (docs/design/robots.md §2.2)")
    limits = _joint_limits(cfg)
    masses = cfg.masses_kg

    pelvis = cfg.base.link
    links = [Link(pelvis, _pelvis_solids(cfg))]
    joints: list[Joint] = []

    def revolute(side: str, name: str, spec: JointSpec, parent: str, child: str, origin: Vector3) -> Joint:
        lower, upper = (float(v) for v in spec.range_rad)
        if side == "right" and name in MIRRORED_RANGE_JOINTS:
            lower, upper = -upper, -lower
        effort, velocity = limits[name]
        axis = tuple(float(v) for v in spec.axis)
        return Joint(
            f"{side}_{name}",
            "revolute",
            parent,
            f"{side}_{child}",
            origin,
            axis,
            (lower, upper),
            effort,
            velocity,
        )

    # Joint origins down the leg: the hip axes share the hip centre, the ankle axes the ankle centre.
    leg_origins = {
        "hip_yaw": (0.0, float(geom.hip_lateral_offset_m), 0.0),
        "hip_roll": (0.0, 0.0, 0.0),
        "hip_pitch": (0.0, 0.0, 0.0),
        "knee": (0.0, 0.0, -thigh),
        "ankle_pitch": (0.0, 0.0, -shin),
        "ankle_roll": (0.0, 0.0, 0.0),
    }
    for side in SIDES:
        links += _leg_links(cfg, side)
        parent = pelvis
        for name, child in LEG_CHILD_LINK.items():
            joints.append(revolute(side, name, cfg.leg_joints[name], parent, child, _mirror(leg_origins[name], side)))
            parent = f"{side}_{child}"

    shoulder = (0.0, float(geom.shoulder_lateral_offset_m), float(geom.shoulder_height_above_hip_m))
    arm_origins = {"shoulder_pitch": shoulder, "elbow": (0.0, 0.0, -float(geom.upper_arm_length_m))}
    for side in SIDES:
        parent = pelvis
        for name, child in ARM_CHILD_LINK.items():
            length, radius = getattr(geom, f"{child}_length_m"), geom.limb_radius_m[child]
            links.append(Link(f"{side}_{child}", [cylinder_between(getattr(masses, child), radius, 0.0, -length)]))
            joints.append(revolute(side, name, cfg.arm_joints[name], parent, child, _mirror(arm_origins[name], side)))
            parent = f"{side}_{child}"
    return RobotModel(cfg.name, links, joints)
