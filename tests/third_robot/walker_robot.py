"""A third robot added through the registry alone: a two-leg planar walker with parallelogram knees.

Everything the project needs to know about it is here and in ``walker.yaml``: the spec, the
description (serial tree → URDF → USD), the articulation with its linkage actuator, and the
velocity task's deltas. Nothing in the project's generic code names it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import gymnasium as gym

from linkage_lab.description.model import Joint, Link, RobotModel, Solid, cylinder_between
from linkage_lab.robots.registry import RobotSpec, register_robot
from linkage_lab.typed_config import Vector3, nonnegative, positive

CONFIG = Path(__file__).with_name("walker.yaml")
SIDES = ("left", "right")
JOINT_NAMES = tuple(f"{side}_{joint}" for side in SIDES for joint in ("hip", "knee"))
TASK = "LinkageLab-Velocity-Flat-Walker"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Base:
    mass_kg: float = positive()
    size_m: Vector3 = positive()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Foot:
    length_m: float = positive()
    width_m: float = positive()
    thickness_m: float = positive()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Geometry:
    hip_origin_y_m: float = positive()
    thigh_length_m: float = positive()
    shank_length_m: float = positive()
    link_radius_m: float = positive()
    foot: Foot


@dataclasses.dataclass(frozen=True, kw_only=True)
class Motor:
    peak_nm: float = positive()
    no_load_speed_rads: float = positive()
    armature_kgm2: float = nonnegative()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Control:
    stiffness_nm_per_rad: float = positive()
    damping_nms_per_rad: float = nonnegative()
    standing_pose_rad: dict[str, float]


@dataclasses.dataclass(frozen=True, kw_only=True)
class WalkerConfig:
    """``walker.yaml``, typed and checked (the registry parses it once)."""

    name: str
    base: Base
    geometry: Geometry
    masses_kg: dict[str, float] = positive()
    joint_limits_rad: dict[str, float] = positive()
    motor: Motor
    control: Control


def build_model(cfg: WalkerConfig) -> RobotModel:
    """Base box, per side a thigh (hip joint), a shank (knee joint) and a fixed sole that collides."""
    geom, masses, limits = cfg.geometry, cfg.masses_kg, cfg.joint_limits_rad
    thigh, shank, radius = geom.thigh_length_m, geom.shank_length_m, geom.link_radius_m
    foot = geom.foot
    sole_size = (foot.length_m, foot.width_m, foot.thickness_m)
    base = cfg.base
    links = [Link("base_link", [Solid("box", base.mass_kg, (0.0, 0.0, 0.0), base.size_m, True)])]
    joints = []
    for side, sign in zip(SIDES, (1.0, -1.0), strict=True):
        links += [
            Link(f"{side}_thigh", [cylinder_between(masses["thigh"], radius, 0.0, -thigh)]),
            Link(f"{side}_shank", [cylinder_between(masses["shank"], radius, 0.0, -shank)]),
            Link(f"{side}_foot", [Solid("box", masses["foot"], (0.0, 0.0, 0.0), sole_size, True)]),
        ]
        hip = (0.0, sign * geom.hip_origin_y_m, -base.size_m[2] / 2)
        for name, parent, child, origin in (
            ("hip", "base_link", "thigh", hip),
            ("knee", f"{side}_thigh", "shank", (0.0, 0.0, -thigh)),
        ):
            bound = limits[name]
            joints.append(
                Joint(
                    f"{side}_{name}",
                    "revolute",
                    parent,
                    f"{side}_{child}",
                    origin,
                    limit_rad=(-bound, bound),
                    effort_nm=cfg.motor.peak_nm,
                    velocity_rads=cfg.motor.no_load_speed_rads,
                )
            )
        joints.append(Joint(f"{side}_foot", "fixed", f"{side}_shank", f"{side}_foot", (0.0, 0.0, -shank)))
    return RobotModel("walker", links, joints)


def standing_height_m(cfg: WalkerConfig) -> float:
    """Base centre height with the soles flat on the ground in the standing pose."""
    import math

    geom, pose = cfg.geometry, cfg.control.standing_pose_rad
    thigh = geom.thigh_length_m * math.cos(pose["hip"])
    legs = thigh + geom.shank_length_m * math.cos(pose["hip"] + pose["knee"])
    return legs + cfg.base.size_m[2] / 2 + geom.foot.thickness_m / 2


def articulation(cfg: WalkerConfig | None = None, physics_dt_s: float = 0.005) -> Any:
    """The walker's :class:`ArticulationCfg`: both legs on one parallelogram linkage actuator."""
    from isaaclab.assets.articulation import ArticulationCfg

    from linkage_lab.actuators.linkage_actuator import linkage_actuator_cfg
    from linkage_lab.robots.spawn import local_usd_spawn

    cfg = SPEC.config() if cfg is None else cfg
    motor, control = cfg.motor, cfg.control
    legs = linkage_actuator_cfg(
        coupled_joints=[[f"{side}_hip", f"{side}_knee"] for side in SIDES],
        transmissions=["parallelogram"] * len(SIDES),
        control_space="motor",
        motor_peak_torque_nm=[motor.peak_nm] * 2,
        motor_no_load_speed_rads=[motor.no_load_speed_rads] * 2,
        stiffness=control.stiffness_nm_per_rad,
        damping=control.damping_nms_per_rad,
        friction=0.0,
        model="kin_only",
        reflected_inertia_kgm2=[motor.armature_kgm2] * 2,
        motor_damping_nms_per_rad=[0.0, 0.0],
        physics_dt_s=physics_dt_s,
    )
    pose = control.standing_pose_rad
    return ArticulationCfg(
        prim_path="{ENV_REGEX_NS}/Robot",
        spawn=local_usd_spawn("walker"),
        init_state=ArticulationCfg.InitialStateCfg(
            pos=(0.0, 0.0, standing_height_m(cfg) + 0.01),
            joint_pos={f".*_{joint}": value for joint, value in pose.items()},
            joint_vel={".*": 0.0},
        ),
        joint_ordering=JOINT_NAMES,
        soft_joint_pos_limit_factor=0.95,
        actuators={"legs": legs},
    )


SPEC = RobotSpec(
    name="walker",
    config_path=CONFIG,
    joint_names=JOINT_NAMES,
    config_type=WalkerConfig,
    description=build_model,
    articulation=lambda **options: articulation(**options),
)


def walker_env_cfg_class() -> type:
    """The velocity task's deltas for the walker (built lazily: Isaac Lab imports here)."""
    from isaaclab.managers import SceneEntityCfg
    from isaaclab.utils import configclass

    from linkage_lab.tasks.velocity.flat_env_cfg import LinkageVelocityFlatEnvCfg

    @configclass
    class WalkerFlatEnvCfg(LinkageVelocityFlatEnvCfg):
        def __post_init__(self):
            super().__post_init__()
            self.scene.robot = articulation(physics_dt_s=self.sim.dt)
            self.scene.num_envs = 4
            self.scene.env_spacing = 1.0
            self.actions.joint_pos.scale = 0.25
            self.actions.joint_pos.joint_names = [".*"]
            self.actions.joint_pos.preserve_order = True
            for term in (self.events.add_base_mass, self.events.base_com, self.events.base_external_force_torque):
                term.params["asset_cfg"] = SceneEntityCfg("robot", body_names="base_link")
            self.rewards.feet_air_time.params["sensor_cfg"].body_names = ".*_foot"
            self.rewards.undesired_contacts = None
            self.terminations.base_contact.params["sensor_cfg"].body_names = "base_link"

    return WalkerFlatEnvCfg


def register(asset_dir: Path) -> RobotSpec:
    """Register the walker (its generated URDF/USD under ``asset_dir``) and its velocity task."""
    spec = register_robot(dataclasses.replace(SPEC, asset_dir=Path(asset_dir)), replace=True)
    globals()["SPEC"] = spec
    if TASK not in gym.registry:
        gym.register(
            id=TASK,
            entry_point="isaaclab.envs:ManagerBasedRLEnv",
            disable_env_checker=True,
            kwargs={
                "env_cfg_entry_point": f"{__name__}:WalkerFlatEnvCfg",
                "rsl_rl_cfg_entry_point": f"{__name__}:WalkerPPORunnerCfg",
                "default_agent": "rsl_rl",
            },
        )
    return spec


def _runner_cfg() -> type:
    from isaaclab.utils import configclass

    from linkage_lab.tasks.velocity.agents import LinkageVelocityPPORunnerCfg

    @configclass
    class WalkerPPORunnerCfg(LinkageVelocityPPORunnerCfg):
        experiment_name = "walker_flat"
        max_iterations = 1

    return WalkerPPORunnerCfg


def __getattr__(name: str) -> Any:
    # The config classes are built on first use (Isaac Lab imports), as gym's entry points ask.
    builders = {"WalkerFlatEnvCfg": walker_env_cfg_class, "WalkerPPORunnerCfg": _runner_cfg}
    if name in builders:
        globals()[name] = builders[name]()
        return globals()[name]
    raise AttributeError(name)
