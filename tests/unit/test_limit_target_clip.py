"""The Limit's joint targets stay inside its joints' ranges, as the deploy runtime keeps them (the export records
Isaac Lab's clip as ``action_target_clip``; ``tests/unit/test_deploy_limit.py`` holds the runtime to it)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.unit


def test_clip_is_each_range_shrunk_by_the_margin():
    from linkage_lab.robots.limit.articulation import joint_target_clip
    from linkage_lab.robots.limit.config import limit_config
    from linkage_lab.robots.registry import load_robot_config

    raw = load_robot_config("limit")["joint_limits"]  # the YAML itself, not the parsed config
    clip = joint_target_clip(limit_config(), 0.02)
    assert set(clip) == {".*_hip", ".*_knee", ".*_ankle"}
    for joint, limit in raw.items():
        lower, upper = limit["range_rad"]
        assert clip[f".*_{joint}"] == pytest.approx((lower + 0.02, upper - 0.02))
    # The standing pose lies inside every clip: holding it needs no target at a stop.
    pose = limit_config().control.standing_pose_rad
    assert all(clip[f".*_{j}"][0] < q < clip[f".*_{j}"][1] for j, q in pose.items())


@pytest.mark.parametrize("margin", [-0.01, 0.7])
def test_a_margin_that_does_not_fit_is_refused(margin):
    from linkage_lab.robots.limit.articulation import joint_target_clip
    from linkage_lab.robots.limit.config import limit_config

    # 0.7 rad at both ends empties the knee's 1.32 rad range and the ankle's 1.2 rad one.
    with pytest.raises(ValueError, match="does not fit"):
        joint_target_clip(limit_config(), margin)


def test_the_task_clips_its_targets_by_its_margin():
    from linkage_lab.robots.limit.articulation import joint_target_clip
    from linkage_lab.robots.limit.config import limit_config
    from linkage_lab.tasks.velocity.config.limit.env_cfg import TARGET_STOP_MARGIN_RAD, LimitFlatEnvCfg

    cfg = LimitFlatEnvCfg()
    assert 0.0 < TARGET_STOP_MARGIN_RAD < 0.05
    assert cfg.actions.joint_pos.clip == joint_target_clip(limit_config(), TARGET_STOP_MARGIN_RAD)
