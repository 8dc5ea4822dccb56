"""The numeric-fault guards of the velocity tasks, without a simulation."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from linkage_lab.robots.registry import load_robot_config
from linkage_lab.tasks.velocity import faults

pytestmark = pytest.mark.unit

NAN, INF = float("nan"), float("inf")


def test_observation_modifier_zeroes_only_non_finite_entries():
    obs = torch.tensor([[1.0, NAN, -INF], [INF, -2.0, 0.5]])
    assert faults.finite_or_zero(obs).tolist() == [[1.0, 0.0, 0.0], [0.0, -2.0, 0.5]]


class StatefulTerm:
    """A class-based reward term: returns its values and records resets."""

    def __init__(self, values):
        self.values = values
        self.resets = []

    def __call__(self, env, scale):
        return self.values * scale

    def reset(self, env_ids=None):
        self.resets.append(env_ids)


class FakeRewardManager:
    def __init__(self, terms):
        self.cfgs = {name: SimpleNamespace(func=func, params={}) for name, func in terms.items()}

    @property
    def active_terms(self):
        return list(self.cfgs)

    def get_term_cfg(self, name):
        return self.cfgs[name]

    def set_term_cfg(self, name, cfg):
        self.cfgs[name] = cfg


def test_reward_guard_wraps_every_term_once_and_counts_per_env():
    def plain(env):
        return torch.tensor([1.0, NAN, 3.0])

    stateful = StatefulTerm(torch.tensor([INF, 2.0, 0.0]))
    env = SimpleNamespace(num_envs=3, device="cpu", reward_manager=FakeRewardManager({"a": plain, "b": stateful}))
    guard = faults.NonFiniteRewardGuard(SimpleNamespace(params={}), env)
    guard(env, None)
    guard(env, None)  # a second startup (or a second guard call) must not wrap twice
    cfgs = env.reward_manager.cfgs
    assert cfgs["a"].func(env).tolist() == [1.0, 0.0, 3.0]
    assert cfgs["b"].func(env, scale=2.0).tolist() == [0.0, 4.0, 0.0]
    assert guard.values.tolist() == [1, 1, 0]
    # The reward manager resets class-based terms through their cfg: the wrapper passes it on.
    cfgs["b"].func.reset(env_ids=[2])
    assert stateful.resets == [[2]]
    assert not isinstance(cfgs["a"].func.func, faults._FiniteReward)


def _max_reach(ranges: dict[str, tuple[float, float]], default: dict[str, float]) -> float:
    """The farthest joint limit from the default pose (rad)."""
    return max(max(abs(hi - default.get(j, 0.0)), abs(default.get(j, 0.0) - lo)) for j, (lo, hi) in ranges.items())


def test_action_clip_never_cuts_a_target_inside_the_joint_range():
    """``q* = q₀ + scale · a`` reaches every joint limit from the standing pose inside ±ACTION_CLIP."""
    from linkage_lab.tasks.velocity.base_env_cfg import ACTION_CLIP
    from linkage_lab.tasks.velocity.config.limit.env_cfg import LimitFlatEnvCfg
    from linkage_lab.tasks.velocity.config.marvin.env_cfg import MarvinFlatEnvCfg

    limit = load_robot_config("limit")
    limit_ranges = {j: tuple(v["range_rad"]) for j, v in limit["joint_limits"].items()}
    marvin = load_robot_config("marvin")
    marvin_ranges = {j: tuple(v["range_rad"]) for j, v in {**marvin["leg_joints"], **marvin["arm_joints"]}.items()}
    reach = {
        LimitFlatEnvCfg: _max_reach(limit_ranges, limit["control"]["standing_pose_rad"]),
        MarvinFlatEnvCfg: _max_reach(marvin_ranges, marvin["control"]["standing_pose_rad"]),
    }
    # Hand values: the Limit's hip from +0.5 to -1.2 rad; Marvin's shoulder from 0 to ±2.5 rad.
    assert reach[LimitFlatEnvCfg] == pytest.approx(1.7)
    assert reach[MarvinFlatEnvCfg] == pytest.approx(2.5)
    for cfg_class, distance in reach.items():
        cfg = cfg_class()
        action = cfg.actions.joint_pos
        assert isinstance(action, faults.GuardedJointPositionActionCfg)
        assert action.action_clip == ACTION_CLIP
        assert ACTION_CLIP * action.scale >= distance, cfg_class.__name__


def test_tasks_carry_every_guard_and_the_runner_clips_alike():
    from linkage_lab.tasks.velocity.agents import LinkageVelocityPPORunnerCfg
    from linkage_lab.tasks.velocity.base_env_cfg import ACTION_CLIP
    from linkage_lab.tasks.velocity.config.limit.env_cfg import LimitFlatEnvCfg

    cfg = LimitFlatEnvCfg()
    assert getattr(cfg.terminations, faults.NONFINITE_STATE_TERM).func is faults.NonFiniteState
    assert getattr(cfg.terminations, faults.NONFINITE_STATE_TERM).time_out is False
    guard = getattr(cfg.events, faults.REWARD_GUARD_EVENT)
    assert (guard.func, guard.mode) == (faults.NonFiniteRewardGuard, "startup")
    policy = cfg.observations.policy
    for name in ("base_lin_vel", "joint_pos", "joint_vel", "actions"):
        assert [m.func for m in getattr(policy, name).modifiers] == [faults.finite_or_zero]
    assert LinkageVelocityPPORunnerCfg().clip_actions == ACTION_CLIP
