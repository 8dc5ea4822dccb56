"""The Limit in simulation: it stands, and policy I/O is in canonical joint order."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.robots.limit_joints import JOINT_NAMES

pytestmark = pytest.mark.sim
TASK = "LinkageLab-Velocity-Flat-Limit"


def test_limit_stands_with_zero_actions(build_env, zero_actions):
    from linkage_lab.config import load_robot_config
    from linkage_lab.robots.limit import standing_height_m

    standing = standing_height_m(load_robot_config("limit"))
    # No pushes or velocity kicks: the robot should just stand.
    overrides = ("env.events.push_robot=null",)
    with build_env(TASK, num_envs=4, overrides=overrides) as (env, _):
        unwrapped = env.unwrapped
        unwrapped.event_manager.cfg.reset_base.params["velocity_range"] = {}
        env.reset()
        robot = unwrapped.scene["robot"]
        heights = []
        for step in range(150):
            _, _, terminated, _, _ = env.step(zero_actions(env))
            assert not terminated.any(), f"terminated (base contact) at step {step}"
            if step >= 50:
                heights.append(robot.data.root_pos_w.torch[:, 2].clone())
        heights = torch.stack(heights)
        assert (heights - standing).abs().max() < 0.03, f"base height {heights.mean():.3f} vs standing {standing:.3f}"
        assert (heights.max(0).values - heights.min(0).values).max() < 0.01, "base height not steady"


def test_articulation_and_action_order_is_canonical(build_env, zero_actions):
    with build_env(TASK, num_envs=2, overrides=("env.events.push_robot=null",)) as (env, _):
        unwrapped = env.unwrapped
        robot = unwrapped.scene["robot"]
        assert tuple(robot.joint_names) == JOINT_NAMES
        term = unwrapped.action_manager.get_term("joint_pos")
        assert tuple(term._joint_names) == JOINT_NAMES
        env.reset()
        for _ in range(20):
            env.step(zero_actions(env))
        # Physical proof: push action index of rr_knee (id 11) and check which body turns.
        def relative_pitch(parent: str, child: str) -> torch.Tensor:
            quat = robot.data.body_quat_w.torch
            names = robot.body_names
            parent_q, child_q = quat[:, names.index(parent)], quat[:, names.index(child)]
            # Pitch of each body about world y from its x axis direction (robot is upright, planar legs).
            def pitch(q):
                x, y, z, w = q.unbind(-1)
                return torch.asin((2 * (w * y - z * x)).clamp(-1, 1))

            return pitch(child_q) - pitch(parent_q)

        before = {leg: relative_pitch(f"{leg}_hip", f"{leg}_thigh") for leg in ("fl", "fr", "rl", "rr")}
        actions = zero_actions(env)
        actions[:, JOINT_NAMES.index("rr_knee")] = 1.0
        for _ in range(15):
            env.step(actions)
        after = {leg: relative_pitch(f"{leg}_hip", f"{leg}_thigh") for leg in ("fl", "fr", "rl", "rr")}
        moved = {leg: (after[leg] - before[leg]).abs().mean().item() for leg in before}
        assert moved["rr"] > 0.1, moved
        # The other knees only move with the body's sway.
        assert all(moved["rr"] > 3 * moved[leg] for leg in ("fl", "fr", "rl")), moved
        # The observation's joint_pos block follows the same order.
        rel = robot.data.joint_pos.torch - robot.data.default_joint_pos.torch
        assert rel[:, JOINT_NAMES.index("rr_knee")].abs().mean() > 0.1


def test_two_iteration_ppo_writes_a_checkpoint(tmp_path):
    from linkage_lab.training import train

    result = train(TASK, ["env.scene.num_envs=8", "agent.max_iterations=2"], device="cpu", log_root=tmp_path / "logs")
    assert result.checkpoint is not None and result.checkpoint.is_file()
    assert result.checkpoint.name == "model_1.pt"
    import torch as _torch

    state = _torch.load(result.checkpoint, map_location="cpu", weights_only=False)
    assert "iter" in state or "model_state_dict" in state or "actor_state_dict" in state
