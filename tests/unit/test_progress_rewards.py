"""Progress rewards: linear in the commanded direction, capped at the command, nothing for standing."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.tasks.velocity.rewards import velocity_progress

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("command", "velocity", "expected"),
    [
        ((-0.3, 0.0), (0.0, 0.0), 0.0),  # standing at a backward command earns nothing
        ((-0.3, 0.0), (-0.15, 0.05), 0.5),  # half the commanded speed; sideways drift ignored
        ((-0.3, 0.0), (-0.6, 0.0), 1.0),  # capped at the command: no reason to overshoot
        ((-0.3, 0.0), (0.3, 0.0), 0.0),  # the wrong way earns nothing (and is not penalised here)
        ((0.3, 0.4), (0.3, 0.4), 1.0),  # along a diagonal command
        ((0.3, 0.4), (0.15, 0.2), 0.5),
        ((0.05, 0.0), (0.05, 0.0), 0.0),  # below the threshold: the standing case
    ],
)
def test_progress_against_hand_values(command, velocity, expected):
    value = velocity_progress(torch.tensor([command]), torch.tensor([velocity]), min_command=0.1)
    assert float(value[0]) == pytest.approx(expected)


def test_yaw_progress_takes_the_sign_of_the_command():
    command = torch.tensor([[0.5], [-0.5], [-0.5]])
    rate = torch.tensor([[0.25], [-0.5], [0.5]])
    assert velocity_progress(command, rate, 0.1).tolist() == pytest.approx([0.5, 1.0, 0.0])


def test_the_limit_task_carries_both_progress_terms():
    from linkage_lab.tasks.velocity import rewards
    from linkage_lab.tasks.velocity.config.limit.env_cfg import LimitFlatEnvCfg

    cfg = LimitFlatEnvCfg().rewards
    assert cfg.lin_vel_progress.func is rewards.lin_vel_progress and cfg.lin_vel_progress.weight == 1.0
    assert cfg.yaw_rate_progress.func is rewards.yaw_rate_progress and cfg.yaw_rate_progress.weight == 1.0
