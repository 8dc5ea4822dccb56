"""The residual Marvin task's registration and recipe, and that the plain task is left as it was."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest

pytestmark = pytest.mark.unit

TASK = "LinkageLab-Velocity-Flat-Marvin-Residual"


def test_registered_next_to_the_plain_task():
    from linkage_lab.tasks.registry import register_tasks

    register_tasks()

    kwargs = gym.spec(TASK).kwargs
    assert kwargs["env_cfg_entry_point"].endswith("residual_env_cfg:MarvinResidualFlatEnvCfg")
    assert kwargs["rsl_rl_cfg_entry_point"].endswith("residual_agents:MarvinResidualPPORunnerCfg")
    assert "LinkageLab-Velocity-Flat-Marvin" in gym.registry


def test_residual_recipe():
    from linkage_lab.tasks.velocity import faults
    from linkage_lab.tasks.velocity.base_env_cfg import ACTION_CLIP
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import MarvinResidualFlatEnvCfg
    from linkage_lab.tasks.velocity.history import previous_action
    from linkage_lab.tasks.velocity.residual import ResidualGaitAction, ResidualGaitActionCfg, gait_state

    cfg = MarvinResidualFlatEnvCfg()
    action = cfg.actions.joint_pos
    assert isinstance(action, ResidualGaitActionCfg) and isinstance(action, faults.GuardedJointPositionActionCfg)
    assert action.class_type is ResidualGaitAction
    assert (action.scale, action.action_clip, action.use_default_offset) == (0.15, ACTION_CLIP, False)
    policy_terms = [name for name, term in vars(cfg.observations.policy).items() if hasattr(term, "func")]
    assert policy_terms[-2:] == ["gait", "previous_action"] and cfg.observations.policy.gait.func is gait_state
    assert cfg.observations.policy.previous_action.func is previous_action
    for term in (cfg.observations.policy.gait, cfg.observations.policy.previous_action):
        assert [m.func for m in term.modifiers] == [faults.finite_or_zero]
    # A stop is paid for enough that the policy keeps off it (the penalty counts radians past 95 % of the range).
    assert cfg.rewards.dof_pos_limits.weight == -50.0 and cfg.rewards.dof_pos_limits.params[
        "asset_cfg"
    ].joint_names == [".*"]
    rewards = cfg.rewards
    assert rewards.action_l2.weight < 0.0
    assert rewards.joint_deviation_hip is None and rewards.joint_deviation_arms is None
    # Hand values of the prior: swing (π − 2 asin 0.166) / (2π · 0.88 Hz); hip 0.60 + ankle 0.06 m.
    assert rewards.feet_air_time.params["threshold"] == pytest.approx(0.5079, abs=1e-4)
    assert rewards.feet_air_time.params["threshold"] == pytest.approx(
        (math.pi - 2 * math.asin(0.166)) / (2 * math.pi * 0.88)
    )
    assert rewards.base_height_l2.params["target_height"] == pytest.approx(0.66)
    # What the shipped policy runs on: the gait turns on a yaw-rate command, the policy trims the hip yaws only
    # a little, alternating steps and the commanded heading are paid.
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import MARVIN_GAIT_COMMAND
    from linkage_lab.tasks.velocity.rewards import airborne, heading_tracking, touchdown_alternation

    assert MARVIN_GAIT_COMMAND.turn_per_yaw_rate_s == 0.6 and action.turn_per_yaw_rate_s is None
    assert action.scale_by_joint == {"hip_yaw": 0.03}
    assert rewards.heading_tracking.func is heading_tracking and rewards.heading_tracking.weight == 1.0
    alternation = rewards.touchdown_alternation
    assert alternation.func is touchdown_alternation and alternation.weight == 0.5
    assert alternation.params["standing_touchdown_cost"] == 0.0
    # Frequency-neutral: a touchdown pays in full at the gait's half period (1 / (2 · 0.88 Hz)) or later.
    assert alternation.params["step_period_s"] == pytest.approx(1 / (2 * 0.88))
    assert rewards.airborne.func is airborne and rewards.airborne.weight == -2.0
    assert rewards.airborne.params["command_name"] == "base_velocity"
    assert (cfg.episode_length_s, cfg.scene.num_envs) == (20.0, 256)
    command = cfg.commands.base_velocity
    assert command.rel_standing_envs == 0.2
    assert (command.ranges.lin_vel_x, command.ranges.lin_vel_y, command.ranges.ang_vel_z) == (
        (0.0, 0.6),
        (0.0, 0.0),
        (-0.2, 0.2),
    )


def test_plain_marvin_task_and_runner_are_unchanged():
    from linkage_lab.tasks.velocity import faults
    from linkage_lab.tasks.velocity.config.marvin.agents import MarvinFlatPPORunnerCfg
    from linkage_lab.tasks.velocity.config.marvin.env_cfg import MarvinFlatEnvCfg
    from linkage_lab.tasks.velocity.config.marvin.residual_agents import MarvinResidualPPORunnerCfg
    from linkage_lab.tasks.velocity.residual import ResidualGaitActionCfg

    residual = MarvinResidualPPORunnerCfg()
    assert (residual.experiment_name, residual.actor.distribution_cfg.init_std) == ("marvin_residual", 0.4)
    # Building the residual runner config first must not change the shared actor default.
    plain = MarvinFlatPPORunnerCfg()
    assert (plain.experiment_name, plain.actor.distribution_cfg.init_std) == ("marvin_flat", 1.0)
    cfg = MarvinFlatEnvCfg()
    assert type(cfg.actions.joint_pos) is faults.GuardedJointPositionActionCfg
    assert not isinstance(cfg.actions.joint_pos, ResidualGaitActionCfg)
    assert getattr(cfg.observations.policy, "gait", None) is None


def test_marvin_prior_is_the_sprint_gait_without_its_lane_loop_and_crouch():
    from linkage_lab.robots.marvin.articulation import JOINT_NAMES
    from linkage_lab.robots.marvin.gait import MARVIN_SPRINT_GAIT
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import (
        MARVIN_PRIOR_HIP_HEIGHT_M,
        marvin_gait_prior,
    )

    prior = marvin_gait_prior(0.02, list(JOINT_NAMES))
    assert prior.joint_names == JOINT_NAMES
    assert prior.gait.cfg.heading_gain == 0.0
    assert prior.gait.cfg.hip_height_m == MARVIN_PRIOR_HIP_HEIGHT_M > MARVIN_SPRINT_GAIT["hip_height_m"]
    for name, value in MARVIN_SPRINT_GAIT.items():
        if name != "hip_height_m":
            assert getattr(prior.gait.cfg, name) == value, name


def _ankle_pitch_demand(gait_cfg, stride_scale: float):
    """The gait's left ankle pitch targets (rad) over one cycle, unclamped, torso level at the stride's own speed."""
    from dataclasses import replace

    import torch

    from linkage_lab.gait.biped import BipedGait, TorsoState

    cfg = replace(gait_cfg, joint_limits_rad=None)
    phase = torch.linspace(0.0, 2.0 * math.pi, 721, dtype=torch.float64)[:-1]
    zero = torch.zeros_like(phase)
    speed = torch.full_like(phase, 2.0 * cfg.step_length_m * stride_scale * cfg.frequency_hz)
    torso = TorsoState(zero, zero, zero, zero, zero, zero, forward_velocity_mps=speed, lateral_velocity_mps=zero)
    return BipedGait(cfg).joint_targets_at_phase(phase, torso, stride_scale=stride_scale)["left_ankle_pitch"]


def test_marvin_prior_never_asks_the_ankle_past_its_stop():
    """Every ankle pitch target of the prior, at every stride the command reaches, lies inside the ankle's range.

    The sprint gait's crouch asked the swing ankle for up to 0.79 rad against the 0.698 rad stop (the clamp then
    parked it there every swing); the prior's hip height keeps the demand inside. The swing ankle is the one
    with the most bent knee: its flat-sole angle grows with the knee bend the lift needs.
    """
    from linkage_lab.robots.marvin.config import marvin_config
    from linkage_lab.robots.marvin.gait import marvin_sprint_gait_cfg
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import MARVIN_GAIT_COMMAND, marvin_gait_prior

    upper = marvin_config().leg_joints["ankle_pitch"].range_rad[1]
    prior = marvin_gait_prior(0.02).gait.cfg
    crouch = marvin_sprint_gait_cfg(heading_gain=0.0)
    for stride in (0.0, 0.4, MARVIN_GAIT_COMMAND.max_stride_scale):
        demand = _ankle_pitch_demand(prior, stride)
        assert float(demand.max()) < upper, f"stride {stride}: {float(demand.max()):.3f} rad"
        # The guard can fail: the sprint gait's own crouch asks past the stop at every stride.
        crouch_demand = _ankle_pitch_demand(crouch, stride)
        assert float(crouch_demand.max()) > upper + 0.05


def test_residual_sprint_holds_the_lane_heading_within_the_trained_yaw_rates():
    from linkage_lab.tasks.sprint.config.marvin.env_cfg import (
        HEADING_HOLD_GAIN_PER_S,
        MarvinResidualSprintEnvCfg,
        MarvinSprintEnvCfg,
    )
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import MarvinResidualFlatEnvCfg

    trained = MarvinResidualFlatEnvCfg().commands.base_velocity
    race = MarvinResidualSprintEnvCfg().commands.base_velocity
    assert race.heading_command and race.rel_heading_envs == 1.0 and race.ranges.heading == (0.0, 0.0)
    assert race.ranges.ang_vel_z == trained.ranges.ang_vel_z == (-0.2, 0.2)
    assert race.heading_control_stiffness == HEADING_HOLD_GAIN_PER_S
    assert race.ranges.lin_vel_x == (0.8, 0.8) and race.rel_standing_envs == 0.0
    # The from-scratch race keeps a plain zero yaw-rate command.
    plain = MarvinSprintEnvCfg().commands.base_velocity
    assert not plain.heading_command and plain.ranges.ang_vel_z == (0.0, 0.0)


def test_residual_sprint_keeps_the_lane_with_every_trained_command_setting():
    from linkage_lab.robots.marvin.race import LANE_LOOKAHEAD_M
    from linkage_lab.tasks.sprint.commands import LaneKeepingVelocityCommand
    from linkage_lab.tasks.sprint.config.marvin.env_cfg import MarvinResidualSprintEnvCfg
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import MarvinResidualFlatEnvCfg

    trained = MarvinResidualFlatEnvCfg().commands.base_velocity
    race = MarvinResidualSprintEnvCfg().commands.base_velocity
    assert race.class_type is LaneKeepingVelocityCommand and race.lookahead_m == LANE_LOOKAHEAD_M
    for name in ("asset_name", "debug_vis"):
        assert getattr(race, name) == getattr(trained, name), name
    # The race's own settings survive the change of command class.
    assert race.resampling_time_range == (90.0, 90.0) and race.ranges.lin_vel_x == (0.8, 0.8)


def test_residual_runner_trains_on_the_mirror_loss():
    from linkage_lab.tasks.velocity.config.marvin.residual_agents import MarvinResidualPPORunnerCfg
    from linkage_lab.tasks.velocity.symmetry import mirror_rollout

    symmetry = MarvinResidualPPORunnerCfg().algorithm.symmetry_cfg
    assert symmetry.data_augmentation_func is mirror_rollout
    assert (symmetry.use_data_augmentation, symmetry.use_mirror_loss, symmetry.mirror_loss_coeff) == (False, True, 1.0)


MARVIN_JOINTS = ["left_hip_yaw", "left_knee", "right_hip_yaw", "right_knee", "left_elbow"]


def test_residual_scales_replace_the_default_where_a_key_is_found():
    from linkage_lab.tasks.velocity.residual import residual_scales

    assert residual_scales(MARVIN_JOINTS, 0.15, {}) == [0.15] * 5
    assert residual_scales(MARVIN_JOINTS, 0.15, {"hip_yaw": 0.03}) == [0.03, 0.15, 0.03, 0.15, 0.15]
    assert residual_scales(MARVIN_JOINTS, 0.15, {"^left_(knee|elbow)$": 0.0, "right_knee": 0.1}) == [
        0.15,
        0.0,
        0.15,
        0.1,
        0.0,
    ]
    # The text Isaac Lab's hydra layer leaves for a dict override reads the same as the dict.
    assert residual_scales(MARVIN_JOINTS, 0.15, "{hip_yaw:0.03}") == [0.03, 0.15, 0.03, 0.15, 0.15]


@pytest.mark.parametrize(
    ("scale_by_joint", "message"),
    [
        ({"ankle": 0.1}, "matches no joint"),
        ({"hip": 0.1, "yaw": 0.2}, "matched by scale_by_joint keys"),
        ({"(knee": 0.1}, "not a regular expression"),
        ({"knee": -0.1}, "finite and >= 0"),
        ({"knee": float("nan")}, "finite and >= 0"),
        ({"knee": "x"}, "not a number"),
        ("[0.1, 0.2]", "not a mapping"),
        ("{knee:", "not a mapping"),
    ],
)
def test_residual_scales_reject_bad_keys_and_values(scale_by_joint, message):
    from linkage_lab.tasks.velocity.residual import residual_scales

    with pytest.raises(ValueError, match=message):
        residual_scales(MARVIN_JOINTS, 0.15, scale_by_joint)


def test_marvin_trains_up_to_the_largest_latency_of_the_reality_gap():
    """The trained loop latency (targets late by sample age + target delay) reaches the sweep's largest condition."""
    from linkage_lab.sim2sim.stress import STRESS_SET
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import MarvinResidualFlatEnvCfg

    cfg = MarvinResidualFlatEnvCfg()
    low, high = cfg.actions.joint_pos.target_delay_range_steps
    largest_s = max(sum(condition.delays_s) for condition in STRESS_SET)
    assert largest_s == pytest.approx(0.040)  # 20 ms old samples, targets 20 ms late
    # Hand value: 0-40 ms at the 5 ms physics step is 0-8 steps.
    assert cfg.sim.dt == pytest.approx(0.005) and (low, high) == (0, 8)
    assert high * cfg.sim.dt == pytest.approx(largest_s)
