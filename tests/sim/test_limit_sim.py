"""The Limit in simulation: it stands, and policy I/O is in canonical joint order."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.robots.limit.joints import JOINT_NAMES
from linkage_lab.robots.registry import get_robot

pytestmark = pytest.mark.sim
TASK = "LinkageLab-Velocity-Flat-Limit"


def test_limit_stands_with_zero_actions(build_env, zero_actions):
    from linkage_lab.robots.limit.articulation import standing_height_m

    standing = standing_height_m(get_robot("limit").config())
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
        # Identical starts in both envs, then opposite commands on one action index: the body
        # that turns, read from the physics' body poses, names the joint that index drives.
        events = unwrapped.event_manager.cfg
        events.reset_base.params["velocity_range"] = {}
        events.reset_base.params["pose_range"] = {}
        events.reset_robot_joints.params["position_range"] = (1.0, 1.0)
        env.reset()
        for _ in range(10):
            env.step(zero_actions(env))

        def knee_angle(leg: str) -> torch.Tensor:
            quat = robot.data.body_quat_w.torch
            names = robot.body_names
            parent, child = quat[:, names.index(f"{leg}_hip")], quat[:, names.index(f"{leg}_thigh")]

            def pitch(q):
                x, y, z, w = q.unbind(-1)
                return torch.atan2(2 * (w * y - z * x), 1 - 2 * (x * x + y * y))

            return pitch(child) - pitch(parent)

        actions = zero_actions(env)
        index = JOINT_NAMES.index("rr_knee")
        actions[0, index], actions[1, index] = 1.0, -1.0
        for _ in range(15):
            env.step(actions)
        spread = {leg: (knee_angle(leg)[0] - knee_angle(leg)[1]).abs().item() for leg in ("fl", "fr", "rl", "rr")}
        assert spread["rr"] > 0.2, spread
        assert all(spread["rr"] > 4 * spread[leg] for leg in ("fl", "fr", "rl")), spread
        # The observation's joint_pos block follows the same order.
        rel = robot.data.joint_pos.torch - robot.data.default_joint_pos.torch
        assert (rel[0, index] - rel[1, index]).abs() > 0.2


def test_each_env_gets_its_feet_friction_draw(build_env, zero_actions):
    """MuJoCo gives a contact the larger of its two shapes' friction: the ground must sit at the range's low end."""
    from isaaclab_newton.physics import NewtonManager

    low, high = get_robot("limit").config().randomization.ground_friction
    with build_env(TASK, num_envs=4, overrides=("env.events.push_robot=null",)) as (env, _):
        env.reset()
        env.step(zero_actions(env))  # the solver takes model changes at its next step
        model = NewtonManager._solver.mjw_model
        friction = torch.as_tensor(model.geom_friction.numpy()[..., 0])  # (worlds, geoms)
        ground = torch.as_tensor(model.geom_bodyid.numpy()) == 0
        assert torch.allclose(friction[:, ground], torch.tensor(low))
        feet = friction[:, ~ground]
        # What a foot's contact gets, max(ground, foot), is the foot's own draw, and the draws differ across envs.
        assert bool(((feet >= low - 1e-6) & (feet <= high + 1e-6)).all())
        assert float(torch.maximum(feet, friction[:, ground][:, :1]).std()) > 0.05
