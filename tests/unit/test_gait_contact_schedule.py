"""The gait-rhythm reward of the residual task, on hand-made contact states (no simulation)."""

from __future__ import annotations

import math
import types

import pytest
import torch

from linkage_lab.gait.phase import BIPED_PHASE_OFFSETS
from linkage_lab.tasks.velocity.config.marvin.residual_env_cfg import FEET_BY_LEG
from linkage_lab.tasks.velocity.residual import gait_contact_schedule

pytestmark = pytest.mark.unit


def _env(phase: float, stepping: float, contact_right: bool, contact_left: bool, margin: float = 0.1):
    term = types.SimpleNamespace(
        gait_state=torch.tensor([[phase, 0.5, stepping]]),
        gait_prior=types.SimpleNamespace(
            gait=types.SimpleNamespace(cfg=types.SimpleNamespace(double_support_margin=margin))
        ),
    )
    contact_time = torch.tensor([[0.1 if contact_right else 0.0, 0.1 if contact_left else 0.0, 0.3]])
    sensor = types.SimpleNamespace(
        data=types.SimpleNamespace(current_contact_time=types.SimpleNamespace(torch=contact_time))
    )
    return types.SimpleNamespace(
        action_manager=types.SimpleNamespace(get_term=lambda name: term),
        scene=types.SimpleNamespace(sensors={"contact_forces": sensor}),
    )


SENSOR = types.SimpleNamespace(name="contact_forces", body_ids=[0, 1])


@pytest.mark.parametrize(
    ("phase", "right", "left", "expected"),
    [
        # φ = π/2: the right leg (offset 0) is at the top of its swing, the left (offset π) in stance.
        (math.pi / 2, False, True, 1.0),
        (math.pi / 2, True, True, 0.5),  # the swing foot kept down
        (math.pi / 2, True, False, 0.0),  # the wrong foot up
        # φ = 0.05: sin ψ = 0.05 < c = 0.1 for the right leg, so both feet are meant down (double support).
        (0.05, True, True, 1.0),
        (0.05, False, True, 0.5),
    ],
)
def test_contact_matches_the_schedule(phase, right, left, expected):
    reward = gait_contact_schedule(_env(phase, 1.0, right, left), SENSOR)
    assert reward.tolist() == [pytest.approx(expected)]


def test_no_reward_while_the_prior_stands():
    assert gait_contact_schedule(_env(math.pi / 2, 0.2, False, True), SENSOR).tolist() == [0.0]


def test_marvin_feet_are_listed_in_the_gait_leg_order():
    assert tuple(name.removesuffix("_foot") for name in FEET_BY_LEG) == tuple(BIPED_PHASE_OFFSETS)
