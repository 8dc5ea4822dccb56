"""Marvin's feet for the base-velocity estimator: each sole's centre, below the ankle roll axis."""

from __future__ import annotations

from collections.abc import Sequence

from linkage_lab.deploy.base_velocity import BaseVelocityEstimator, EstimatorCfg, leg_chains
from linkage_lab.robots.marvin.config import MarvinConfig
from linkage_lab.robots.marvin.description import build_marvin_model
from linkage_lab.robots.marvin.joints import SIDES


def marvin_feet(cfg: MarvinConfig) -> dict[str, tuple[str, tuple[float, float, float]]]:
    """Foot name → (foot link, the sole's centre in that link's frame, m)."""
    geom = cfg.geometry
    sole = (float(geom.foot.length_m) / 2 - float(geom.foot.ankle_from_heel_m), 0.0, -float(geom.ankle_height_m))
    return {side: (f"{side}_foot", sole) for side in SIDES}


def marvin_base_velocity_estimator(
    cfg: MarvinConfig, joint_names: Sequence[str], estimator_cfg: EstimatorCfg | None = None
) -> BaseVelocityEstimator:
    """The estimator on Marvin's two legs, joints indexed in ``joint_names`` (the policy's order)."""
    return BaseVelocityEstimator(leg_chains(build_marvin_model(cfg), marvin_feet(cfg), joint_names), estimator_cfg)
