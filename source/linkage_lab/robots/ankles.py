"""A registered robot's RSU ankles by name: its geometry presets, motors and transmissions.

The ankle math (:mod:`linkage_lab.kinematics`) takes a geometry; this module builds one from a robot's
config (its ``ankle_linkage`` section merged with a preset, and its ``motors``), so callers that know a
robot by name, or know only that it is the one robot with RSU ankles, ask here.
"""

from __future__ import annotations

from typing import Any

from linkage_lab.config import ConfigError
from linkage_lab.kinematics.ankle_transmission import RSUAnkleTransmission
from linkage_lab.kinematics.rsu_geometry import RSUAnkleGeometry, Side, ankle_geometry
from linkage_lab.robots.registry import get_robot, sole_robot_with

#: The :class:`~linkage_lab.robots.registry.RobotSpec` field a robot with RSU ankles sets.
RSU_ANKLE_CAPABILITY = "rsu_ankles"


def ankle_robot(robot: str | None = None) -> str:
    """``robot``, or when ``None`` the one registered robot with RSU ankles (an error if not exactly one)."""
    return robot if robot is not None else sole_robot_with(RSU_ANKLE_CAPABILITY)


def _robot_config(robot: str | None) -> Any:
    """The typed config of ``robot`` (or of the one robot with RSU ankles): its ``ankle_linkage`` section
    (:class:`~linkage_lab.kinematics.rsu_geometry.AnkleLinkageSection` plus ``presets``) and its ``motors``."""
    return get_robot(ankle_robot(robot)).config()


def available_presets(robot: str | None = None) -> list[str]:
    """Names of the ankle geometry presets in ``configs/robots/<robot>.yaml``, the default first."""
    return list(_robot_config(robot).ankle_linkage.get("presets", {}))


def default_preset(robot: str | None = None) -> str:
    """The robot's own ankle geometry: the first preset of its config."""
    presets = available_presets(robot)
    if not presets:
        raise ConfigError(f"robot {ankle_robot(robot)!r} has no ankle_linkage.presets")
    return presets[0]


def available_motors(robot: str | None = None) -> list[str]:
    """Motor model names of the robot config (section ``motors``)."""
    return list(_robot_config(robot).motors)


def load_ankle_geometry(
    preset: str | None = None, side: Side = "left", motor: str | None = None, robot: str | None = None
) -> RSUAnkleGeometry:
    """Build a robot's ankle from its config: section ``ankle_linkage`` merged with one preset.

    Args:
        preset: A key of ``ankle_linkage.presets`` (e.g. ``"narrow_rods"``); ``None``: the robot's own
            (:func:`default_preset`).
        side: ``"left"`` (the config's geometry) or ``"right"`` (its mirror in y).
        motor: Motor model overriding the preset's (case-insensitive); ``None`` keeps the preset's.
        robot: Robot name; ``None``: the one registered robot with RSU ankles.

    Raises:
        ConfigError: Unknown preset, side or motor, or a bad key; the message lists the choices.
    """
    config = _robot_config(robot)
    return ankle_geometry(
        config.ankle_linkage, config.motors, preset, side, motor, source=f"{ankle_robot(robot)} config"
    )


def rsu_ankle_transmission(
    side: Side = "left",
    preset: str | None = None,
    motor: str | None = None,
    fk_tol: float = 1e-9,
    robot: str | None = None,
) -> RSUAnkleTransmission:
    """A robot's ankle transmission from its config's ``ankle_linkage`` section.

    Args:
        side: ``"left"`` or ``"right"`` (the mirror image in y).
        preset: Geometry preset (docs/design/ankle_linkage.md §7); ``None``: the robot's own.
        motor: Motor model overriding the preset's (e.g. ``"rs06"``); ``None`` keeps it.
        fk_tol: Pose tolerance of the forward kinematics (rad).
        robot: The robot; ``None``: the one registered robot with RSU ankles.
    """
    return RSUAnkleTransmission(load_ankle_geometry(preset, side=side, motor=motor, robot=robot), fk_tol=fk_tol)


def ankle_pair(preset: str | None = None, robot: str | None = None) -> dict[str, RSUAnkleGeometry]:
    """Both ankles of ``robot`` (``None``: the one robot with RSU ankles) in one geometry preset, by side."""
    return {side: load_ankle_geometry(preset, side, robot=robot) for side in ("left", "right")}
