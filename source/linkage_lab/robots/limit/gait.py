"""The Limit's trot settings: geometry, joint table, trot pairs and limits from its config."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from linkage_lab.gait.trot import TrotGaitCfg
from linkage_lab.kinematics.leg_ik import LegConvention
from linkage_lab.kinematics.leg_ik import leg_convention as sagittal_convention
from linkage_lab.robots.limit.config import limit_config


def leg_convention() -> LegConvention:
    """The Limit's legs: all joints about the config's ``joint_axis``, knee behind the leg line."""
    config = limit_config()
    return sagittal_convention([config.geometry.joint_axis] * 3, config.control.standing_pose_rad["knee"])


def limit_trot_cfg(**overrides: Any) -> TrotGaitCfg:
    """The Limit's trot: geometry, joint table, trot pairs and limits from ``configs/robots/limit.yaml``.

    Args:
        **overrides: Any :class:`TrotGaitCfg` field.
    """
    config = limit_config()
    table = config.joint_table
    legs = table.leg_order
    pair_offset = {leg: 0.0 for leg in table.trot_pairs["A"]} | {leg: math.pi for leg in table.trot_pairs["B"]}
    limits = {}
    for leg in legs:
        for joint in table.joint_order:
            limits[f"{leg}_{joint}"] = config.joint_limits[joint].range_rad
    cfg = TrotGaitCfg(
        thigh_length_m=config.geometry.thigh_length_m,
        shank_length_m=config.geometry.shank_length_m,
        leg_convention=leg_convention(),
        leg_names=legs,
        joint_names=tuple(limits),
        phase_offsets_rad=tuple(pair_offset[leg] for leg in legs),
        joint_limits_rad=limits,
    )
    return replace(cfg, **overrides)
