"""The yaw-acceleration cost on stand-ins (a sinusoid's closed-form mean, a steady turn, episode resets), and the
Limit recipe's optional turning terms off."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from linkage_lab.tasks.velocity.rewards import yaw_acceleration_l2

pytestmark = pytest.mark.unit

DT = 0.02


def _term(num_envs):
    data = SimpleNamespace(root_ang_vel_b=SimpleNamespace(torch=torch.zeros(num_envs, 3, dtype=torch.float64)))
    env = SimpleNamespace(num_envs=num_envs, device="cpu", step_dt=DT, scene={"robot": SimpleNamespace(data=data)})
    return yaw_acceleration_l2(SimpleNamespace(params={}), env), env, data


def _run(term, env, data, yaw_rates):
    """Costs of successive steps whose body yaw rates are the rows of ``yaw_rates`` ``(T, E)``."""
    costs = []
    for row in yaw_rates:
        data.root_ang_vel_b.torch[:, 2] = row
        costs.append(term(env).clone())
    return torch.stack(costs)


def test_a_sinusoidal_swing_costs_its_sampled_acceleration_squared():
    # ω = c + A sin(2π f t): the difference over DT is 2A sin(π f DT) cos(...), so the mean cost over whole periods
    # is 2 (A sin(π f DT) / DT)², which tends to (2π f A)² / 2 for slow swings. The steady part c costs nothing.
    amplitude, steady = 0.1, 0.3
    for freq in (2.0, 10.0):
        t = torch.arange(0, 501, dtype=torch.float64) * DT  # 10 s: whole periods of both frequencies
        term, env, data = _term(2)
        yaw = torch.stack([steady + amplitude * torch.sin(2 * math.pi * freq * t), torch.full_like(t, steady)], 1)
        costs = _run(term, env, data, yaw)
        expected = 2 * (amplitude * math.sin(math.pi * freq * DT) / DT) ** 2
        assert costs[0].abs().max() == 0.0  # nothing to difference on the first step
        assert costs[1:, 0].mean().item() == pytest.approx(expected, rel=1e-9)
        assert costs[1:, 1].abs().max() == 0.0  # a steady turn costs nothing
    assert expected == pytest.approx((2 * math.pi * 10.0 * amplitude) ** 2 / 2, rel=0.15)


def test_one_step_of_change_and_a_reset_env_starts_over():
    term, env, data = _term(3)
    costs = _run(term, env, data, torch.tensor([[0.0, 0.0, 0.0], [0.1, 0.0, -0.2]], dtype=torch.float64))
    torch.testing.assert_close(costs[1], torch.tensor([(0.1 / DT) ** 2, 0.0, (0.2 / DT) ** 2], dtype=torch.float64))
    term.reset(torch.tensor([2]))
    # Env 2 jumps by 1 rad/s across its reset (a new episode): not a change to charge; env 0's jump is.
    costs = _run(term, env, data, torch.tensor([[1.1, 0.0, 0.8]], dtype=torch.float64))
    torch.testing.assert_close(costs[0], torch.tensor([(1.0 / DT) ** 2, 0.0, 0.0], dtype=torch.float64))


def test_the_limit_recipe_leaves_the_turning_experiments_off():
    from linkage_lab.tasks.velocity.config.limit.env_cfg import LimitFlatEnvCfg

    rewards = LimitFlatEnvCfg().rewards
    # Fine-tunes turn these on by override (policies/experiments/limit_yaw_acceleration/); the recipe is unchanged.
    assert rewards.yaw_acceleration_l2.func is yaw_acceleration_l2
    assert rewards.yaw_acceleration_l2.weight == 0.0
    assert rewards.heading_tracking.weight == 0.0
    assert rewards.heading_tracking.params["command_name"] == "base_velocity"
    assert rewards.airborne.weight == 0.0
    assert rewards.airborne.params["sensor_cfg"].body_names == ".*_foot"
    assert "command_name" not in rewards.airborne.params  # flight is charged turning on the spot too
    # The foot terms too (policies/experiments/limit_four_feet/ turns them on from scratch), each on the four feet.
    for name in ("foot_held_up", "short_stance", "feet_slide"):
        term = getattr(rewards, name)
        assert term.weight == 0.0 and term.params["sensor_cfg"].body_names == ".*_foot"
    assert rewards.feet_slide.params["asset_cfg"].body_names == ".*_foot"


def test_the_yaw_rate_error_cost_is_the_squared_error_against_the_command():
    from linkage_lab.tasks.velocity.rewards import yaw_rate_error_l2

    # Three envs: on the command, turning short, turning the wrong way; the cost is (c − ω)² by hand.
    yaw = torch.tensor([[0.0, 0.0, 0.3], [0.0, 0.0, 0.2], [0.0, 0.0, 0.1]], dtype=torch.float64)
    command = torch.tensor([[0.0, 0.0, 0.3], [0.0, 0.0, 0.3], [0.0, 0.0, -0.3]], dtype=torch.float64)
    data = SimpleNamespace(root_ang_vel_b=SimpleNamespace(torch=yaw))
    env = SimpleNamespace(
        scene={"robot": SimpleNamespace(data=data)},
        command_manager=SimpleNamespace(get_command=lambda name: {"base_velocity": command}[name]),
    )
    cost = yaw_rate_error_l2(env, "base_velocity")
    torch.testing.assert_close(cost, torch.tensor([0.0, 0.01, 0.16], dtype=torch.float64))
    # Over a swing ω = c + A sin(·) sampled over whole periods, the mean cost is the variance A² / 2.
    t = torch.arange(0, 500, dtype=torch.float64) * DT
    swing = 0.3 + 0.1 * torch.sin(2 * math.pi * 5.0 * t)
    costs = []
    for value in swing:
        yaw[:] = torch.tensor([0.0, 0.0, float(value)], dtype=torch.float64)
        command[:] = torch.tensor([0.0, 0.0, 0.3], dtype=torch.float64)
        costs.append(yaw_rate_error_l2(env, "base_velocity")[0])
    assert torch.stack(costs).mean().item() == pytest.approx(0.1**2 / 2, rel=1e-9)


def test_the_limit_recipe_leaves_the_yaw_error_cost_off():
    from linkage_lab.tasks.velocity.config.limit.env_cfg import LimitFlatEnvCfg
    from linkage_lab.tasks.velocity.rewards import yaw_rate_error_l2

    term = LimitFlatEnvCfg().rewards.yaw_rate_error_l2
    assert term.func is yaw_rate_error_l2 and term.weight == 0.0
    assert term.params["command_name"] == "base_velocity"


def test_the_lin_vel_error_cost_is_the_squared_planar_error_against_the_command():
    from linkage_lab.tasks.velocity.config.limit.env_cfg import LimitFlatEnvCfg
    from linkage_lab.tasks.velocity.rewards import lin_vel_error_l2

    # Three envs: on the command, 0.1 m/s short, and sliding sideways 0.2 m/s while walking back 0.1 m/s too fast;
    # by hand (c − v)² summed over x and y: 0, 0.01, 0.01 + 0.04. The vertical velocity is not charged.
    velocity = torch.tensor([[0.3, 0.0, 0.5], [0.2, 0.0, 0.0], [-0.4, 0.2, -0.3]], dtype=torch.float64)
    command = torch.tensor([[0.3, 0.0, 0.2], [0.3, 0.0, 0.0], [-0.3, 0.0, 0.0]], dtype=torch.float64)
    data = SimpleNamespace(root_lin_vel_b=SimpleNamespace(torch=velocity))
    env = SimpleNamespace(
        scene={"robot": SimpleNamespace(data=data)},
        command_manager=SimpleNamespace(get_command=lambda name: {"base_velocity": command}[name]),
    )
    torch.testing.assert_close(
        lin_vel_error_l2(env, "base_velocity"), torch.tensor([0.0, 0.01, 0.05], dtype=torch.float64)
    )
    term = LimitFlatEnvCfg().rewards.lin_vel_error_l2
    assert term.func is lin_vel_error_l2 and term.weight == 0.0  # off in the recipe; fine-tunes turn it on
    assert term.params["command_name"] == "base_velocity"
