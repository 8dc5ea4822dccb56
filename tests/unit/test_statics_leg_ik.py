"""Closed-form spatial leg IK: FK(IK(target)) = target on Marvin's model, and closed-form cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linkage_lab.kinematics.leg_ik import LegReachError, leg_inverse_kinematics
from linkage_lab.kinematics.rotation import axis_rotation
from linkage_lab.robots.marvin.description import build_marvin_model
from linkage_lab.robots.registry import get_robot
from linkage_lab.statics.tree import KinematicTree

pytestmark = pytest.mark.unit

THIGH = SHIN = 0.32


@pytest.fixture(scope="module")
def marvin() -> KinematicTree:
    return KinematicTree(build_marvin_model(get_robot("marvin").config()))


@pytest.mark.parametrize("side", ["left", "right"])
def test_ik_recovers_random_leg_angles(marvin, side):
    rng = np.random.default_rng(7)
    names = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
    lows = (-0.5, -0.35, -1.5, 0.1, -0.6, -0.3)
    highs = (0.5, 0.5, 0.8, 2.0, 0.6, 0.3)
    for _ in range(20):
        values = rng.uniform(lows, highs)
        joint_pos = {f"{side}_{n}": float(v) for n, v in zip(names, values, strict=True)}
        pelvis = axis_rotation((0, 1, 0), rng.uniform(-0.4, 0.4)) @ axis_rotation((1, 0, 0), rng.uniform(-0.2, 0.2))
        frames = marvin.forward_kinematics(joint_pos, pelvis, (0.1, -0.2, 0.7))
        foot = frames[f"{side}_foot"]
        angles = leg_inverse_kinematics(
            frames[f"{side}_hip_yaw_link"].position, foot.position, foot.rotation, pelvis, THIGH, SHIN
        )
        solved = angles.joint_pos(side)
        for name, value in joint_pos.items():
            assert solved[name] == pytest.approx(value, abs=1e-9), name


def test_flat_foot_below_a_level_pelvis():
    """Hip 0.5 m above the ankle: knee = 2 arccos(0.5 / 0.64); hip and ankle pitch take half each."""
    angles = leg_inverse_kinematics(
        np.array([0.0, 0.09, 0.5]), np.array([0.0, 0.09, 0.0]), np.eye(3), np.eye(3), THIGH, SHIN
    )
    half = math.acos(0.25 / 0.32)
    assert angles.knee == pytest.approx(2 * half)
    assert angles.hip_pitch == pytest.approx(-half)  # − = thigh forward
    assert angles.ankle_pitch == pytest.approx(half)  # + = toes up: sole flat needs ap = hp + knee
    assert angles.hip_yaw == pytest.approx(0.0) and angles.hip_roll == pytest.approx(0.0)
    assert angles.ankle_roll == pytest.approx(0.0)


def test_sideways_leg_rolls_hip_and_ankle_opposite():
    """Ankle 0.1 m outboard (+y) of the hip, leg straight: hip roll +atan(0.1 / h), ankle roll minus it."""
    height = math.sqrt(0.64**2 - 0.1**2)
    angles = leg_inverse_kinematics(
        np.array([0.0, 0.0, height]), np.array([0.0, 0.1, 0.0]), np.eye(3), np.eye(3), THIGH, SHIN
    )
    assert angles.knee == pytest.approx(0.0, abs=1e-6)
    assert angles.hip_roll == pytest.approx(math.atan2(0.1, height))
    assert angles.ankle_roll == pytest.approx(-math.atan2(0.1, height))


def test_out_of_reach_raises():
    with pytest.raises(LegReachError):
        leg_inverse_kinematics(np.array([0, 0, 0.7]), np.zeros(3), np.eye(3), np.eye(3), THIGH, SHIN)


@pytest.mark.parametrize(("stretch", "reachable"), [(1.0 + 0.5e-6, True), (1.0 + 2e-6, False)])
def test_planar_and_spatial_leg_ik_share_one_reach_test(stretch, reachable):
    import torch

    from linkage_lab.kinematics.leg_ik import REACH_RTOL, LegConvention, leg_ik

    assert REACH_RTOL == 1e-6
    thigh, shin = 0.3, 0.272
    reach = (thigh + shin) * stretch
    calls = [
        lambda: leg_ik(
            torch.tensor([0.0], dtype=torch.float64),
            torch.tensor([reach], dtype=torch.float64),
            thigh,
            shin,
            LegConvention(),
        ),
        lambda: leg_inverse_kinematics(np.zeros(3), np.array([0.0, 0.0, -reach]), np.eye(3), np.eye(3), thigh, shin),
    ]
    for call in calls:
        if reachable:
            call()
        else:
            with pytest.raises(LegReachError):
                call()
