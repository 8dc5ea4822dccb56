"""The Limit's trot term pairs the diagonal feet, read from the robot config, and is off in the recipe."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.unit


def test_trot_pairs_are_the_diagonals_of_the_hip_layout():
    from linkage_lab.robots.limit.config import limit_config
    from linkage_lab.tasks.velocity.config.limit.env_cfg import LimitFlatEnvCfg

    cfg = LimitFlatEnvCfg()
    term = cfg.rewards.trot_gait
    assert term.weight == 0.0  # the recipe leaves it off; a fine-tune turns it on by override
    pairs = term.params["synced_feet_pair_names"]
    assert len(pairs) == 2 and all(len(pair) == 2 for pair in pairs)
    legs = limit_config().legs
    feet = [foot for pair in pairs for foot in pair]
    assert sorted(feet) == sorted(f"{leg}_foot" for leg in ("fl", "fr", "rl", "rr"))
    for first, second in pairs:
        a = legs[first.removesuffix("_foot")].hip_origin_m
        b = legs[second.removesuffix("_foot")].hip_origin_m
        # Diagonal: one front and one rear hip, one on each side.
        assert a[0] * b[0] < 0 and a[1] * b[1] < 0
