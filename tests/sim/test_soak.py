"""Soak: random actions with injected NaN/inf actions and a non-finite physics state, per robot.

Two rollouts of the same seed, 4 envs each: a faulty one of 2,000 control steps, where env 1
sends NaN action rows, env 2 sends single ±inf entries and, once, gets a NaN joint velocity
written into its physics state, and a clean one over its first 500 steps (every kind of fault,
and the reset of env 2, happens in those too; a second full run would double the time: about
90 s for the Limit and 125 s for Marvin at 4 envs on two shared CPU cores). Nothing
non-finite may reach the learner (observations, rewards), the guards count exactly what was
injected, and the healthy envs 0 and 3 move exactly as in the clean run: the physics worlds are
independent (checked here for Newton/MuJoCo-Warp).

Isaac Lab's events and commands draw from one global random stream for all envs, and a reset
of a faulty env (a fall at another time, or the non-finite state) draws from it: that would
shift every later draw of the healthy envs. The rollouts therefore make every draw a constant
(no pushes, fixed reset pose and command, no standing envs), so both runs see the same values
whatever the stream; the actions come from their own seeded generator.
"""

from __future__ import annotations

import time

import pytest
import torch

pytestmark = pytest.mark.sim

TASKS = ("LinkageLab-Velocity-Flat-Limit", "LinkageLab-Velocity-Flat-Marvin")
NUM_ENVS = 4
#: Control steps of the faulty rollout (40 s of robot time) and of the clean one it is compared with.
STEPS = 2000
COMPARE_STEPS = 500
HEALTHY = [0, 3]
NAN_ENV, INF_ENV = 1, 2
NAN_EVERY, INF_EVERY = 50, 70
STATE_FAULT_STEP = 300


def _deterministic_events(cfg) -> None:
    cfg.seed = 11
    events = cfg.events
    events.push_robot = None
    events.reset_base.params["pose_range"] = {}
    events.reset_base.params["velocity_range"] = {}
    events.reset_robot_joints.params["position_range"] = (1.0, 1.0)
    command = cfg.commands.base_velocity
    command.rel_standing_envs = 0.0
    command.ranges.lin_vel_x = (0.3, 0.3)
    command.ranges.lin_vel_y = (0.0, 0.0)
    command.ranges.ang_vel_z = (0.0, 0.0)


def _rollout(task: str, faulty: bool, steps: int) -> dict:
    from linkage_lab.runtime import make_env
    from linkage_lab.tasks.velocity.faults import fault_counts

    with make_env(task, num_envs=NUM_ENVS, device="cpu", env_cfg_hook=_deterministic_events) as (env, agent_cfg):
        unwrapped = env.unwrapped
        robot = unwrapped.scene["robot"]
        obs, _ = unwrapped.reset()
        dim = unwrapped.action_manager.total_action_dim
        generator = torch.Generator().manual_seed(5)
        joint_pos, nonfinite_obs, nonfinite_rew, terminated_at = [], 0, 0, []
        injected = 0
        start = time.perf_counter()
        for step in range(steps):
            actions = torch.rand(NUM_ENVS, dim, generator=generator) * 6.0 - 3.0
            if faulty and step % NAN_EVERY == 7:
                actions[NAN_ENV] = float("nan")
                injected += 1
            if faulty and step % INF_EVERY == 3:
                actions[INF_ENV, step % dim] = float("inf") if step % 2 else -float("inf")
                injected += 1
            if faulty and step == STATE_FAULT_STEP:
                velocity = robot.data.joint_vel.torch[INF_ENV : INF_ENV + 1].clone()
                velocity[0, 0] = float("nan")
                robot.write_joint_velocity_to_sim_index(velocity=velocity, env_ids=torch.tensor([INF_ENV]))
            obs, reward, terminated, _, _ = unwrapped.step(actions)
            nonfinite_obs += int((~torch.isfinite(obs["policy"])).sum())
            nonfinite_rew += int((~torch.isfinite(reward)).sum())
            if faulty and bool(terminated[INF_ENV]) and STATE_FAULT_STEP <= step <= STATE_FAULT_STEP + 1:
                terminated_at.append(step)
            joint_pos.append(robot.data.joint_pos.torch.clone())
        return {
            "joint_pos": torch.stack(joint_pos),
            "nonfinite_obs": nonfinite_obs,
            "nonfinite_rew": nonfinite_rew,
            "injected": injected,
            "terminated_at": terminated_at,
            "faults": fault_counts(unwrapped),
            "steps_per_s": steps / (time.perf_counter() - start),
            "clip": agent_cfg.clip_actions,
        }


@pytest.mark.parametrize("task", TASKS)
def test_soak_with_faults_matches_the_clean_run(task):
    clean = _rollout(task, faulty=False, steps=COMPARE_STEPS)
    faulty = _rollout(task, faulty=True, steps=STEPS)
    print(f"{task}: {clean['steps_per_s']:.0f} / {faulty['steps_per_s']:.0f} steps/s, faults {faulty['faults']}")

    for run in (clean, faulty):
        assert run["nonfinite_obs"] == 0 and run["nonfinite_rew"] == 0
    assert clean["faults"]["nonfinite_actions"] == 0 and clean["faults"]["nonfinite_state_resets"] == 0
    # Uniform actions in [-3, 3] stay inside the clip: the clean run is the unclipped dynamics.
    assert clean["clip"] is not None and clean["clip"] >= 3.0

    assert faulty["faults"]["nonfinite_actions"] == faulty["injected"] > 0
    assert faulty["faults"]["nonfinite_state_resets"] == 1
    # The NaN velocity written before step STATE_FAULT_STEP ends that very step's episode.
    assert faulty["terminated_at"] == [STATE_FAULT_STEP]
    assert torch.isfinite(faulty["joint_pos"][STATE_FAULT_STEP + 1 :]).all()

    compared = faulty["joint_pos"][:COMPARE_STEPS]
    torch.testing.assert_close(compared[:, HEALTHY], clean["joint_pos"][:, HEALTHY], rtol=0.0, atol=0.0)
    # The faulty envs did something else (the comparison above could fail).
    assert not torch.equal(compared[:, NAN_ENV], clean["joint_pos"][:, NAN_ENV])


def test_huge_and_nan_actions_are_clipped_and_held_in_the_env():
    """Through ``env.step`` itself (no runner clip): a 1e6 action is a 12 (its target then held inside the joint's
    range, then through the task's target filter), a NaN row the default pose."""
    from linkage_lab.runtime import make_env
    from linkage_lab.tasks.velocity.base_env_cfg import ACTION_CLIP
    from linkage_lab.tasks.velocity.config.limit.env_cfg import TARGET_STOP_MARGIN_RAD

    with make_env(TASKS[0], num_envs=3, device="cpu", env_cfg_hook=_deterministic_events) as (env, _):
        unwrapped = env.unwrapped
        unwrapped.reset()
        term = unwrapped.action_manager.get_term("joint_pos")
        actions = torch.zeros(3, unwrapped.action_manager.total_action_dim)
        for _ in range(5):
            unwrapped.step(actions)
        actions[0] = 1e6
        actions[1] = float("nan")
        actions[2, 0] = -float("inf")
        _, reward, _, _, _ = unwrapped.step(actions)
        default = unwrapped.scene["robot"].data.default_joint_pos.torch[:, term._joint_ids]
        assert unwrapped.action_manager.action[0].tolist() == [ACTION_CLIP] * actions.shape[1]
        # The Limit's targets stay TARGET_STOP_MARGIN_RAD inside each joint's range (the simulator's own limits).
        upper = unwrapped.scene["robot"].data.joint_pos_limits.torch[0, term._joint_ids, 1] - TARGET_STOP_MARGIN_RAD
        clipped = torch.minimum(default[0] + ACTION_CLIP * term.cfg.scale, upper)
        # The task's target filter blends it with the last target (the default pose, after zero actions).
        alpha = term.cfg.target_filter_alpha
        torch.testing.assert_close(term.processed_actions[0], alpha * clipped + (1.0 - alpha) * default[0])
        torch.testing.assert_close(term.processed_actions[1:], default[1:])
        assert unwrapped.action_manager.action[1:].abs().max() == 0.0
        # action_rate_l2 of a 12 after a 0 on 12 joints: -0.005 · 12 · 144 · 0.02 s = -0.17 (was -1.2e9).
        assert torch.isfinite(reward).all() and reward[0] > -1.0
        assert term.nonfinite_actions.tolist() == [0, 1, 1]


def test_eval_report_counts_the_faults():
    """``eval.json``'s ``faults``: NaN from the policy passes rsl-rl's clip and is held and counted."""
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    from linkage_lab.evaluation.evaluate import EvalRequest, run_evaluation
    from linkage_lab.runtime import make_env

    class SometimesNaN:
        description = {"type": "test"}

        def __init__(self):
            self.calls = 0

        def __call__(self, obs):
            self.calls += 1
            actions = torch.zeros(obs.shape[0], 12)
            if self.calls % 2 == 0:
                actions[1] = float("nan")
            return actions

        def reset(self, dones):
            pass

    with make_env(TASKS[0], num_envs=2, device="cpu", env_cfg_hook=_deterministic_events) as (env, agent_cfg):
        wrapped = RslRlVecEnvWrapper(env, clip_actions=agent_cfg.clip_actions)
        request = EvalRequest(task=TASKS[0], episodes=100, num_envs=2, max_steps=10, progress=False)
        report, _ = run_evaluation(wrapped, SometimesNaN(), agent_cfg, request)
    assert report["faults"] == {
        "nonfinite_actions": 5,
        "nonfinite_state_resets": 0,
        "nonfinite_reward_values": 0,
        "unreachable_linkage_poses": 0,
    }
