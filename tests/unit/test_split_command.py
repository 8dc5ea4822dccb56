"""The split velocity command: straight-only and turn-only shares, pinned ranges kept exactly."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.unit


def _term(lin_vel_x, ang_vel_z, straight, turning, num_envs=4000):
    from isaaclab.envs.mdp import UniformVelocityCommandCfg

    from linkage_lab.tasks.velocity.commands import SplitVelocityCommand, SplitVelocityCommandCfg

    cfg = SplitVelocityCommandCfg(
        asset_name="robot",
        resampling_time_range=(10.0, 10.0),
        rel_standing_envs=0.0,
        ranges=UniformVelocityCommandCfg.Ranges(lin_vel_x=lin_vel_x, lin_vel_y=(0.0, 0.0), ang_vel_z=ang_vel_z),
        rel_straight_envs=straight,
        rel_turning_envs=turning,
    )
    # The sampling needs no simulation: give the term the state its resampling reads and writes.
    term = object.__new__(SplitVelocityCommand)
    term.cfg = cfg
    term._env = type("Env", (), {"num_envs": num_envs, "device": "cpu"})()
    term.vel_command_b = torch.zeros(num_envs, 3)
    term.is_standing_env = torch.zeros(num_envs, dtype=torch.bool)
    return term


def test_shares_of_straight_turning_and_combined_commands():
    torch.manual_seed(0)
    term = _term((-0.4, 0.6), (-0.6, 0.6), straight=0.5, turning=0.3)
    term._resample_command(torch.arange(term.num_envs))
    vx, wz = term.vel_command_b[:, 0], term.vel_command_b[:, 2]
    straight = (wz == 0) & (vx != 0)
    turning = (vx == 0) & (wz != 0)
    combined = (vx != 0) & (wz != 0)
    n = term.num_envs
    assert straight.sum() / n == pytest.approx(0.5, abs=0.03)
    assert turning.sum() / n == pytest.approx(0.3, abs=0.03)
    assert combined.sum() / n == pytest.approx(0.2, abs=0.03)
    # The non-zero components keep the uniform ranges.
    assert float(vx.min()) >= -0.4 and float(vx.max()) <= 0.6 and float(wz.abs().max()) <= 0.6
    assert float(wz[turning].abs().mean()) == pytest.approx(0.3, abs=0.03)


@pytest.mark.parametrize(("vx", "wz"), [(0.3, 0.0), (-0.3, 0.0), (0.0, 0.5), (0.0, -0.5), (0.2, 0.4)])
def test_a_pinned_command_is_given_exactly(vx, wz):
    term = _term((vx, vx), (wz, wz), straight=0.5, turning=0.5, num_envs=64)
    term._resample_command(torch.arange(64))
    expected = torch.tensor([vx, 0.0, wz]).expand(64, 3)
    assert torch.equal(term.vel_command_b, expected)


def test_shares_are_checked():
    from isaaclab.envs.mdp import UniformVelocityCommandCfg

    from linkage_lab.tasks.velocity.commands import SplitVelocityCommandCfg

    ranges = UniformVelocityCommandCfg.Ranges(lin_vel_x=(0, 1), lin_vel_y=(0, 0), ang_vel_z=(0, 1))
    with pytest.raises(ValueError, match="at most 1"):
        SplitVelocityCommandCfg(asset_name="robot", ranges=ranges, rel_straight_envs=0.7, rel_turning_envs=0.4)
    with pytest.raises(ValueError, match=r"rel_turning_envs must lie in \[0, 1\]"):
        SplitVelocityCommandCfg(asset_name="robot", ranges=ranges, rel_turning_envs=-0.1)


def test_split_cfg_keeps_every_setting_of_the_uniform_one():
    from isaaclab_tasks.core.velocity.velocity_env_cfg import CommandsCfg

    from linkage_lab.tasks.velocity.commands import SplitVelocityCommand, split_command_cfg

    uniform = CommandsCfg().base_velocity
    uniform.rel_standing_envs = 0.07
    split = split_command_cfg(uniform, 0.4, 0.35)
    assert split.class_type is SplitVelocityCommand
    assert (split.rel_straight_envs, split.rel_turning_envs) == (0.4, 0.35)
    for name in ("ranges", "resampling_time_range", "rel_standing_envs", "heading_command", "asset_name"):
        assert getattr(split, name) == getattr(uniform, name)
    # Re-splitting a split command replaces its shares.
    again = split_command_cfg(split, 0.6, 0.2)
    assert (again.rel_straight_envs, again.rel_turning_envs, again.rel_standing_envs) == (0.6, 0.2, 0.07)


def test_the_limit_task_splits_its_commands():
    from linkage_lab.tasks.velocity.commands import SplitVelocityCommandCfg
    from linkage_lab.tasks.velocity.config.limit.env_cfg import LimitFlatEnvCfg

    command = LimitFlatEnvCfg().commands.base_velocity
    assert isinstance(command, SplitVelocityCommandCfg)
    assert (command.rel_straight_envs, command.rel_turning_envs) == (0.7, 0.2)
    assert command.ranges.lin_vel_x == (-0.4, 0.6) and command.ranges.ang_vel_z == (-0.6, 0.6)
