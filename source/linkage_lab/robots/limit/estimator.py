"""The Limit's feet for the base-velocity estimator: each sole's centre under its ankle."""

from __future__ import annotations

from collections.abc import Sequence

from linkage_lab.deploy.base_velocity import BaseVelocityEstimator, EstimatorCfg, leg_chains
from linkage_lab.robots.limit.config import LimitConfig
from linkage_lab.robots.limit.description import build_limit_model
from linkage_lab.robots.limit.joints import JOINT_NAMES, LEGS


def limit_feet(cfg: LimitConfig) -> dict[str, tuple[str, tuple[float, float, float]]]:
    """Foot name → (foot link, the sole plate's centre in that link's frame, m): the ankle's point
    moved forward by half the toe/heel difference and down to the sole."""
    foot = cfg.geometry.foot
    sole = ((foot.toe_ahead_m - foot.heel_behind_m) / 2, 0.0, -foot.sole_below_ankle_m)
    return {leg: (f"{leg}_foot", sole) for leg in LEGS}


def limit_base_velocity_estimator(
    cfg: LimitConfig, joint_names: Sequence[str] = JOINT_NAMES, estimator_cfg: EstimatorCfg | None = None
) -> BaseVelocityEstimator:
    """The estimator on the Limit's four legs, joints indexed in ``joint_names`` (canonical order)."""
    return BaseVelocityEstimator(leg_chains(build_limit_model(cfg), limit_feet(cfg), joint_names), estimator_cfg)
