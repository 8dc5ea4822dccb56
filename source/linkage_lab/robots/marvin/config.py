"""``configs/robots/marvin.yaml`` as frozen, validated dataclasses (field names are the YAML keys).

The ``ankle_linkage`` section (the RSU geometry and its presets) is checked where it is read, by
:func:`~linkage_lab.kinematics.rsu_geometry.load_ankle_geometry`, which knows that schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linkage_lab.robots.registry import get_robot
from linkage_lab.typed_config import Randomization, SensorNoise, Vector3, nonnegative, positive


@dataclass(frozen=True, kw_only=True)
class Frame:
    convention: str


@dataclass(frozen=True, kw_only=True)
class Head:
    size_m: Vector3 = positive()
    mass_kg: float = positive()


@dataclass(frozen=True, kw_only=True)
class Base:
    link: str
    mass_kg: float = positive()
    com_above_hip_m: float
    size_m: Vector3 = positive()
    head: Head


@dataclass(frozen=True, kw_only=True)
class Foot:
    length_m: float = positive()
    width_m: float = positive()
    ankle_from_heel_m: float = nonnegative()
    thickness_m: float = positive()


@dataclass(frozen=True, kw_only=True)
class Geometry:
    hip_height_m: float = positive()
    hip_lateral_offset_m: float = nonnegative()
    thigh_length_m: float = positive()
    shin_length_m: float = positive()
    ankle_height_m: float = positive()
    foot: Foot
    shoulder_height_above_hip_m: float = positive()
    shoulder_lateral_offset_m: float = positive()
    upper_arm_length_m: float = positive()
    forearm_length_m: float = positive()
    total_height_m: float = positive()
    limb_radius_m: dict[str, float] = positive()


@dataclass(frozen=True, kw_only=True)
class Masses:
    hip_yaw_link: float = positive()
    hip_roll_link: float = positive()
    thigh: float = positive()
    shin: float = positive()
    ankle_cross: float = positive()
    foot: float = positive()
    upper_arm: float = positive()
    forearm: float = positive()


@dataclass(frozen=True, kw_only=True)
class JointSpec:
    axis: Vector3
    range_rad: tuple[float, float]
    motor: str  # a key of ``motors``, or ``linkage`` for the ankle joints


@dataclass(frozen=True, kw_only=True)
class MotorSpec:
    peak_nm: float = positive()
    rated_nm: float = positive()
    speed_rads: float = positive()
    mass_kg: float = positive()
    armature_kgm2: float = nonnegative()


@dataclass(frozen=True, kw_only=True)
class Control:
    stiffness: dict[str, float] = positive()
    damping: dict[str, float] = nonnegative()
    standing_pose_rad: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class MarvinConfig:
    """The whole config; :meth:`~linkage_lab.robots.registry.RobotSpec.settings` parses it once."""

    name: str
    frame: Frame
    base: Base
    geometry: Geometry
    masses_kg: Masses
    leg_joints: dict[str, JointSpec]
    arm_joints: dict[str, JointSpec]
    motors: dict[str, MotorSpec]
    ankle_linkage: dict[str, Any]
    control: Control
    randomization: Randomization
    sensors: SensorNoise

    def __post_init__(self):
        for group in (self.leg_joints, self.arm_joints):
            for joint, spec in group.items():
                if spec.motor != "linkage" and spec.motor not in self.motors:
                    raise ValueError(f"joint {joint}: motor {spec.motor!r} is not in motors ({', '.join(self.motors)})")


def marvin_config() -> MarvinConfig:
    """The Marvin's config, parsed and checked once (through the registry, which caches it)."""
    return get_robot("marvin").config()
