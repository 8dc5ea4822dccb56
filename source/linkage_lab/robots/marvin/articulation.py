"""Marvin as an Isaac Lab articulation, read from ``configs/robots/marvin.yaml``.

The ankle is two serial joints (pitch then roll) driven by one :class:`LinkageActuator` per robot
in one of two modes (docs/design/robots.md §2.4, docs/design/ankle_linkage.md §5):

* ``box``: the linkage-ratio limits of the serial model — per-axis torque ``2 T ratio`` and speed
  ``ω₀ / ratio``, independent of each other and of the pose;
* ``diamond``: the real feasible set — each step the commanded joint torque is mapped to motor
  torques through ``J(q)⁻ᵀ`` at the current pose, each motor is clipped to its limit, and the
  result is mapped back with ``J(q)ᵀ``.

The diamond ankle's inertia is the motors' reflected inertia through the linkage, ``Jᵀ(q) diag(J̄) J(q)``
(``reflected_armature``, the default), or one motor's ``J̄`` per joint; the box keeps the latter.
"""

from __future__ import annotations

from isaaclab.actuators import DCMotorCfg
from isaaclab.assets.articulation import ArticulationCfg

from linkage_lab.actuators.linkage_actuator import LinkageActuatorCfg, linkage_actuator_cfg
from linkage_lab.kinematics.ankle_limits import box_limits
from linkage_lab.kinematics.rsu_geometry import ankle_geometry
from linkage_lab.robots.ankles import load_ankle_geometry
from linkage_lab.robots.marvin.config import MarvinConfig, marvin_config
from linkage_lab.robots.marvin.joints import ARM_JOINTS, JOINT_NAMES, LEG_JOINTS, SIDES  # noqa: F401
from linkage_lab.robots.spawn import local_usd_spawn

ANKLE_MODES = ("diamond", "box")
#: Whether the diamond ankle carries the two motors' pose-dependent reflected inertia
#: ``Jᵀ(q) diag(J̄) J(q)`` (docs/design/s3n.md §5) by default. Chosen against the closed-chain oracle of the ankle
#: (``python -m linkage_lab_experiments.validation.ankle_armature``; docs/results/cpu_measurements.md): over chirps
#: about five poses of the
#: range its mean position RMSE is 0.0021 / 0.0006 rad (pitch / roll), against 0.0097 / 0.0013 with one
#: motor's ``J̄`` per joint (half the true pitch inertia at neutral) and 0.0033 / 0.0010 with the
#: neutral diagonal held constant.
ANKLE_REFLECTED_ARMATURE = True
#: Low-pass time constant (s) of the acceleration the pose-dependent part multiplies. Unfiltered (the
#: paper's recipe) the explicit loop limit-cycles near the toes-down corners of the range at the 5 ms
#: step (loop gain up to 1.1); 10 ms holds every pose of the range and keeps most of the fidelity.
ANKLE_ACCEL_FILTER_S = 0.01


def ankle_box_limits():
    """The serial model's per-axis ankle limits, computed from the linkage geometry and motor."""

    return box_limits(load_ankle_geometry("marvin", side="left"))


def ankle_actuator_cfg(
    cfg: MarvinConfig,
    mode: str = "diamond",
    physics_dt_s: float = 0.005,
    saturation_mode: str = "clip",
    control_space: str = "joint",
    reflected_armature: bool = ANKLE_REFLECTED_ARMATURE,
) -> LinkageActuatorCfg:
    """The two ankles' actuator in ``mode`` (``diamond`` or ``box``).

    Args:
        cfg: Marvin's robot config.
        mode: ``diamond`` (per-motor limits through ``J(q)``) or ``box`` (per-axis ratio limits).
        physics_dt_s: Physics step (s).
        saturation_mode: ``clip`` each motor (hardware) or ``scale`` (direction-preserving).
        control_space: ``joint`` (the policy's gains as is) or ``motor`` (``K_m = J⁻ᵀ K_j J⁻¹``).
        reflected_armature: Model the two motors' pose-dependent reflected inertia
            ``Jᵀ(q) diag(J̄) J(q)`` (diamond mode only): its neutral diagonal becomes joint armature,
            the rest an explicit torque on the low-passed acceleration (:data:`ANKLE_ACCEL_FILTER_S`).
            Off: each ankle joint gets one motor's ``J̄`` as armature. Default:
            :data:`ANKLE_REFLECTED_ARMATURE`.
    """
    if mode not in ANKLE_MODES:
        raise ValueError(f"unknown ankle mode {mode!r}; expected one of {ANKLE_MODES}")
    motor = cfg.motors[ankle_geometry(cfg.ankle_linkage, cfg.motors).motor.name]
    control = cfg.control
    common = dict(
        coupled_joints=[[f"{s}_ankle_pitch", f"{s}_ankle_roll"] for s in SIDES],
        stiffness=control.stiffness["ankle"],
        damping=control.damping["ankle"],
        friction=0.0,
        saturation_mode=saturation_mode,
        reflected_inertia_kgm2=[motor.armature_kgm2] * 2,
        motor_damping_nms_per_rad=[0.0, 0.0],
        physics_dt_s=physics_dt_s,
    )
    if mode == "box":
        box = ankle_box_limits()
        return linkage_actuator_cfg(
            transmissions=["identity", "identity"],
            control_space="joint",
            motor_peak_torque_nm=[box.pitch_peak_nm, box.roll_peak_nm],
            motor_no_load_speed_rads=[box.pitch_speed_rads, box.roll_speed_rads],
            actuator_velocity_limit={
                ".*_ankle_pitch": box.pitch_speed_rads,
                ".*_ankle_roll": box.roll_speed_rads,
            },
            model="kin_only",
            **common,
        )
    return linkage_actuator_cfg(
        transmissions=[f"marvin_ankle_{s}" for s in SIDES],
        control_space=control_space,
        motor_peak_torque_nm=[motor.peak_nm] * 2,
        motor_no_load_speed_rads=[motor.speed_rads] * 2,
        model="s3n_act" if reflected_armature else "kin_only",
        accel_filter_time_constant_s=ANKLE_ACCEL_FILTER_S if reflected_armature else None,
        **common,
    )


def _dc_motor(cfg: MarvinConfig, joints: dict[str, str], group: str) -> DCMotorCfg:
    """A DC motor group for directly driven joints: ``{joint regex: motor name}``."""
    motors = cfg.motors
    control = cfg.control
    return DCMotorCfg(
        joint_names_expr=list(joints),
        saturation_effort={j: motors[m].peak_nm for j, m in joints.items()},
        actuator_effort_limit={j: motors[m].peak_nm for j, m in joints.items()},
        actuator_velocity_limit={j: motors[m].speed_rads for j, m in joints.items()},
        armature={j: motors[m].armature_kgm2 for j, m in joints.items()},
        stiffness=control.stiffness[group],
        damping=control.damping[group],
        friction=0.0,
    )


def standing_height_m(cfg: MarvinConfig) -> float:
    """Pelvis (hip line) height above the ground in the standing pose, sole flat."""
    import math

    geom = cfg.geometry
    pose = cfg.control.standing_pose_rad
    thigh = geom.thigh_length_m * math.cos(pose["hip_pitch"])
    shin = geom.shin_length_m * math.cos(pose["hip_pitch"] + pose["knee"])
    return thigh + shin + geom.ankle_height_m


def marvin_articulation_cfg(
    cfg: MarvinConfig | None = None,
    ankle_mode: str = "diamond",
    physics_dt_s: float = 0.005,
    **ankle_options,
) -> ArticulationCfg:
    """Marvin's :class:`ArticulationCfg` with the ankles in ``ankle_mode`` (``diamond`` or ``box``)."""
    cfg = marvin_config() if cfg is None else cfg
    legs = cfg.leg_joints
    hip_knee = {f".*_{j}": legs[j].motor for j in ("hip_yaw", "hip_roll", "hip_pitch")}
    knee = {".*_knee": legs["knee"].motor}
    arms = {f".*_{j}": cfg.arm_joints[j].motor for j in ARM_JOINTS}
    pose = cfg.control.standing_pose_rad
    return ArticulationCfg(
        prim_path="{ENV_REGEX_NS}/Robot",
        spawn=local_usd_spawn("marvin"),
        init_state=ArticulationCfg.InitialStateCfg(
            pos=(0.0, 0.0, standing_height_m(cfg) + 0.02),
            joint_pos={f".*_{j}": v for j, v in pose.items()},
            joint_vel={".*": 0.0},
        ),
        joint_ordering=JOINT_NAMES,
        soft_joint_pos_limit_factor=0.95,
        actuators={
            "hips": _dc_motor(cfg, hip_knee, "hip"),
            "knees": _dc_motor(cfg, knee, "knee"),
            "arms": _dc_motor(cfg, arms, "arm"),
            "ankles": ankle_actuator_cfg(cfg, ankle_mode, physics_dt_s, **ankle_options),
        },
    )
