"""Marvin's ankle for the armature experiments: the rigid parts below the shin and the task's ankle drive.

The generic experiments (:mod:`linkage_lab_experiments.validation.ankle_oracle`,
:mod:`linkage_lab_experiments.validation.ankle_armature`) reach these through Marvin's ``SPEC.extras``
(``ankle_parts``, ``ankle_drive_cfg``, ``ankle_geometry``).
"""

from __future__ import annotations

from typing import Any

from linkage_lab.actuators.transmissions import make_transmission
from linkage_lab.description.model import combine_solids
from linkage_lab.robots.marvin.config import marvin_config

#: A rigid part: mass (kg), centre of mass (m, 3) and inertia about it (kg·m², 3×3), in its joint frame.
RawPart = tuple[float, tuple[float, float, float], tuple[tuple[float, float, float], ...]]


def ankle_parts(side: str = "left") -> tuple[RawPart, RawPart]:
    """The ankle cross (pitch body) and the foot (roll body) of ``side`` from the generated description
    (the links Isaac Lab simulates)."""
    from linkage_lab.robots.marvin.description import build_marvin_model

    links = {link.name: link for link in build_marvin_model(marvin_config()).links}
    parts = []
    for name in (f"{side}_ankle_cross", f"{side}_foot"):
        mass, com, inertia = combine_solids(links[name].solids)
        parts.append(
            (float(mass), tuple(float(v) for v in com), tuple(tuple(float(v) for v in row) for row in inertia))
        )
    return parts[0], parts[1]


def ankle_drive_cfg(reflected_armature: bool, dt: float = 0.005, side: str = "left") -> tuple[Any, Any]:
    """The task's drive of one ankle (diamond limits, the ankle gains) and its transmission.

    Args:
        reflected_armature: The pose-dependent reflected armature (``True``) or one motor's ``J̄`` per joint.
        dt: Physics step (s).
        side: ``left`` or ``right``.

    Returns:
        ``(LinkageDriveCfg, Transmission)``.
    """
    from linkage_lab.actuators.linkage_actuator import drive_cfg
    from linkage_lab.robots.marvin.articulation import ankle_actuator_cfg

    robot = marvin_config()
    gains = [robot.control.stiffness["ankle"]] * 2, [robot.control.damping["ankle"]] * 2
    actuator = ankle_actuator_cfg(robot, "diamond", dt, reflected_armature=reflected_armature)
    group = actuator.coupled_joints.index([f"{side}_ankle_pitch", f"{side}_ankle_roll"])
    return drive_cfg(actuator, *gains), make_transmission(actuator.transmissions[group])


def ankle_geometry(side: str = "left") -> Any:
    """The ankle linkage's geometry (the config's default preset)."""
    from linkage_lab.robots.ankles import load_ankle_geometry

    return load_ankle_geometry(side=side, robot="marvin")
