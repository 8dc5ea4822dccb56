"""The standalone serial leg and the closed-chain oracle on the generated Limit leg, for cross-checks."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from linkage_lab.dynamics.drive import LinkageDrive, LinkageDriveCfg
from linkage_lab.dynamics.fidelity import FidelityCfg
from linkage_lab.dynamics.oracle import OracleCfg, ParallelogramOracle
from linkage_lab.dynamics.s3n import S3NCfg
from linkage_lab.dynamics.serial_leg import LegBody, MujocoSerialLeg, PlanarLink
from linkage_lab.kinematics.transmission import PARALLELOGRAM_LEG_JACOBIAN, parallelogram_leg

#: Serial → motor coordinates of the parallelogram leg, ``θ = J q``.
_J = np.asarray(PARALLELOGRAM_LEG_JACOBIAN, dtype=float)


@dataclass
class LegRun:
    """One chirp run, sampled before each physics step; joints ``(hip, knee)``."""

    joint_pos: np.ndarray
    """Serial joint positions (rad), ``(T, 2)``."""
    joint_torque: np.ndarray
    """Total serial torque applied to the joints, ``Jᵀ τ_m + τ_S3N`` (N·m), ``(T, 2)``."""
    actuator_torque: np.ndarray
    """The motors' PD torque in joint coordinates before the limits, ``Jᵀ τ_m*`` (N·m), ``(T, 2)``:
    the quantity comparable with the oracle (S3N's explicit torque stands in for inertia the
    oracle has physically)."""
    info: dict = field(default_factory=dict)
    """Side facts of the run (Isaac: physics step, armature, ankle deviation, peak joint speed)."""


def _rotate_xz(point, angle: float) -> np.ndarray:
    """``(x, z)`` of a point of a child frame turned by ``angle`` (rad) about +y, in its parent frame.

    A positive angle swings a point below the axis towards −x (robots.md §1.2).
    """
    c, s = math.cos(angle), math.sin(angle)
    return np.array([c * point[0] + s * point[1], -s * point[0] + c * point[1]])


def urdf_leg_body(leg: str = "fl", ankle_rad: float | None = None, robot: str = "limit") -> tuple[LegBody, float]:
    """The serial leg's bodies from the generated description (the link inertias Isaac Lab simulates).

    Upper link: the ``{leg}_hip`` link. Lower link: ``{leg}_thigh`` plus the ankle block and foot
    plate held rigid at ``ankle_rad`` (default: the standing pose), lumped in the plane (I_yy and the
    x–z centre of mass; the parallel-axis theorem).

    Returns:
        The body, and the lower link's centre-of-mass offset across the link axis (m, +x), which
        :class:`LegBody` cannot carry (its centres of mass lie on the link axes).
    """
    from linkage_lab.config import load_robot_config
    from linkage_lab.description.build import build_model
    from linkage_lab.description.model import combine_solids

    model = build_model(robot)
    if ankle_rad is None:
        ankle_rad = float(load_robot_config(robot)["control"]["standing_pose_rad"]["ankle"])
    links = {link.name: link for link in model.links}
    joints = {joint.name: joint for joint in model.joints}

    def planar(link_name: str, origin_xz=(0.0, 0.0), angle: float = 0.0) -> tuple[float, np.ndarray, float]:
        mass, com, inertia = combine_solids(links[link_name].solids)
        return mass, np.asarray(origin_xz) + _rotate_xz((com[0], com[2]), angle), float(inertia[1, 1])

    def lumped(parts: Sequence[tuple[float, np.ndarray, float]]) -> tuple[float, np.ndarray, float]:
        mass = sum(p[0] for p in parts)
        com = sum(p[0] * p[1] for p in parts) / mass
        inertia = sum(p[2] + p[0] * float((p[1] - com) @ (p[1] - com)) for p in parts)
        return mass, com, inertia

    knee, ankle, foot = joints[f"{leg}_knee"], joints[f"{leg}_ankle"], joints[f"{leg}_foot"]
    thigh_length = -knee.origin_m[2]
    ankle_xz = (ankle.origin_m[0], ankle.origin_m[2])
    foot_xz = np.asarray(ankle_xz) + _rotate_xz((foot.origin_m[0], foot.origin_m[2]), ankle_rad)
    upper_mass, upper_com, upper_inertia = planar(knee.parent)
    lower_mass, lower_com, lower_inertia = lumped(
        [planar(knee.child), planar(ankle.child, ankle_xz, ankle_rad), planar(foot.child, foot_xz, ankle_rad)]
    )
    body = LegBody(
        thigh=PlanarLink(upper_mass, -float(upper_com[1]), upper_inertia),
        shank=PlanarLink(lower_mass, -float(lower_com[1]), lower_inertia),
        thigh_length_m=thigh_length,
        shank_length_m=-ankle.origin_m[2],
    )
    return body, float(lower_com[0])


def run_standalone_leg(drive_cfg: LinkageDriveCfg, body: LegBody, joint_targets: np.ndarray, dt: float) -> LegRun:
    """The serial MuJoCo leg under :class:`LinkageDrive`, a PD update every step of ``dt`` (s).

    The leg integrates damping implicitly (MuJoCo's ``eulerdamp``, on in the Limit task's MuJoCo-Warp
    solver) rather than :class:`MujocoSerialLeg`'s explicit damping, so both sides take the same step.
    """
    import mujoco

    drive = LinkageDrive(drive_cfg, parallelogram_leg())
    leg = MujocoSerialLeg(body, drive.native_armature().tolist(), drive.native_damping().tolist(), dt)
    leg.model.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_EULERDAMP)
    leg.reset(joint_targets[0])
    return drive_loop(
        drive,
        joint_targets,
        dt,
        lambda: (leg.joint_pos, leg.joint_vel),
        lambda out: leg.step(out.joint_torque[0].numpy()),
    )


def run_oracle_leg(drive_cfg: LinkageDriveCfg, body: LegBody, joint_targets: np.ndarray, dt: float) -> LegRun:
    """The closed-chain oracle with ``body``'s links, its motors driven by the same PD and limits.

    The controller is ``drive_cfg`` with Kin-Only and no motor terms: the oracle carries the motor
    inertia and damping physically on its motor joints, and the linkage inertia in its crank and rod.
    """
    s3n = drive_cfg.s3n
    oracle_cfg = OracleCfg(
        body=body,
        reflected_inertia_kgm2=tuple(s3n.reflected_inertia_kgm2),
        viscous_damping_nms_per_rad=tuple(s3n.viscous_damping_nms_per_rad),
    )
    oracle = ParallelogramOracle(FidelityCfg(timestep_s=dt, oracle=oracle_cfg).oracle_at_step())
    bare = S3NCfg(model="kin_only", reflected_inertia_kgm2=(0.0, 0.0), viscous_damping_nms_per_rad=(0.0, 0.0))
    drive = LinkageDrive(replace(drive_cfg, s3n=bare, acceleration_estimate="previous"), parallelogram_leg())
    oracle.reset(_J @ joint_targets[0])
    inverse = np.linalg.inv(_J)
    return drive_loop(
        drive,
        joint_targets,
        dt,
        lambda: (inverse @ oracle.motor_pos, inverse @ oracle.motor_vel),
        lambda out: oracle.step(out.motor_torque[0].numpy()),
    )


def drive_loop(drive: LinkageDrive, joint_targets: np.ndarray, dt: float, read: Callable, apply: Callable) -> LegRun:
    """Per step: ``read()`` the serial state ``(q, q̇)``, run ``drive``, ``apply(output)``; log."""
    targets = torch.from_numpy(np.asarray(joint_targets, dtype=np.float64))
    zero = torch.zeros(1, 2, dtype=torch.float64)
    log = {"q": [], "tau": [], "act": []}
    for step in range(len(targets)):
        joint_pos, joint_vel = (torch.from_numpy(np.asarray(x, dtype=np.float64))[None] for x in read())
        out = drive.compute(targets[step : step + 1], zero, joint_pos, joint_vel, dt)
        apply(out)
        log["q"].append(joint_pos[0].numpy())
        log["tau"].append(out.joint_torque[0].numpy())
        log["act"].append(drive.transmission.joint_torque(out.motor_torque_desired, joint_pos)[0].numpy())
    return LegRun(*(np.asarray(log[key]) for key in ("q", "tau", "act")))
