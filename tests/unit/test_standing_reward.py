"""The standing cost on stand-ins: a hand-summed joint deviation, charged only where the command asks to stand
(turning on the spot is not standing), and the Limit recipe leaving it off."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from linkage_lab.tasks.velocity.rewards import standing_joint_deviation_l1

pytestmark = pytest.mark.unit


def _env(joint_pos, default_pos, command):
    data = SimpleNamespace(
        joint_pos=SimpleNamespace(torch=joint_pos), default_joint_pos=SimpleNamespace(torch=default_pos)
    )
    return SimpleNamespace(
        scene={"robot": SimpleNamespace(data=data)},
        command_manager=SimpleNamespace(get_command=lambda name: {"base_velocity": command}[name]),
    )


def test_the_deviation_is_charged_only_on_a_standing_command():
    default = torch.tensor([[0.6, -1.2, 0.6]] * 4, dtype=torch.float64)
    offset = torch.tensor([0.1, -0.2, 0.05], dtype=torch.float64)  # |.| sums to 0.35 rad by hand
    # Four envs, the same pose off the standing one: told to stand; to walk 0.3 m/s; to turn on the spot 0.3 rad/s;
    # and a command inside both thresholds (0.03 m/s, 0.04 rad/s), which is standing.
    command = torch.tensor([[0.0, 0.0, 0.0], [0.3, 0.0, 0.0], [0.0, 0.0, 0.3], [0.03, 0.0, 0.04]], dtype=torch.float64)
    env = _env(default + offset, default, command)
    cost = standing_joint_deviation_l1(
        env, "base_velocity", asset_cfg=SimpleNamespace(name="robot", joint_ids=slice(None))
    )
    torch.testing.assert_close(cost, torch.tensor([0.35, 0.0, 0.0, 0.35], dtype=torch.float64))


def test_only_the_named_joints_count_and_the_standing_pose_costs_nothing():
    default = torch.zeros(2, 3, dtype=torch.float64)
    pose = torch.tensor([[0.0, 0.0, 0.0], [0.2, -0.5, 0.3]], dtype=torch.float64)
    env = _env(pose, default, torch.zeros(2, 3, dtype=torch.float64))
    cost = standing_joint_deviation_l1(env, "base_velocity", asset_cfg=SimpleNamespace(name="robot", joint_ids=[1, 2]))
    torch.testing.assert_close(cost, torch.tensor([0.0, 0.8], dtype=torch.float64))


def test_the_limit_recipe_leaves_it_off():
    from linkage_lab.tasks.velocity.config.limit.env_cfg import LimitFlatEnvCfg

    term = LimitFlatEnvCfg().rewards.standing_still
    assert term.func is standing_joint_deviation_l1 and term.weight == 0.0
    assert term.params["command_name"] == "base_velocity"
