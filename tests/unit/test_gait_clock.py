"""The gait clock: its phase by hand, the robot side's clock against training's, the trot schedule and its score,
and the mirror rule (the Limit's deploy layer runs it: test_deploy_limit.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from linkage_lab.deploy.gait_clock import GaitClock, clock_frequency
from linkage_lab.tasks.velocity.gait_clock import (
    clock_observation,
    clock_phase,
    schedule_score,
    stance_desire,
)
from linkage_lab.tasks.velocity.symmetry import TERM_RULES

pytestmark = pytest.mark.unit

#: The Limit's legs and trot offsets (fl, rr one pair; fr, rl the other).
OFFSETS = (0.0, 0.5, 0.5, 0.0)


def test_phase_by_hand():
    # 50 Hz control, 3 Hz gait: 0.06 cycles a tick; tick 17 is 1.02 cycles, phase 0.02.
    phase = clock_phase(torch.tensor([0, 1, 8, 17, 50]), 0.02, 3.0)
    torch.testing.assert_close(phase, torch.tensor([0.0, 0.06, 0.48, 0.02, 0.0]), atol=1e-6, rtol=0)
    obs = clock_observation(torch.tensor([0.0, 0.25, 0.5]))
    torch.testing.assert_close(obs, torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0]]), atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="positive"):
        clock_phase(3, 0.02, 0.0)


def test_the_robots_clock_matches_trainings_for_a_long_run():
    clock = GaitClock(0.02, 3.0)
    ticks = torch.arange(0, 100_000, 97)
    expected = clock_observation(clock_phase(ticks, 0.02, 3.0)).numpy()
    got = []
    for k in ticks.tolist():
        clock.ticks = k
        got.append(clock.observation())
    np.testing.assert_allclose(np.array(got), expected, atol=1e-5)
    clock.reset()
    np.testing.assert_allclose(clock.observation(), [0.0, 1.0])
    clock.advance()
    assert clock.ticks == 1 and clock.phase == pytest.approx(0.06)


@pytest.mark.parametrize("period, frequency", [(0.0, 3.0), (0.02, -1.0), (0.02, float("nan")), ("0.02", 3.0)])
def test_a_clock_refuses_bad_constants(period, frequency):
    with pytest.raises(ValueError, match="positive finite"):
        GaitClock(period, frequency)


def test_a_clock_term_must_record_its_frequency():
    assert clock_frequency({"name": "gait_clock", "params": {"frequency_hz": 2.5}}) == 2.5
    with pytest.raises(ValueError, match="frequency_hz"):
        clock_frequency({"name": "gait_clock", "params": {}})


def test_the_trot_schedule_by_hand():
    desire = stance_desire(torch.tensor([0.25, 0.75, 0.0, 0.5]), OFFSETS)
    # A quarter cycle in: pair (fl, rr) wanted down, the other up; three quarters: the other way round.
    torch.testing.assert_close(desire[0], torch.tensor([1.0, 0.0, 0.0, 1.0]), atol=1e-3, rtol=0)
    torch.testing.assert_close(desire[1], torch.tensor([0.0, 1.0, 1.0, 0.0]), atol=1e-3, rtol=0)
    # At a switch every foot is half wanted.
    torch.testing.assert_close(desire[2:], torch.full((2, 4), 0.5), atol=1e-6, rtol=0)
    # The pairs take turns: at every phase one pair's desire is one minus the other's.
    phase = torch.linspace(0.0, 1.0, 101)
    desire = stance_desire(phase, OFFSETS)
    torch.testing.assert_close(desire[:, 0] + desire[:, 1], torch.ones(101), atol=1e-6, rtol=0)


def test_the_score_pays_a_loaded_resting_foot_and_a_foot_in_the_air():
    desire = torch.tensor([[1.0, 0.0, 0.0, 1.0]])
    stance_force, still, swing_speed = torch.tensor(40.0), torch.tensor(0.0), torch.tensor(1.0)
    right = schedule_score(
        desire,
        torch.stack([still, swing_speed, swing_speed, still])[None],
        torch.stack([stance_force, still, still, stance_force])[None],
        0.1,
        5.0,
    )
    assert right.item() == pytest.approx(1.0, abs=1e-6)
    # The other pair on the ground instead: nothing.
    wrong = schedule_score(
        1.0 - desire,
        torch.stack([still, swing_speed, swing_speed, still])[None],
        torch.stack([stance_force, still, still, stance_force])[None],
        0.1,
        5.0,
    )
    assert wrong.item() == pytest.approx(0.0, abs=1e-6)
    # A foot wanted down that hovers (no force) or skids at 0.1 m/s earns nothing or exp(-1).
    hover = schedule_score(torch.tensor([[1.0]]), torch.tensor([[0.0]]), torch.tensor([[0.0]]), 0.1, 5.0)
    skid = schedule_score(torch.tensor([[1.0]]), torch.tensor([[0.1]]), torch.tensor([[40.0]]), 0.1, 5.0)
    assert hover.item() == 0.0 and skid.item() == pytest.approx(math.exp(-1.0), rel=1e-5)


def test_the_mirror_rule_is_the_schedule_with_the_legs_swapped():
    # Mirroring swaps fl <-> fr and rl <-> rr. The mirrored robot's clock, (sin, cos) times the rule, must want
    # down exactly the feet whose mirror images the original clock wants down.
    rule = torch.tensor(TERM_RULES["gait_clock"])
    swap = [1, 0, 3, 2]
    for phase in torch.linspace(0.0, 0.99, 34):
        sin, cos = rule * clock_observation(phase)
        mirrored_phase = torch.remainder(torch.atan2(sin, cos) / (2.0 * math.pi), 1.0)
        torch.testing.assert_close(
            stance_desire(mirrored_phase, OFFSETS), stance_desire(phase, OFFSETS)[swap], atol=1e-5, rtol=0
        )
