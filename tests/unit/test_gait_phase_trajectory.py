"""Gait phase, foot trajectory, step ramp and lateral sway at hand-computed phases."""

from __future__ import annotations

import math

import pytest
import torch

from linkage_lab.gait import (
    BIPED_PHASE_OFFSETS,
    foot_trajectory,
    gait_phase,
    is_swing,
    lateral_sway,
    leg_phases,
    step_ramp,
)

pytestmark = pytest.mark.unit

PI = math.pi


def test_phase_is_two_pi_f_elapsed_and_held_before_start():
    # f = 0.5 Hz, t0 = 1 s: t = 1.5 → φ = 2π·0.5·0.5 = π/2; t = 3.5 → 2.5π ≡ π/2; before t0 → 0.
    phase = gait_phase(torch.tensor([0.0, 1.0, 1.5, 2.0, 3.5]), 0.5, start_time_s=1.0)
    expected = torch.tensor([0.0, 0.0, PI / 2, PI, PI / 2])
    torch.testing.assert_close(phase, expected, atol=1e-6, rtol=0)


def test_biped_offsets_and_swing_split():
    assert list(BIPED_PHASE_OFFSETS) == ["right", "left"]
    psi = leg_phases(torch.tensor([0.25 * PI, 1.5 * PI]), BIPED_PHASE_OFFSETS)
    torch.testing.assert_close(psi, torch.tensor([[0.25 * PI, 1.25 * PI], [1.5 * PI, 0.5 * PI]]))
    # Swing is [0, π), stance [π, 2π): right swings while left stands, then the reverse.
    assert is_swing(psi).tolist() == [[True, False], [False, True]]
    assert is_swing(torch.tensor([0.0, PI - 1e-4, PI, 2 * PI - 1e-4, 2 * PI])).tolist() == [
        True,
        True,
        False,
        False,
        True,
    ]


def test_foot_trajectory_at_hand_computed_phases():
    # S = 0.2 m, H = 0.05 m, c = 0.2.
    psi = torch.tensor([0.0, PI / 6, PI / 2, PI, 1.5 * PI], dtype=torch.float64)
    x, h = foot_trajectory(psi, 0.2, 0.05, 0.2)
    # x = −0.1 cos ψ: −0.1, −0.0866, 0, +0.1, 0.
    torch.testing.assert_close(x, torch.tensor([-0.1, -0.1 * math.sqrt(3) / 2, 0.0, 0.1, 0.0]).double())
    # h = 0.05·max(0, sin ψ − 0.2)/0.8: 0, 0.05·0.3/0.8 = 0.01875, 0.05, 0, 0.
    torch.testing.assert_close(h, torch.tensor([0.0, 0.01875, 0.05, 0.0, 0.0]).double())


def test_foot_stays_down_while_sin_below_margin():
    psi = torch.tensor([math.asin(0.2) - 1e-3, math.asin(0.2) + 1e-3])
    _, h = foot_trajectory(psi, 0.2, 0.05, 0.2)
    assert h[0] == 0.0 and h[1] > 0.0


def test_foot_trajectory_rejects_bad_margin():
    with pytest.raises(ValueError, match="double_support_margin"):
        foot_trajectory(torch.zeros(1), 0.1, 0.05, 1.0)


def test_step_ramp():
    ramp = step_ramp(torch.tensor([0.0, 1.0, 2.0, 5.0]), 2.0)
    torch.testing.assert_close(ramp, torch.tensor([0.0, 0.5, 1.0, 1.0]))
    assert step_ramp(torch.tensor([0.0]), 0.0).item() == 1.0


def test_lateral_sway_at_hand_computed_phases():
    # θ_hr = −A sin(φ + δ), A = 0.1: 0, −0.1, 0, +0.1 at φ = 0, π/2, π, 3π/2.
    phase = torch.tensor([0.0, PI / 2, PI, 1.5 * PI], dtype=torch.float64)
    torch.testing.assert_close(lateral_sway(phase, 0.1, 0.0), torch.tensor([0.0, -0.1, 0.0, 0.1]).double())
    # A lead δ = π/2 shifts it a quarter cycle earlier: −0.1 cos φ.
    torch.testing.assert_close(lateral_sway(phase, 0.1, PI / 2), torch.tensor([-0.1, 0.0, 0.1, 0.0]).double())
