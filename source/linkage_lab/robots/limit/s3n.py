"""The Limit's leg for S3N: its serial leg bodies from the generated description, its S3N parameters
and its hip/knee drive (docs/design/s3n.md, docs/design/robots.md §1.2).

There is one leg body: the links of the description the URDF/USD is generated from, so the S3N
tables, the fidelity benchmark and the task's actuator all see the inertia the simulator integrates.
The generic code reaches these through the Limit's ``SPEC.extras`` (``leg_body``, ``s3n_cfg``,
``leg_drive_cfg``, ``leg_task``, ``task_leg_drive_cfg``, ``stance_mass_kg``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from linkage_lab.description.model import combine_solids
from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import S3NCfg, S3NModel
from linkage_lab.dynamics.serial_leg import LegBody, PlanarLink
from linkage_lab.robots.limit.config import LimitConfig, limit_config
from linkage_lab.robots.limit.description import build_limit_model

#: The task whose leg the Isaac Lab cross-checks drive, and its physics step (s). Isaac Lab computes the drives' PD
#: torque once per physics step and holds it over the step; the robot's drivers update it at kHz. At 5 ms the held PD
#: made the shipped policy's turn on the spot swing at yaw RMS 0.144 / 0.144 rad/s and turn one way faster
#: (+0.308 / -0.257 rad/s); the same policy at 2.5 ms (contacts unchanged, :data:`TASK_CONTACT_SOLREF`) swung at
#: 0.116 / 0.116 and turned +0.302 / -0.287 (policies/experiments/limit_physics_step/).
TASK = "LinkageLab-Velocity-Flat-Limit"
TASK_PHYSICS_DT_S = 0.0025
#: The feet's contact with the floor as MuJoCo's ``solref`` (time constant s, damping ratio). Isaac Lab's Newton shapes
#: (ke 160000 N/m, kd 1100 N s/m) ask for (0.0018 s, 1.375), which MuJoCo-Warp raises to twice the physics step: the
#: contact then stiffened fourfold from 5 ms to 2.5 ms, and the shipped policy's least-loaded foot fell from 20 % to
#: 16 % of the time down. Set explicitly at what every Limit policy before trained on (5 ms: 0.01 s), the contact no
#: longer depends on the step. (The closed-chain model keeps MuJoCo's default (0.02 s, 1.0); what the difference does
#: is measured in policies/experiments/limit_friction_cone/.)
TASK_CONTACT_SOLREF = (0.01, 1.375)
#: The leg the single-leg experiments drive (all four are alike).
DEFAULT_LEG = "fl"

_PlanarPart = tuple[float, np.ndarray, float]


def _rotate_xz(point: Sequence[float], angle: float) -> np.ndarray:
    """``(x, z)`` of a point of a child frame turned by ``angle`` (rad) about +y, in its parent frame.

    A positive angle swings a point below the axis towards −x (docs/design/robots.md §1.2).
    """
    c, s = math.cos(angle), math.sin(angle)
    return np.array([c * point[0] + s * point[1], -s * point[0] + c * point[1]])


def _lumped(parts: Sequence[_PlanarPart]) -> _PlanarPart:
    """Mass, x–z centre of mass and I_yy about it of rigid planar parts (parallel-axis theorem)."""
    mass = sum(p[0] for p in parts)
    com = sum(p[0] * p[1] for p in parts) / mass
    inertia = sum(p[2] + p[0] * float((p[1] - com) @ (p[1] - com)) for p in parts)
    return mass, com, inertia


def described_leg(
    leg: str = DEFAULT_LEG, ankle_rad: float | None = None, cfg: LimitConfig | None = None
) -> tuple[LegBody, float]:
    """The serial leg's bodies from the generated description (the link inertias Isaac Lab simulates).

    Upper link: the ``{leg}_hip`` link. Lower link: ``{leg}_thigh`` plus the ankle block and foot
    plate held rigid at ``ankle_rad``, lumped in the plane (I_yy and the x–z centre of mass; the
    parallel-axis theorem).

    Args:
        leg: ``fl``, ``fr``, ``rl`` or ``rr``.
        ankle_rad: Ankle angle the lower link is frozen at (rad); ``None``: the standing pose.
        cfg: The robot config; ``None``: :func:`~linkage_lab.robots.limit.limit_config`.

    Returns:
        The body, and the lower link's centre-of-mass offset across the link axis (m, +x), which
        :class:`LegBody` cannot carry (its centres of mass lie on the link axes).
    """

    cfg = limit_config() if cfg is None else cfg
    model = build_limit_model(cfg)
    if ankle_rad is None:
        ankle_rad = cfg.control.standing_pose_rad["ankle"]
    links = {link.name: link for link in model.links}
    joints = {joint.name: joint for joint in model.joints}

    def planar(link_name: str, origin_xz: Sequence[float] = (0.0, 0.0), angle: float = 0.0) -> _PlanarPart:
        mass, com, inertia = combine_solids(links[link_name].solids)
        return mass, np.asarray(origin_xz) + _rotate_xz((com[0], com[2]), angle), float(inertia[1, 1])

    knee, ankle, foot = joints[f"{leg}_knee"], joints[f"{leg}_ankle"], joints[f"{leg}_foot"]
    ankle_xz = (ankle.origin_m[0], ankle.origin_m[2])
    foot_xz = np.asarray(ankle_xz) + _rotate_xz((foot.origin_m[0], foot.origin_m[2]), ankle_rad)
    upper_mass, upper_com, upper_inertia = planar(knee.parent)
    lower_mass, lower_com, lower_inertia = _lumped(
        [planar(knee.child), planar(ankle.child, ankle_xz, ankle_rad), planar(foot.child, foot_xz, ankle_rad)]
    )
    body = LegBody(
        thigh=PlanarLink(upper_mass, -float(upper_com[1]), upper_inertia),
        shank=PlanarLink(lower_mass, -float(lower_com[1]), lower_inertia),
        thigh_length_m=-knee.origin_m[2],
        shank_length_m=-ankle.origin_m[2],
    )
    return body, float(lower_com[0])


def leg_body(leg: str = DEFAULT_LEG, ankle_rad: float | None = None, cfg: LimitConfig | None = None) -> LegBody:
    """The Limit's serial leg body (:func:`described_leg` without the across-axis offset)."""
    return described_leg(leg, ankle_rad, cfg)[0]


def s3n_cfg(model: S3NModel = "s3n_full", cfg: LimitConfig | None = None) -> S3NCfg:
    """The Limit's S3N parameters: the ``s3n`` section of its config (paper placeholders until the
    bench identification) and the serial link inertia of :func:`leg_body`."""
    cfg = limit_config() if cfg is None else cfg
    section = cfg.s3n
    mp = section.mp_kgm2
    return S3NCfg(
        model=model,
        reflected_inertia_kgm2=section.reflected_inertia_kgm2,
        motor_damping_nms_per_rad=section.damping_nms_per_rad,
        mp_kgm2=(mp.m11, mp.m12, mp.m22),
        serial_link_kgm2=leg_body(cfg=cfg).serial_link_kgm2(),
    )


def leg_drive_cfg(model: S3NModel = "s3n_full", **overrides: Any) -> LinkageDriveCfg:
    """The Limit's hip/knee drive from its config: joint-space PD with the ``control`` gains, the
    hip/knee effort limits per motor, S3N parameters of :func:`s3n_cfg` (placeholders) split at the
    standing pose. ``overrides`` replace any :class:`LinkageDriveCfg` field."""
    from dataclasses import replace

    cfg = limit_config()
    control, limits = cfg.control, cfg.joint_limits
    kp, kd = control.stiffness_nm_per_rad, control.damping_nms_per_rad
    standing = control.standing_pose_rad
    base = LinkageDriveCfg(
        s3n=s3n_cfg(model, cfg),
        control_space="joint",
        joint_kp=(kp, kp),
        joint_kd=(kd, kd),
        motor_peak_torque_nm=(limits["hip"].effort_nm, limits["knee"].effort_nm),
        reference_joint_pos_rad=(standing["hip"], standing["knee"]),
    )
    return replace(base, **overrides)


def leg_joint_names(leg: str = DEFAULT_LEG) -> tuple[str, str, str]:
    """``(hip, knee, ankle)`` joint names of ``leg`` in the articulation."""
    return f"{leg}_hip", f"{leg}_knee", f"{leg}_ankle"


def stance_mass_kg() -> float:
    """Half the Limit's mass less one leg below the hip: what a stance leg carries in a trot (kg)."""
    cfg = limit_config()
    masses = cfg.masses_kg
    base = cfg.base.mass_kg
    per_leg = sum(dataclasses.astuple(masses))
    below_hip = per_leg - masses.hip_knee_motors_on_base
    return 0.5 * (base + 4.0 * per_leg) - below_hip
