"""Marvin in simulation: stands for 2 s on zero actions in both ankle modes."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.sim
TASK = "LinkageLab-Velocity-Flat-Marvin"


@pytest.mark.parametrize("ankle", ["diamond", "box"])
def test_marvin_stands_two_seconds(ankle, build_env, zero_actions):
    from linkage_lab.robots.marvin.articulation import standing_height_m
    from linkage_lab.robots.registry import get_robot

    standing = standing_height_m(get_robot("marvin").config())
    with build_env(TASK, num_envs=2, overrides=(f"presets={ankle}", "env.events.push_robot=null")) as (
        env,
        _,
    ):
        unwrapped = env.unwrapped
        unwrapped.event_manager.cfg.reset_base.params["velocity_range"] = {}
        actuator = unwrapped.scene["robot"].actuators["ankles"]
        expected = ["identity"] * 2 if ankle == "box" else ["marvin_ankle_left", "marvin_ankle_right"]
        assert list(actuator.cfg.transmissions) == expected
        env.reset()
        robot = unwrapped.scene["robot"]
        steps = int(round(2.0 / unwrapped.step_dt))
        for step in range(steps):
            obs, reward, terminated, _, _ = env.step(zero_actions(env))
            assert torch.isfinite(obs["policy"]).all() and torch.isfinite(reward).all()
            assert not terminated.any(), f"fell at step {step}"
        height = robot.data.root_pos_w.torch[:, 2]
        assert (height - standing).abs().max() < 0.08, f"pelvis at {height.tolist()} vs {standing:.3f}"
        assert robot.data.projected_gravity_b.torch[:, 2].max() < -0.95, "torso tilted more than ~18 degrees"
