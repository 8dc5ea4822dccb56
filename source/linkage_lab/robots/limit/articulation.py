"""The Limit quadruped as an Isaac Lab articulation, read from ``configs/robots/limit.yaml``."""

from __future__ import annotations

import math

from isaaclab.actuators import DCMotorCfg
from isaaclab.assets.articulation import ArticulationCfg

from linkage_lab.actuators.linkage_actuator import LinkageActuatorCfg, drive_cfg, linkage_actuator_cfg
from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.robots.limit.config import LimitConfig, limit_config
from linkage_lab.robots.limit.deploy_config import LEG_GAINS, MOTOR_COUPLING
from linkage_lab.robots.limit.joints import JOINT_NAMES, JOINT_TYPES, LEGS
from linkage_lab.robots.limit.s3n import TASK_PHYSICS_DT_S, leg_body
from linkage_lab.robots.spawn import local_usd_spawn

#: The ``q̈`` estimate of the hip/knee explicit S3N torque: the one that wins in contact. On the whole
#: Limit at its standing pose a loaded flat foot leaves only 10–47 % of the free leg's acceleration jump,
#: so ``torque_predicted`` (which adds the free leg's jump) errs more than ``previous`` (which ignores it):
#: jump ratio 1.2–2.8 for every stance leg, standing or trotting; the pinned-foot rig against the
#: closed-chain oracle confirms the argument (``python -m linkage_lab_experiments.validation.contact_estimate``).
#: The price: in swing ``torque_predicted`` tracks the oracle ~10x closer (same report,
#: docs/results/cpu_measurements.md).
LEG_ACCELERATION_ESTIMATE = "previous"


#: The explicit torque's ``q̈`` bounded by what the leg's motors can give each joint: a touchdown's impulse, seen one
#: step late, made explicit torques of 13-14 N·m above the 10 N·m motors (``python -m
#: linkage_lab_experiments.validation.explicit_bound`` measures it against the pinned-foot closed-chain oracle).
LEG_EXPLICIT_ACCELERATION_LIMIT = "actuator"


def standing_height_m(cfg: LimitConfig) -> float:
    """Base height above the ground in the standing pose (sole flat), from the leg geometry."""
    pose = cfg.control.standing_pose_rad
    geom = cfg.geometry
    thigh_angle = pose["hip"]
    shank_angle = pose["hip"] + pose["knee"]
    ankle_depth = geom.thigh_length_m * math.cos(thigh_angle) + geom.shank_length_m * math.cos(shank_angle)
    return ankle_depth + geom.foot.sole_below_ankle_m


def leg_actuator_cfg(cfg: LimitConfig, model: str, physics_dt_s: float = 0.005) -> LinkageActuatorCfg:
    """The hip + knee motors of the four legs: motor-space PD on ``q^p = J q^s``, per-motor limits,
    ``τ^s = Jᵀ τ^p`` and the S3N terms of ``model`` (``kin_only``, ``s3n_act`` or ``s3n_full``).

    Each motor's torque is capped by its joint's ``effort_nm`` and by the config's torque–speed line
    (``motor.stall_torque_nm`` to ``motor.no_load_speed_rads``) at its own speed ``θ̇ = J q̇``: the knee
    motor turns at ``q̇_hip + q̇_knee``, so a per-joint limit
    (Isaac Lab's ``velocity_limit``, which an explicit actuator never applies anyway) would be wrong.

    The motor inertia, damping and (for ``s3n_full``) ``M_p`` are placeholders until the Limit is
    identified (see the ``s3n`` section of the config).
    """
    limits = cfg.joint_limits
    s3n = cfg.s3n
    control = cfg.control
    mp = s3n.mp_kgm2
    standing = control.standing_pose_rad
    no_load_speed = cfg.motor.no_load_speed_rads
    return linkage_actuator_cfg(
        coupled_joints=[[f"{leg}_hip", f"{leg}_knee"] for leg in LEGS],
        transmissions=["parallelogram"] * len(LEGS),
        control_space="motor",
        # The robot's drivers each run a PD on their own motor, with the gains the export's wire gives them
        # (deploy_config.LEG_GAINS). Trained on the full K_m every physics step, a policy walked 27 % slow on the
        # closed chain (docs/results/2026-12-06_held_coupling.md).
        motor_coupling=MOTOR_COUPLING[LEG_GAINS],
        motor_peak_torque_nm=[limits["hip"].effort_nm, limits["knee"].effort_nm],
        motor_no_load_speed_rads=[no_load_speed, no_load_speed],
        motor_stall_torque_nm=[cfg.motor.stall_torque_nm] * 2,
        stiffness=control.stiffness_nm_per_rad,
        damping=control.damping_nms_per_rad,
        actuator_velocity_limit={
            ".*_hip": limits["hip"].velocity_rads,
            ".*_knee": limits["knee"].velocity_rads,
        },
        friction=0.0,
        model=model,
        reflected_inertia_kgm2=list(s3n.reflected_inertia_kgm2),
        motor_damping_nms_per_rad=list(s3n.damping_nms_per_rad),
        mp_kgm2=[mp.m11, mp.m12, mp.m22],
        # The serial tree's own link inertia, from the generated description the simulator loads.
        serial_link_kgm2=list(leg_body().serial_link_kgm2()),
        acceleration_estimate=LEG_ACCELERATION_ESTIMATE,
        explicit_acceleration_limit=LEG_EXPLICIT_ACCELERATION_LIMIT,
        reference_joint_pos_rad=[standing["hip"], standing["knee"]],
        physics_dt_s=physics_dt_s,
    )


def joint_target_clip(cfg: LimitConfig, margin_rad: float) -> dict[str, tuple[float, float]]:
    """Isaac Lab's action ``clip`` of the joint targets (rad, by joint-name pattern): each joint type's range
    shrunk by ``margin_rad`` at both ends.

    Raises:
        ValueError: A margin that is negative or leaves a range empty.
    """
    clip = {}
    for joint, limit in cfg.joint_limits.items():
        lower, upper = limit.range_rad[0] + margin_rad, limit.range_rad[1] - margin_rad
        if margin_rad < 0 or not lower < upper:
            raise ValueError(f"a target margin of {margin_rad} rad does not fit the {joint}'s range {limit.range_rad}")
        clip[f".*_{joint}"] = (lower, upper)
    return clip


def limit_articulation_cfg(
    cfg: LimitConfig | None = None, leg_model: str = "s3n_act", physics_dt_s: float = 0.005
) -> ArticulationCfg:
    """The Limit's :class:`ArticulationCfg`: local USD, canonical joint order, motors from the config.

    Args:
        cfg: The robot config; ``None``: :func:`~linkage_lab.robots.limit.limit_config`.
        leg_model: Dynamics model of the hip/knee linkage actuator (docs/design/s3n.md).
        physics_dt_s: The physics step (s) the S3N terms difference velocities over.
    """
    cfg = limit_config() if cfg is None else cfg
    limits = cfg.joint_limits
    control = cfg.control
    ankle = limits["ankle"]
    actuators = {
        "legs": leg_actuator_cfg(cfg, leg_model, physics_dt_s),
        # The ankle has its own motor (serial): a DC motor with the provisional reflected inertia, on
        # the same motor's torque-speed line (Isaac Lab's DC motor: the line from saturation_effort at rest to
        # its velocity limit as w0, capped at the effort limit).
        "ankles": DCMotorCfg(
            joint_names_expr=[".*_ankle"],
            saturation_effort=cfg.motor.stall_torque_nm,
            actuator_effort_limit=ankle.effort_nm,
            actuator_velocity_limit=cfg.motor.no_load_speed_rads,
            stiffness=control.ankle_stiffness_nm_per_rad,
            damping=control.ankle_damping_nms_per_rad,
            armature=cfg.s3n.ankle_armature_kgm2,
            friction=0.0,
        ),
    }
    pose = control.standing_pose_rad
    return ArticulationCfg(
        prim_path="{ENV_REGEX_NS}/Robot",
        spawn=local_usd_spawn("limit"),
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


def task_leg_drive_cfg(model: str, physics_dt_s: float = TASK_PHYSICS_DT_S) -> LinkageDriveCfg:
    """The drive config of one leg under ``model``, as the task's actuator builds it (imports Isaac Lab)."""
    cfg = leg_actuator_cfg(limit_config(), model, physics_dt_s)
    return drive_cfg(cfg, [float(cfg.stiffness)] * 2, [float(cfg.damping)] * 2)
