"""The residual task's contact-schedule reward, on stand-ins for the env's action term and contact sensor."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from linkage_lab.gait.biped import BIPED_SIDES, BipedGait
from linkage_lab.gait.commanded import CommandedBipedGait, GaitCommandCfg
from linkage_lab.robots.marvin.gait import marvin_sprint_gait_cfg
from linkage_lab.tasks.velocity.residual import gait_contact_schedule

pytestmark = pytest.mark.unit


def _env(state: torch.Tensor, contact_time: torch.Tensor):
    prior = CommandedBipedGait(BipedGait(marvin_sprint_gait_cfg(heading_gain=0.0)), GaitCommandCfg(), 0.02)
    term = SimpleNamespace(gait_prior=prior, applied_gait_state=state)
    # The sensor sees four bodies; the feet are bodies 3 (right) and 1 (left), in the gait's leg order.
    sensor = SimpleNamespace(data=SimpleNamespace(current_contact_time=SimpleNamespace(torch=contact_time)))
    env = SimpleNamespace(
        action_manager=SimpleNamespace(get_term=lambda name: term), scene=SimpleNamespace(sensors={"contact": sensor})
    )
    cfg = SimpleNamespace(name="contact", body_ids=[3, 1])
    return env, cfg


def test_share_of_feet_on_the_schedule():
    assert BIPED_SIDES == ("right", "left")
    # Env 0-3 at φ = π/2 stepping: the right foot swings, the left stands. Env 4 stands (a = 0).
    state = torch.tensor([[math.pi / 2, 0.6, 1.0]] * 4 + [[math.pi / 2, 0.0, 0.0]])
    down = torch.tensor(
        [
            [0.0, 0.3, 0.0, 0.0],  # right up, left down: on schedule
            [0.0, 0.3, 0.0, 0.2],  # both down: the right foot is off it
            [0.0, 0.0, 0.0, 0.0],  # both up (a hop): the left foot is off it
            [0.0, 0.0, 0.0, 0.2],  # right down, left up: both off
            [0.0, 0.3, 0.0, 0.2],  # standing on both: on schedule
        ]
    )
    env, cfg = _env(state, down)
    reward = gait_contact_schedule(env, cfg)
    torch.testing.assert_close(reward, torch.tensor([1.0, 0.5, 0.5, 0.0, 1.0]))
    # Half a cycle later the feet swap roles.
    env, cfg = _env(state + torch.tensor([math.pi, 0.0, 0.0]), down)
    torch.testing.assert_close(gait_contact_schedule(env, cfg)[:4], torch.tensor([0.0, 0.5, 0.5, 1.0]))


def test_residual_task_carries_the_term_off_with_the_feet_in_leg_order():
    from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import MarvinResidualFlatEnvCfg

    term = MarvinResidualFlatEnvCfg().rewards.gait_contact
    assert term.func is gait_contact_schedule and term.weight == 0.0
    sensor = term.params["sensor_cfg"]
    assert sensor.body_names == [f"{side}_foot" for side in BIPED_SIDES] and sensor.preserve_order
