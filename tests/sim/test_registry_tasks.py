"""Every registered project task builds and steps on the CPU (the registry is enumerated)."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.tasks.registry import project_task_ids

pytestmark = pytest.mark.sim


def test_registry_is_not_empty():
    ids = project_task_ids()
    assert "LinkageLab-Velocity-Flat-Limit" in ids
    assert all(task.startswith("LinkageLab-") for task in ids)


@pytest.mark.parametrize("task", project_task_ids())
def test_task_steps_100_zero_action_steps_without_nan(task, build_env, zero_actions):
    with build_env(task, num_envs=4) as (env, _):
        obs, _ = env.reset()
        actions = zero_actions(env)
        for _ in range(100):
            obs, reward, terminated, truncated, _ = env.step(actions)
            assert torch.isfinite(obs["policy"]).all(), f"{task}: NaN/inf in observations"
            assert torch.isfinite(reward).all(), f"{task}: NaN/inf in rewards"
        joint_pos = env.unwrapped.scene["robot"].data.joint_pos.torch
        assert torch.isfinite(joint_pos).all()
