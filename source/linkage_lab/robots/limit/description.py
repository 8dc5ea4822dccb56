"""The Limit quadruped's description, generated from ``configs/robots/limit.yaml``.

17 links (``base_link`` and per leg ``{leg}_hip``, ``{leg}_thigh``, ``{leg}_shank``,
``{leg}_foot``) and 16 joints (per leg ``{leg}_hip``, ``{leg}_knee``, ``{leg}_ankle`` revolute and
``{leg}_foot`` fixed). Each revolute joint shares its name with its child link, as in the source
``limit.urdf``: the link called ``_hip`` is the physical thigh, ``_thigh`` the shank, ``_shank``
the ankle block the foot plate hangs from.
"""

from __future__ import annotations

from linkage_lab.description.model import Joint, Link, RobotModel, Solid, cylinder_between
from linkage_lab.robots.limit.config import LimitConfig
from linkage_lab.robots.limit.joints import LEGS

# Size of the motor solids used for the inertia of the motors (m): GIM6010 is ~67 mm across.
_MOTOR_RADIUS_M = 0.034
_MOTOR_LENGTH_M = 0.035
#: Child link of each revolute joint type ("joint name = child link name" per leg).
CHILD_LINK = {"hip": "hip", "knee": "thigh", "ankle": "shank"}


def build_limit_model(cfg: LimitConfig) -> RobotModel:
    """Build the Limit's serial-tree model from its robot config."""
    geom = cfg.geometry
    masses = cfg.masses_kg
    limits = cfg.joint_limits
    axis = geom.joint_axis
    thigh = geom.thigh_length_m
    shank = geom.shank_length_m
    radius = geom.link_radius_m
    foot = geom.foot

    base_solids = [Solid("box", cfg.base.mass_kg, cfg.base.com_m, cfg.base.size_m, True)]
    links: list[Link] = []
    joints: list[Joint] = []
    for leg in LEGS:
        hip_origin = cfg.legs[leg].hip_origin_m
        # The two co-axial hip/knee motors are carried by the base, centred on the hip axis.
        base_solids.append(Solid("cylinder", masses.hip_knee_motors_on_base, hip_origin, (_MOTOR_RADIUS_M, 0.06)))

        # {leg}_hip link: the physical thigh, hip axis -> knee axis.
        links.append(Link(f"{leg}_hip", [cylinder_between(masses.hip_link, radius, 0.0, -thigh)]))
        # {leg}_thigh link: the physical shank with the ankle motor near its top (the knee).
        links.append(
            Link(
                f"{leg}_thigh",
                [
                    cylinder_between(masses.thigh_link, radius, 0.0, -shank),
                    Solid(
                        "cylinder",
                        masses.ankle_motor_on_thigh,
                        (0.0, 0.0, -0.015),
                        (_MOTOR_RADIUS_M, _MOTOR_LENGTH_M),
                    ),
                ],
            )
        )
        # {leg}_shank link: the block the ankle joint turns, carrying the foot plate.
        links.append(Link(f"{leg}_shank", [Solid("box", masses.shank, (0.0, 0.0, -0.002), (0.02, 0.03, 0.012))]))
        # {leg}_foot: the sole plate, toe ahead and heel behind the ankle axis. It collides.
        toe, heel = foot.toe_ahead_m, foot.heel_behind_m
        thickness = foot.thickness_m
        sole = foot.sole_below_ankle_m
        plate_center = ((toe - heel) / 2, 0.0, -sole + thickness / 2)
        plate_size = (toe + heel, foot.width_m, thickness)
        links.append(Link(f"{leg}_foot", [Solid("box", masses.foot, plate_center, plate_size, collide=True)]))

        def revolute(joint: str, parent: str, origin: tuple[float, float, float], leg: str = leg) -> Joint:
            lim = limits[joint]
            return Joint(
                name=f"{leg}_{joint}",
                kind="revolute",
                parent=parent,
                child=f"{leg}_{CHILD_LINK[joint]}",
                origin_m=origin,
                axis=axis,
                limit_rad=lim.range_rad,
                effort_nm=lim.effort_nm,
                velocity_rads=lim.velocity_rads,
            )

        joints.append(revolute("hip", "base_link", hip_origin))
        joints.append(revolute("knee", f"{leg}_hip", (0.0, 0.0, -thigh)))
        joints.append(revolute("ankle", f"{leg}_thigh", (0.0, 0.0, -shank)))
        joints.append(Joint(f"{leg}_foot", "fixed", f"{leg}_shank", f"{leg}_foot", (0.0, 0.0, 0.0)))

    links.insert(0, Link(cfg.base.link, base_solids))
    return RobotModel(cfg.name, links, joints)
