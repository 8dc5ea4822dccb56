"""The Limit quadruped as an Isaac Lab articulation, read from ``configs/robots/limit.yaml``."""

from __future__ import annotations

import math
from typing import Any

import isaaclab.sim as sim_utils
from isaaclab.actuators import DCMotorCfg
from isaaclab.assets.articulation import ArticulationCfg
from isaaclab_newton.sim.schemas import NewtonArticulationCfg
from isaaclab_physx.sim.schemas import PhysxArticulationCfg, PhysxRigidBodyCfg

from linkage_lab.config import load_robot_config
from linkage_lab.description.build import ensure_assets
from linkage_lab.robots.limit_joints import JOINT_NAMES, JOINT_TYPES


def standing_height_m(cfg: dict[str, Any]) -> float:
    """Base height above the ground in the standing pose (sole flat), from the leg geometry."""
    pose = cfg["control"]["standing_pose_rad"]
    geom = cfg["geometry"]
    thigh_angle = pose["hip"]
    shank_angle = pose["hip"] + pose["knee"]
    ankle_depth = geom["thigh_length_m"] * math.cos(thigh_angle) + geom["shank_length_m"] * math.cos(shank_angle)
    return ankle_depth + geom["foot"]["sole_below_ankle_m"]


def limit_articulation_cfg(cfg: dict[str, Any] | None = None) -> ArticulationCfg:
    """The Limit's :class:`ArticulationCfg`: local USD, canonical joint order, motors from the config.

    Args:
        cfg: The robot config; ``None`` loads ``configs/robots/limit.yaml``.
    """
    cfg = load_robot_config("limit") if cfg is None else cfg
    limits = cfg["joint_limits"]
    s3n = cfg["s3n"]
    control = cfg["control"]
    # Armature (reflected rotor inertia) on every joint. The kinematics-only serial model gives
    # each hip/knee joint its own motor's inertia; the S3N actuator changes this per model.
    armature = {
        ".*_hip": s3n["reflected_inertia_kgm2"][0],
        ".*_knee": s3n["reflected_inertia_kgm2"][1],
        ".*_ankle": s3n["ankle_armature_kgm2"],
    }
    actuators = {
        "legs": DCMotorCfg(
            joint_names_expr=[f".*_{j}" for j in JOINT_TYPES],
            saturation_effort={f".*_{j}": limits[j]["effort_nm"] for j in JOINT_TYPES},
            actuator_effort_limit={f".*_{j}": limits[j]["effort_nm"] for j in JOINT_TYPES},
            actuator_velocity_limit={f".*_{j}": limits[j]["velocity_rads"] for j in JOINT_TYPES},
            stiffness=control["stiffness_nm_per_rad"],
            damping=control["damping_nms_per_rad"],
            armature=armature,
            friction=0.0,
        )
    }
    pose = control["standing_pose_rad"]
    return ArticulationCfg(
        prim_path="{ENV_REGEX_NS}/Robot",
        spawn=sim_utils.UsdFileCfg(
            usd_path=str(ensure_assets("limit")),
            activate_contact_sensors=True,
            rigid_props=PhysxRigidBodyCfg(disable_gravity=False, max_depenetration_velocity=1.0),
            articulation_props=[
                PhysxArticulationCfg(enabled_self_collisions=False, solver_position_iteration_count=4),
                NewtonArticulationCfg(self_collision_enabled=False),
            ],
        ),
        init_state=ArticulationCfg.InitialStateCfg(
            pos=(0.0, 0.0, standing_height_m(cfg) + 0.01),
            joint_pos={f".*_{j}": pose[j] for j in JOINT_TYPES},
            joint_vel={".*": 0.0},
        ),
        # Pin the public joint order to the canonical table, whatever the backend's own order.
        joint_ordering=JOINT_NAMES,
        soft_joint_pos_limit_factor=0.95,
        actuators=actuators,
    )
