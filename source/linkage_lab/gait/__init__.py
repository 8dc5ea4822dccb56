"""Scripted gaits (a biped's walk, a quadruped's trot) and their planar leg IK.

The leg IK lives in :mod:`linkage_lab.kinematics.leg_ik`; each robot's gait settings in its package.

The sprint's rules and referee live with the race, in :mod:`linkage_lab.sprint.rules`.
"""

from __future__ import annotations

from linkage_lab.gait.biped import BipedGait, BipedGaitCfg, NaoReference, TorsoState, heading_turn, lateral_sway
from linkage_lab.gait.compensation import stance_sag_compensation
from linkage_lab.gait.phase import BIPED_PHASE_OFFSETS, gait_phase, is_swing, leg_phases
from linkage_lab.gait.trajectory import foot_trajectory, step_ramp
from linkage_lab.gait.trot import TrotGait, TrotGaitCfg, step_length_for_velocity
from linkage_lab.kinematics.leg_ik import (
    LegAngles,
    LegConvention,
    LegReachError,
    leg_convention,
    leg_fk,
    leg_ik,
    parallelogram_motor_angles,
    parallelogram_to_serial,
    planar_fk,
    planar_ik,
    serial_to_motor,
)

__all__ = [
    "BIPED_PHASE_OFFSETS",
    "BipedGait",
    "BipedGaitCfg",
    "LegAngles",
    "LegConvention",
    "LegReachError",
    "NaoReference",
    "TorsoState",
    "TrotGait",
    "TrotGaitCfg",
    "foot_trajectory",
    "gait_phase",
    "heading_turn",
    "is_swing",
    "lateral_sway",
    "leg_convention",
    "leg_fk",
    "leg_ik",
    "leg_phases",
    "parallelogram_motor_angles",
    "parallelogram_to_serial",
    "planar_fk",
    "planar_ik",
    "serial_to_motor",
    "stance_sag_compensation",
    "step_length_for_velocity",
    "step_ramp",
]
