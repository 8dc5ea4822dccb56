"""The Limit's trot: pairs, canonical order, sole-flat ankles, speed from the command."""

from __future__ import annotations

import math

import pytest
import torch

from linkage_lab.gait import TrotGait, leg_fk, step_length_for_velocity
from linkage_lab.robots.limit.gait import limit_trot_cfg

pytestmark = pytest.mark.unit

CANONICAL = [f"{leg}_{joint}" for leg in ("fl", "fr", "rl", "rr") for joint in ("hip", "knee", "ankle")]


def test_canonical_joint_order():
    gait = TrotGait(limit_trot_cfg())
    assert list(gait.joint_names) == CANONICAL
    assert gait.joint_targets(torch.zeros(7), 0.2).shape == (7, 12)


def test_pairs_share_phase_and_differ_by_pi():
    gait = TrotGait(limit_trot_cfg())
    psi = gait.leg_phases(torch.linspace(0.0, 3.0, 61, dtype=torch.float64))
    fl, fr, rl, rr = psi.unbind(-1)
    torch.testing.assert_close(fl, rr)  # pair A
    torch.testing.assert_close(fr, rl)  # pair B
    difference = torch.remainder(fr - fl, 2 * math.pi)
    torch.testing.assert_close(difference, torch.full_like(difference, math.pi), atol=1e-9, rtol=0)


def test_sole_flat_three_pitch_angles_sum_to_zero():
    gait = TrotGait(limit_trot_cfg(joint_limits_rad=None))
    targets = gait.joint_targets(torch.linspace(2.0, 3.0, 40, dtype=torch.float64), 0.3).view(-1, 4, 3)
    torch.testing.assert_close(targets.sum(-1), torch.zeros(40, 4, dtype=torch.float64), atol=1e-12, rtol=0)


def test_targets_stay_in_joint_limits():
    cfg = limit_trot_cfg()
    targets = TrotGait(cfg).joint_targets(torch.linspace(2.0, 3.0, 40, dtype=torch.float64), 0.5)
    lower, upper = torch.tensor([cfg.joint_limits_rad[name] for name in CANONICAL], dtype=torch.float64).T
    assert bool(((targets >= lower - 1e-12) & (targets <= upper + 1e-12)).all())
    assert cfg.joint_limits_rad["fl_ankle"] == (-0.6, 0.6)
    assert cfg.joint_limits_rad["fl_knee"] == (-1.57, -0.25)  # one-sided: the parallelogram folds flat at 0


def test_step_length_from_velocity():
    # S = v / 2f: 0.25 m/s at 2.5 Hz → 0.05 m; saturates at ±0.10 m.
    step = step_length_for_velocity(torch.tensor([0.25, 2.0, -2.0]), 2.5, 0.10)
    torch.testing.assert_close(step, torch.tensor([0.05, 0.10, -0.10]))


def test_feet_where_the_trajectory_puts_them():
    cfg = limit_trot_cfg(joint_limits_rad=None)
    gait = TrotGait(cfg)
    # After the ramp, at φ = π: pair A (ψ = π) feet at +S/2, pair B (ψ = 0) at −S/2; S = 0.05 m.
    time = torch.tensor([2.0 + 0.5 / cfg.frequency_hz], dtype=torch.float64)
    targets = gait.joint_targets(time, 0.25).view(4, 3)
    x, z = leg_fk(targets[:, 0], targets[:, 1], cfg.thigh_length_m, cfg.shank_length_m, cfg.leg_convention)
    torch.testing.assert_close(x, torch.tensor([0.025, -0.025, -0.025, 0.025], dtype=torch.float64))
    torch.testing.assert_close(z, torch.full((4,), cfg.hip_height_m, dtype=torch.float64))
    # The Limit's knee bends backwards: knee < 0, hip > 0 (docs/design/robots.md standing pose 0.6 / −1.2).
    assert bool((targets[:, 1] < 0).all()) and bool((targets[:, 0] > 0).all())


def test_zero_speed_trots_in_place():
    cfg = limit_trot_cfg(joint_limits_rad=None)
    targets = TrotGait(cfg).joint_targets(torch.tensor([4.0 + 0.25 / cfg.frequency_hz]), 0.0).view(4, 3)
    x, z = leg_fk(targets[:, 0], targets[:, 1], cfg.thigh_length_m, cfg.shank_length_m, cfg.leg_convention)
    torch.testing.assert_close(x, torch.zeros(4), atol=1e-6, rtol=0)
    # 4 s is 10 whole cycles, so φ = π/2: pair A at full lift H, pair B on the ground.
    lift = cfg.hip_height_m - z
    torch.testing.assert_close(lift, torch.tensor([0.03, 0.0, 0.0, 0.03]), atol=1e-6, rtol=0)
