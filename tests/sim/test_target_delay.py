"""Control latency in training: the joint targets reach the drives a drawn number of physics steps late."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.sim

LIMIT = "LinkageLab-Velocity-Flat-Limit"


def test_a_delay_of_one_control_period_sends_the_previous_steps_targets(build_env):
    # Eight physics steps of 2.5 ms are the Limit's 20 ms control period (decimation 8).
    with build_env(LIMIT, num_envs=2, overrides=("env.actions.joint_pos.target_delay_range_steps=[8,8]",)) as (
        env,
        _,
    ):
        env.reset()
        unwrapped = env.unwrapped
        assert unwrapped.cfg.decimation == 8
        term = unwrapped.action_manager.get_term("joint_pos")
        robot = unwrapped.scene["robot"]
        assert term.target_delay_steps.tolist() == [8, 8]
        first = torch.full((2, env.unwrapped.action_manager.total_action_dim), 0.2)
        second = torch.full((2, env.unwrapped.action_manager.total_action_dim), -0.3)
        env.step(first)
        sent_first = term.processed_actions.clone()
        env.step(second)
        # The targets the drives hold now are the first step's; the second step's are still on their way.
        held = robot.data.joint_pos_target.torch[:, term._joint_ids]
        torch.testing.assert_close(held, sent_first)
        assert not torch.allclose(held, term.processed_actions)


def test_delays_are_drawn_per_env_at_reset_within_the_range(build_env):
    with build_env(LIMIT, num_envs=16, overrides=("env.actions.joint_pos.target_delay_range_steps=[0,4]",)) as (
        env,
        _,
    ):
        env.reset()  # draws every env's delay
        term = env.unwrapped.action_manager.get_term("joint_pos")
        lags = term.target_delay_steps
        assert ((lags >= 0) & (lags <= 4)).all() and len(set(lags.tolist())) > 1
        term.reset(torch.tensor([0, 1, 2]))
        assert ((term.target_delay_steps >= 0) & (term.target_delay_steps <= 4)).all()


def test_no_delay_range_keeps_the_plain_action_term(build_env):
    # The Limit task trains with 0-8 steps; [0,0] turns the delay off.
    with build_env(LIMIT, num_envs=1, overrides=("env.actions.joint_pos.target_delay_range_steps=[0,0]",)) as (env, _):
        env.reset()
        term = env.unwrapped.action_manager.get_term("joint_pos")
        env.step(torch.full((1, env.unwrapped.action_manager.total_action_dim), 0.1))
        held = env.unwrapped.scene["robot"].data.joint_pos_target.torch[:, term._joint_ids]
        torch.testing.assert_close(held, term.processed_actions)
        assert term.target_delay_steps.tolist() == [0]


def test_target_filter_smooths_each_control_step_and_restarts_at_reset(build_env):
    overrides = (
        "env.actions.joint_pos.target_delay_range_steps=[0,0]",
        "env.actions.joint_pos.target_filter_alpha=0.5",
    )
    with build_env(LIMIT, num_envs=2, overrides=overrides) as (env, _):
        env.reset()
        unwrapped = env.unwrapped
        term = unwrapped.action_manager.get_term("joint_pos")
        width = unwrapped.action_manager.total_action_dim

        def plain(value: float) -> torch.Tensor:  # the unfiltered targets (2, joints) of a constant raw action
            return (term._offset + value * term._scale).expand(2, -1)

        env.step(torch.full((2, width), 0.2))
        torch.testing.assert_close(term.processed_actions, plain(0.2))  # first step passes
        env.step(torch.full((2, width), -0.3))
        halfway = 0.5 * plain(-0.3) + 0.5 * plain(0.2)
        torch.testing.assert_close(term.processed_actions, halfway)
        held = unwrapped.scene["robot"].data.joint_pos_target.torch[:, term._joint_ids]
        torch.testing.assert_close(held, term.processed_actions)
        # The policy's own output stays what it observes as its last action.
        torch.testing.assert_close(unwrapped.action_manager.action, torch.full((2, width), -0.3))
        term.reset(torch.tensor([0]))
        env.step(torch.full((2, width), 0.1))
        torch.testing.assert_close(term.processed_actions[0], plain(0.1)[0])
        torch.testing.assert_close(term.processed_actions[1], (0.5 * plain(0.1) + 0.5 * halfway)[1])


def test_target_filter_outside_its_range_is_refused(build_env):
    with pytest.raises(ValueError, match="target_filter_alpha"):
        with build_env(LIMIT, num_envs=1, overrides=("env.actions.joint_pos.target_filter_alpha=0.0",)):
            pass
