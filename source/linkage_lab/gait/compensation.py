"""The stance leg's static sag under a position-controlled gait, from the biped's statics.

In single support the stance leg's joints carry the whole robot. A PD joint holds a static load
``τ`` only with an error ``τ / K_p``, so every stance joint sags by that much and the pelvis drops
towards the swing side. :func:`stance_sag_compensation` computes those sags at mid single support
from the robot's mass model (numpy statics, no simulator): the reference for the gait's
``stance_compensation_rad``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import torch

from linkage_lab.description.model import RobotModel
from linkage_lab.gait.biped import BipedGait, BipedGaitCfg, TorsoState
from linkage_lab.statics.tree import STANDARD_GRAVITY, KinematicTree

#: The stance leg joints that sag, and the gain group of each (``control.stiffness`` of the robot config).
SAG_JOINTS: dict[str, str] = {
    "hip_roll": "hip",
    "hip_pitch": "hip",
    "knee": "knee",
    "ankle_pitch": "ankle",
    "ankle_roll": "ankle",
}


def stance_sag_compensation(
    cfg: BipedGaitCfg, model: RobotModel, stiffness: Mapping[str, float], gravity_mps2: float | None = None
) -> dict[str, float]:
    """Target offsets that cancel the left stance leg's static sag at mid single support (rad).

    The pose is the gait's own at ``ψ_L = 3π/2`` (the right foot at the top of its swing) with the
    torso upright and no feedback; each stance joint's static torque ``τ`` (the weight of all links
    above it, :meth:`~linkage_lab.statics.tree.KinematicTree.grounded_joint_torque`) over its
    ``K_p`` is the offset, in the left leg's joint signs (the gait mirrors roll for the right leg).

    Args:
        cfg: The gait; its own ``stance_compensation_rad`` is ignored.
        model: The biped's serial description (its mass model carries the stance).
        stiffness: Its position gains ``K_p`` per joint group (``hip``, ``knee``, ``ankle``; N·m/rad).
        gravity_mps2: Gravitational acceleration (m/s²); ``None`` is standard gravity.
    """
    tree = KinematicTree(model)
    plain = replace(cfg, stance_compensation_rad=None, step_ramp_time_s=0.0, sway_ramp_time_s=0.0)
    zeros = torch.zeros(1, dtype=torch.float64)
    torso = TorsoState(zeros, zeros, zeros, zeros, zeros, zeros)
    # φ = π/2: the right leg (ψ_R = φ) is at mid swing, the left (ψ_L = φ + π) at mid stance.
    time_s = (math.pi / 2) / (2 * math.pi * cfg.frequency_hz)
    targets = BipedGait(plain).joint_targets(time_s, torso, 0.0)
    frames = tree.forward_kinematics({name: float(value) for name, value in targets.items()})
    gravity = STANDARD_GRAVITY if gravity_mps2 is None else gravity_mps2
    return {
        joint: tree.grounded_joint_torque(frames, f"left_{joint}", gravity) / stiffness[group]
        for joint, group in SAG_JOINTS.items()
    }
