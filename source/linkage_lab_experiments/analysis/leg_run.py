"""One drive loop for every simulated leg: the serial MuJoCo leg or the closed-chain oracle under
:class:`~linkage_lab.dynamics.drive.LinkageDrive`, a PD update every physics step.

The fidelity benchmark (:mod:`linkage_lab_experiments.analysis.fidelity`), the standalone leg of the Isaac Lab
cross-check (:mod:`linkage_lab_experiments.validation.standalone_leg`), the stance rig and the ankle oracle all
step their plants through :func:`drive_loop`, so they log the same quantities the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from linkage_lab.dynamics.drive import DriveOutput, LinkageDrive
from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import S3NCfg
from linkage_lab.dynamics.serial_leg import LegBody, MujocoSerialLeg
from linkage_lab.kinematics.transmission import PARALLELOGRAM_LEG_JACOBIAN, parallelogram_leg
from linkage_lab_experiments.analysis.oracle import OracleCfg, ParallelogramOracle

#: Serial → motor coordinates of the parallelogram leg, ``θ = J q``.
PARALLELOGRAM_J = np.asarray(PARALLELOGRAM_LEG_JACOBIAN, dtype=float)


@dataclass
class LegRun:
    """One run, sampled before each physics step; joints in the drive's serial order (e.g. hip, knee)."""

    joint_pos: np.ndarray
    """Serial joint positions (rad), ``(T, n)``."""
    joint_torque: np.ndarray
    """Total serial torque applied to the joints, ``Jᵀ τ_m + τ_S3N`` (N·m), ``(T, n)``."""
    actuator_torque: np.ndarray
    """The motors' PD torque in joint coordinates before the limits, ``Jᵀ τ_m*`` (N·m), ``(T, n)``:
    the quantity comparable with the oracle (S3N's explicit torque stands in for inertia the
    oracle has physically)."""
    info: dict = field(default_factory=dict)
    """Side facts of the run (Isaac: physics step, armature, ankle deviation, peak joint speed)."""
    joint_vel: np.ndarray | None = None
    """Serial joint velocities (rad/s), ``(T, n)``."""
    motor_torque: np.ndarray | None = None
    """Applied motor torques, after the limits (N·m), ``(T, n)``."""
    motor_torque_desired: np.ndarray | None = None
    """The PD's motor torques before the limits (N·m), ``(T, n)``."""


def drive_loop(
    drive: LinkageDrive,
    joint_targets: np.ndarray,
    dt: float,
    read: Callable[[], tuple[np.ndarray, np.ndarray]],
    apply: Callable[[DriveOutput], None],
) -> LegRun:
    """Per step: ``read()`` the serial state ``(q, q̇)``, run ``drive`` on this step's target, ``apply(output)``.

    Args:
        drive: The drive (its transmission maps the serial state to the motors).
        joint_targets: Serial position targets per step (rad), ``(T, n)``; velocity targets are zero.
        dt: Physics and PD step (s).
        read: Returns the plant's serial ``(q, q̇)`` (rad, rad/s).
        apply: Steps the plant with the drive's output (e.g. ``out.joint_torque`` on a serial tree,
            ``out.motor_torque`` on a closed chain).

    Returns:
        The logged run (state before each step, the torques of that step).
    """
    targets = torch.from_numpy(np.asarray(joint_targets, dtype=np.float64))
    zero = torch.zeros(1, targets.shape[-1], dtype=torch.float64)
    log: dict[str, list] = {key: [] for key in ("q", "qd", "tau", "act", "motor", "desired")}
    for step in range(len(targets)):
        joint_pos, joint_vel = (torch.from_numpy(np.asarray(x, dtype=np.float64))[None] for x in read())
        out = drive.compute(targets[step : step + 1], zero, joint_pos, joint_vel, dt)
        apply(out)
        log["q"].append(joint_pos[0].numpy())
        log["qd"].append(joint_vel[0].numpy())
        log["tau"].append(out.joint_torque[0].numpy())
        log["act"].append(drive.transmission.joint_torque(out.motor_torque_desired, joint_pos)[0].numpy())
        log["motor"].append(out.motor_torque[0].numpy())
        log["desired"].append(out.motor_torque_desired[0].numpy())
    arrays = {key: np.asarray(values) for key, values in log.items()}
    return LegRun(
        joint_pos=arrays["q"],
        joint_torque=arrays["tau"],
        actuator_torque=arrays["act"],
        joint_vel=arrays["qd"],
        motor_torque=arrays["motor"],
        motor_torque_desired=arrays["desired"],
    )


def oracle_at_step(oracle: OracleCfg, timestep_s: float) -> OracleCfg:
    """``oracle`` at physics step ``timestep_s``, its loop-closure time constant kept at ``≥ 2`` steps."""
    time_constant, damping_ratio = oracle.constraint_solref
    return replace(
        oracle, timestep_s=timestep_s, constraint_solref=(max(time_constant, 2.0 * timestep_s), damping_ratio)
    )


def bare_drive_cfg(drive_cfg: LinkageDriveCfg) -> LinkageDriveCfg:
    """``drive_cfg``'s PD and limits with no model terms: the controller of a plant that carries the
    motors' inertia and damping itself (Kin-Only with zero armature and damping)."""
    n = len(drive_cfg.s3n.reflected_inertia_kgm2)
    bare = S3NCfg(model="kin_only", reflected_inertia_kgm2=(0.0,) * n, motor_damping_nms_per_rad=(0.0,) * n)
    return replace(drive_cfg, s3n=bare, acceleration_estimate="previous", explicit_acceleration_limit="none")


def run_serial_leg(
    drive_cfg: LinkageDriveCfg, body: LegBody, joint_targets: np.ndarray, dt: float, implicit_damping: bool = False
) -> LegRun:
    """The serial MuJoCo leg (parallelogram transmission) under :class:`LinkageDrive`.

    Args:
        drive_cfg: The drive; its native armature and damping go on the leg's joints.
        body: The leg's links.
        joint_targets: Serial targets per step (rad), ``(T, 2)``; the leg starts at rest on the first.
        dt: Physics and PD step (s).
        implicit_damping: Integrate joint damping implicitly (MuJoCo's ``eulerdamp``, as the task's
            MuJoCo-Warp solver) instead of :class:`MujocoSerialLeg`'s explicit damping (the oracle's).
    """
    import mujoco

    drive = LinkageDrive(drive_cfg, parallelogram_leg())
    leg = MujocoSerialLeg(body, drive.native_armature().tolist(), drive.native_damping().tolist(), dt)
    if implicit_damping:
        leg.model.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_EULERDAMP)
    leg.reset(joint_targets[0])
    return drive_loop(
        drive,
        joint_targets,
        dt,
        lambda: (leg.joint_pos, leg.joint_vel),
        lambda out: leg.step(out.joint_torque[0].numpy()),
    )


def run_oracle_leg(oracle_cfg: OracleCfg, drive_cfg: LinkageDriveCfg, joint_targets: np.ndarray, dt: float) -> LegRun:
    """The closed-chain oracle, its motors driven by ``drive_cfg``'s PD and limits (:func:`bare_drive_cfg`).

    The oracle carries the motor inertia and damping physically on its motor joints, and the linkage
    inertia in its crank and rod. Its state is read in serial coordinates ``q = J⁻¹ θ``.

    Returns:
        The run; ``info["max_loop_violation_m"]`` is the largest loop-closure gap seen (m).
    """
    oracle = ParallelogramOracle(oracle_at_step(oracle_cfg, dt))
    drive = LinkageDrive(bare_drive_cfg(drive_cfg), parallelogram_leg())
    oracle.reset(PARALLELOGRAM_J @ np.asarray(joint_targets[0], dtype=float))
    inverse = np.linalg.inv(PARALLELOGRAM_J)
    violation = [0.0]

    def apply(out: DriveOutput) -> None:
        oracle.step(out.motor_torque[0].numpy())
        violation[0] = max(violation[0], oracle.constraint_violation_m())

    run = drive_loop(drive, joint_targets, dt, lambda: (inverse @ oracle.motor_pos, inverse @ oracle.motor_vel), apply)
    run.info["max_loop_violation_m"] = violation[0]
    return run
