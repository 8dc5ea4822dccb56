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


def limit_sole_corners(cfg: LimitConfig) -> dict[str, tuple[tuple[float, float, float], ...]]:
    """Foot name → the four corners of its sole plate in the foot link's frame (m): toe and heel, either edge.
    Trotting, the sole rolls over its toe or heel for much of its stance (on the closed chain at 0.3 m/s its
    centre moved 0.11 m/s forward on average while touching the ground), so the estimator measures the lowest
    corner."""
    foot = cfg.geometry.foot
    half_width, below = foot.width_m / 2, -foot.sole_below_ankle_m
    corners = tuple((x, y, below) for x in (foot.toe_ahead_m, -foot.heel_behind_m) for y in (half_width, -half_width))
    return {leg: corners for leg in LEGS}


def limit_base_velocity_estimator(
    cfg: LimitConfig, joint_names: Sequence[str] = JOINT_NAMES, estimator_cfg: EstimatorCfg | None = None
) -> BaseVelocityEstimator:
    """The estimator on the Limit's four legs, joints indexed in ``joint_names`` (canonical order)."""
    chains = leg_chains(build_limit_model(cfg), limit_feet(cfg), joint_names, limit_sole_corners(cfg))
    return BaseVelocityEstimator(chains, estimator_cfg)
