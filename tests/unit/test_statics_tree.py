"""Whole-body forward kinematics, centre of mass and static joint torques against hand calculations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linkage_lab.description.model import Joint, Link, RobotModel, Solid
from linkage_lab.kinematics.rotation import axis_rotation
from linkage_lab.robots.marvin.description import build_marvin_model
from linkage_lab.robots.registry import get_robot
from linkage_lab.statics.tree import KinematicTree, weight_torque

pytestmark = pytest.mark.unit

G = 9.81


@pytest.fixture(scope="module")
def marvin() -> KinematicTree:
    return KinematicTree(build_marvin_model(get_robot("marvin").config()))


def _toy(joint_axis=(0.0, 1.0, 0.0)) -> KinematicTree:
    """Base: 2 kg point at (0, 0, 0.1). Child: 1 kg point 0.5 m down its frame, hinged at (0.2, 0, 0)."""
    base = Link("base", [Solid("point", 2.0, (0.0, 0.0, 0.1))])
    arm = Link("arm", [Solid("point", 1.0, (0.0, 0.0, -0.5))])
    hinge = Joint("hinge", "revolute", "base", "arm", (0.2, 0.0, 0.0), joint_axis, (-3.0, 3.0))
    return KinematicTree(RobotModel("toy", [base, arm], [hinge]))


def test_marvin_total_mass_is_40_kg(marvin):
    assert marvin.total_mass_kg == pytest.approx(40.0, abs=1e-12)


def test_marvin_zero_pose_com_by_hand(marvin):
    """Sum m·c over the config's masses, placed by hand (docs/design/robots.md §2.2; pelvis frame on the hip line)."""
    thigh = shin = 0.32
    ankle_z = -(thigh + shin)
    # Per leg, (mass kg, x m, z m): hip-yaw drum 0…0.08 m above the hip; hip-roll block at the hip;
    # thigh cylinder; shin structure (2.6 − 2 × 0.90 kg) cylinder; RS03 a 80 mm and b 180 mm above
    # the ankle at x −0.01 and +0.04; ankle cross at the ankle; sole box centre 0.04 ahead,
    # 0.045 m below the ankle (0.06 ankle height − half the 0.03 sole).
    leg = [
        (1.0, 0.0, 0.04),
        (1.5, 0.0, 0.0),
        (3.0, 0.0, -thigh / 2),
        (0.8, 0.0, -thigh - shin / 2),
        (0.9, -0.01, ankle_z + 0.08),
        (0.9, 0.04, ankle_z + 0.18),
        (0.1, 0.0, ankle_z),
        (0.7, 0.22 / 2 - 0.07, ankle_z - 0.06 + 0.03 / 2),
    ]
    # Per arm: upper arm 0.42 → 0.18 m, forearm 0.18 → −0.04 m above the hip line.
    arm = [(1.0, 0.0, 0.42 - 0.12), (0.6, 0.0, 0.18 - 0.11)]
    pelvis = [(19.0, 0.0, 0.20)]
    parts = pelvis + 2 * leg + 2 * arm
    mass = sum(m for m, _, _ in parts)
    expected = np.array([sum(m * x for m, x, _ in parts) / mass, 0.0, sum(m * z for m, _, z in parts) / mass])
    total, com = marvin.center_of_mass(marvin.forward_kinematics({}))
    assert total == pytest.approx(40.0)
    np.testing.assert_allclose(com, expected, atol=1e-12)
    np.testing.assert_allclose(com, [0.00275, 0.0, -0.0021750], atol=1e-9)  # the same sums, done on paper


def test_toy_com_and_rotation():
    tree = _toy()
    frames = tree.forward_kinematics({})
    mass, com = tree.center_of_mass(frames)
    assert mass == 3.0
    # (2·(0, 0, 0.1) + 1·(0.2, 0, −0.5)) / 3
    np.testing.assert_allclose(com, [0.2 / 3, 0.0, (0.2 - 0.5) / 3], atol=1e-15)
    # +90° about +y swings the arm's −z point to −x: (0.2 − 0.5, 0, 0).
    frames = tree.forward_kinematics({"hinge": math.pi / 2})
    np.testing.assert_allclose(tree.link_com_world(frames, "arm"), [0.2 - 0.5, 0.0, 0.0], atol=1e-15)


@pytest.mark.parametrize("joint", ["left_knee", "left_hip_roll", "right_ankle_pitch", "left_elbow"])
def test_joint_rotation_moves_child_com_as_a_rotation(marvin, joint):
    angle = 0.4
    before = marvin.forward_kinematics({})
    after = marvin.forward_kinematics({joint: angle})
    axis, point = marvin.joint_axis_world(before, joint)
    turn = axis_rotation(axis, angle)
    for link in marvin.subtree_links(joint):
        expected = point + turn @ (marvin.link_com_world(before, link) - point)
        np.testing.assert_allclose(marvin.link_com_world(after, link), expected, atol=1e-14)
    untouched = set(marvin.mass_kg) - marvin.subtree_links(joint)
    for link in untouched:
        np.testing.assert_allclose(marvin.link_com_world(after, link), marvin.link_com_world(before, link))


def test_base_pose_moves_everything_rigidly(marvin):
    rotation, position = axis_rotation((0.0, 0.0, 1.0), 0.3), np.array([1.0, -2.0, 0.5])
    _, com0 = marvin.center_of_mass(marvin.forward_kinematics({"left_knee": 0.7}))
    _, com1 = marvin.center_of_mass(marvin.forward_kinematics({"left_knee": 0.7}, rotation, position))
    np.testing.assert_allclose(com1, rotation @ com0 + position, atol=1e-14)


def test_unknown_joint_is_rejected(marvin):
    with pytest.raises(KeyError, match="nope"):
        marvin.forward_kinematics({"nope": 0.1})


def test_weight_torque_simple_cases():
    pitch_axis = (0.0, -1.0, 0.0)  # Marvin's ankle pitch: + = toes up
    # Directly above the ankle: no torque.
    assert weight_torque(pitch_axis, (0, 0, 0), 40.0, (0.0, 0.0, 0.5), G) == pytest.approx(0.0, abs=1e-12)
    # 0.1 m ahead: m g 0.1, toes down (negative).
    assert weight_torque(pitch_axis, (0, 0, 0), 40.0, (0.1, 0.0, 0.5), G) == pytest.approx(-40.0 * G * 0.1)
    # 0.05 m to the left, about the roll axis +x: m g 0.05 pushing the left (+y) edge down → −.
    assert weight_torque((1, 0, 0), (0, 0, 0), 40.0, (0.0, 0.05, 0.5), G) == pytest.approx(-40.0 * G * 0.05)


def test_grounded_joint_torque_holds_the_weight_above():
    """The toy hung upside down: the arm on the ground holds the 2 kg base 0.2 m to the hinge's −x."""
    tree = _toy()
    frames = tree.forward_kinematics({})
    # Base point (0, 0, 0.1) relative to the hinge (0.2, 0, 0): r = (−0.2, 0, 0.1); axis +y.
    expected = np.cross([-0.2, 0.0, 0.1], [0.0, 0.0, -2.0 * G])[1]
    assert tree.grounded_joint_torque(frames, "hinge", G) == pytest.approx(expected)
    assert expected == pytest.approx(-2.0 * G * 0.2)
