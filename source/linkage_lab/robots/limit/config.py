"""``configs/robots/limit.yaml`` as frozen, validated dataclasses (field names are the YAML keys)."""

from __future__ import annotations

from dataclasses import dataclass

from linkage_lab.robots.registry import get_robot
from linkage_lab.typed_config import Randomization, SensorNoise, Vector3, nonnegative, positive, within


@dataclass(frozen=True, kw_only=True)
class Frame:
    convention: str
    source_y_mirrored: bool


@dataclass(frozen=True, kw_only=True)
class Base:
    link: str
    mass_kg: float = positive()
    size_m: Vector3 = positive()
    com_m: Vector3


@dataclass(frozen=True, kw_only=True)
class Leg:
    hip_origin_m: Vector3


@dataclass(frozen=True, kw_only=True)
class Foot:
    sole_below_ankle_m: float = nonnegative()
    toe_ahead_m: float = nonnegative()
    heel_behind_m: float = nonnegative()
    width_m: float = positive()
    thickness_m: float = positive()


@dataclass(frozen=True, kw_only=True)
class Geometry:
    thigh_length_m: float = positive()
    shank_length_m: float = positive()
    joint_axis: Vector3
    foot: Foot
    link_radius_m: float = positive()


@dataclass(frozen=True, kw_only=True)
class Masses:
    hip_link: float = positive()
    hip_knee_motors_on_base: float = nonnegative()
    thigh_link: float = positive()
    ankle_motor_on_thigh: float = nonnegative()
    shank: float = positive()
    foot: float = positive()


@dataclass(frozen=True, kw_only=True)
class Motor:
    model: str
    gear_ratio: float = positive()
    rated_torque_nm: float = positive()
    #: Where the torque–speed line starts (the driver's per-joint ``effort_nm`` caps it below).
    stall_torque_nm: float = positive()
    no_load_speed_rads: float = positive()


@dataclass(frozen=True, kw_only=True)
class JointLimit:
    #: ``(lower, upper)`` stop angles (rad); the knee's range is one-sided (its parallelogram folds flat at 0).
    range_rad: tuple[float, float] = within(-3.2, 3.2)
    effort_nm: float = positive()
    velocity_rads: float = positive()

    def __post_init__(self) -> None:
        lower, upper = self.range_rad
        if not lower < upper:
            raise ValueError(f"range_rad: the lower stop must lie below the upper one, got {list(self.range_rad)}")


@dataclass(frozen=True, kw_only=True)
class JointTable:
    leg_order: tuple[str, ...]
    joint_order: tuple[str, ...]
    trot_pairs: dict[str, tuple[str, ...]]


@dataclass(frozen=True, kw_only=True)
class Transmission:
    hip_knee_jacobian: tuple[tuple[float, float], tuple[float, float]]


@dataclass(frozen=True, kw_only=True)
class MotorSpaceInertia:
    m11: float = nonnegative()
    m12: float
    m22: float = nonnegative()


@dataclass(frozen=True, kw_only=True)
class S3N:
    placeholder: bool
    reflected_inertia_kgm2: tuple[float, float] = nonnegative()
    damping_nms_per_rad: tuple[float, float] = nonnegative()
    mp_kgm2: MotorSpaceInertia
    ankle_armature_kgm2: float = nonnegative()


@dataclass(frozen=True, kw_only=True)
class Control:
    stiffness_nm_per_rad: float = positive()
    damping_nms_per_rad: float = nonnegative()
    ankle_stiffness_nm_per_rad: float = positive()
    ankle_damping_nms_per_rad: float = nonnegative()
    standing_pose_rad: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class LimitConfig:
    """The whole config; :meth:`~linkage_lab.robots.registry.RobotSpec.settings` parses it once."""

    name: str
    frame: Frame
    base: Base
    legs: dict[str, Leg]
    foot_rest_z_m: float
    geometry: Geometry
    masses_kg: Masses
    motor: Motor
    joint_limits: dict[str, JointLimit]
    joint_table: JointTable
    transmission: Transmission
    s3n: S3N
    control: Control
    randomization: Randomization
    sensors: SensorNoise


def limit_config() -> LimitConfig:
    """The Limit's config, parsed and checked once (through the registry, which caches it)."""
    return get_robot("limit").config()
