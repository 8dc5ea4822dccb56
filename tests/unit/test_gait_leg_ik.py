"""Planar leg IK/FK, both robots' joint signs (checked against 3-D rotations), the parallelogram form."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from linkage_lab.kinematics import leg_ik as ik
from linkage_lab.robots.registry import load_robot_config

pytestmark = pytest.mark.unit


def _convention(name: str) -> ik.LegConvention:
    """The robot's own leg convention (its gait module reads it from the typed config)."""
    from linkage_lab.robots.limit.gait import leg_convention as limit_convention
    from linkage_lab.robots.marvin.gait import leg_convention as marvin_convention

    return {"marvin": marvin_convention, "limit": limit_convention}[name]()


def _robot(name: str) -> tuple[dict, float, float, tuple[list[float], list[float], list[float]]]:
    """Config, thigh, shank and the (hip, knee, ankle) pitch axes, read independently of the gait code."""
    config = load_robot_config(name)
    geometry = config["geometry"]
    if name == "marvin":
        joints = config["leg_joints"]
        axes = tuple(joints[j]["axis"] for j in ("hip_pitch", "knee", "ankle_pitch"))
        return config, geometry["thigh_length_m"], geometry["shin_length_m"], axes
    return config, geometry["thigh_length_m"], geometry["shank_length_m"], (geometry["joint_axis"],) * 3


def _rotation(axis: list[float], angle: float) -> np.ndarray:
    """Rodrigues' rotation about a unit axis."""
    k = np.asarray(axis, dtype=float)
    cross = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * cross + (1 - math.cos(angle)) * cross @ cross


def _chain_fk(axes, thigh, shank, hip, knee, ankle) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """3-D serial chain from the hip: (knee position, ankle position, foot orientation)."""
    r_thigh = _rotation(axes[0], hip)
    knee_pos = r_thigh @ np.array([0.0, 0.0, -thigh])
    r_shank = r_thigh @ _rotation(axes[1], knee)
    ankle_pos = knee_pos + r_shank @ np.array([0.0, 0.0, -shank])
    return knee_pos, ankle_pos, r_shank @ _rotation(axes[2], ankle)


def test_conventions_read_from_configs():
    marvin, limit = _convention("marvin"), _convention("limit")
    assert marvin == ik.LegConvention(1.0, 1.0, -1.0, knee_forward=True)
    assert limit == ik.LegConvention(1.0, 1.0, 1.0, knee_forward=False)


@pytest.mark.parametrize("name", ["marvin", "limit"])
def test_standing_pose_is_sole_flat_and_ik_recovers_it(name):
    config, thigh, shank, axes = _robot(name)
    pose = config["control"]["standing_pose_rad"]
    hip, knee, ankle = (pose[k] for k in (("hip_pitch", "knee", "ankle_pitch") if name == "marvin" else pose))
    _, ankle_pos, foot_rot = _chain_fk(axes, thigh, shank, hip, knee, ankle)
    np.testing.assert_allclose(foot_rot, np.eye(3), atol=1e-12)
    angles = ik.leg_ik(
        torch.tensor(ankle_pos[0]).double(),
        torch.tensor(-ankle_pos[2]).double(),
        thigh,
        shank,
        _convention(name),
    )
    np.testing.assert_allclose([float(a) for a in angles[:3]], [hip, knee, ankle], atol=1e-9)


@pytest.mark.parametrize("name", ["marvin", "limit"])
def test_foot_ahead_of_hip_stays_ahead_and_sole_flat(name):
    config, thigh, shank, axes = _robot(name)
    convention = _convention(name)
    reach = thigh + shank
    for forward in (0.15 * reach, -0.15 * reach):
        target = (forward, 0.85 * reach)
        angles = ik.leg_ik(torch.tensor(target[0]).double(), torch.tensor(target[1]).double(), thigh, shank, convention)
        knee_pos, ankle_pos, foot_rot = _chain_fk(axes, thigh, shank, *(float(a) for a in angles[:3]))
        assert math.copysign(1.0, ankle_pos[0]) == math.copysign(1.0, forward)
        np.testing.assert_allclose([ankle_pos[0], -ankle_pos[2]], target, atol=1e-9)
        np.testing.assert_allclose(foot_rot, np.eye(3), atol=1e-9)
        # Marvin's knee points forward of the hip–ankle line, the Limit's backwards.
        line_x_at_knee = ankle_pos[0] * knee_pos[2] / ankle_pos[2]
        assert (knee_pos[0] > line_x_at_knee) == convention.knee_forward


@pytest.mark.parametrize("name", ["marvin", "limit"])
def test_ik_then_fk_returns_random_targets(name):
    config, thigh, shank, _ = _robot(name)
    convention = _convention(name)
    generator = torch.Generator().manual_seed(0)
    d_min, d_max = abs(thigh - shank) + 0.02 * (thigh + shank), 0.99 * (thigh + shank)
    distance = d_min + (d_max - d_min) * torch.rand(500, generator=generator, dtype=torch.float64)
    direction = (torch.rand(500, generator=generator, dtype=torch.float64) - 0.5) * 2.0  # ±1 rad from down
    x, z = distance * torch.sin(direction), distance * torch.cos(direction)
    angles = ik.leg_ik(x, z, thigh, shank, convention)
    assert bool(angles.reachable.all())
    fk_x, fk_z = ik.leg_fk(angles.hip, angles.knee, thigh, shank, convention)
    torch.testing.assert_close(fk_x, x, atol=1e-9, rtol=0)
    torch.testing.assert_close(fk_z, z, atol=1e-9, rtol=0)


def test_out_of_reach_raises_clear_error():
    with pytest.raises(ik.LegReachError, match=r"out of reach.*d = 0\.7000 m.*0\.6400\] m"):
        ik.planar_ik(torch.tensor([0.0, 0.0]), torch.tensor([0.5, 0.7]), 0.32, 0.32)
    with pytest.raises(ik.LegReachError):
        ik.planar_ik(torch.tensor([float("nan")]), torch.tensor([0.5]), 0.32, 0.32)
    # Too close for unequal links (d < |T − L|).
    with pytest.raises(ik.LegReachError):
        ik.planar_ik(torch.tensor([0.0]), torch.tensor([0.01]), 0.100, 0.085)


def test_non_strict_clamps_onto_reach_and_flags_it():
    hip, knee, reachable = ik.planar_ik(
        torch.tensor([0.0, 0.0]).double(), torch.tensor([0.5, 0.7]).double(), 0.32, 0.32, strict=False
    )
    assert reachable.tolist() == [True, False]
    assert torch.isfinite(hip).all() and torch.isfinite(knee).all()
    # The unreachable target is met by the straight leg pointing at it.
    assert float(knee[1]) == pytest.approx(0.0, abs=1e-6) and float(hip[1]) == pytest.approx(0.0, abs=1e-6)


def test_straight_leg_at_full_reach_is_accepted():
    hip, knee, reachable = ik.planar_ik(torch.tensor([0.0]), torch.tensor([0.64]), 0.32, 0.32)
    assert bool(reachable.all()) and float(knee) == pytest.approx(0.0, abs=1e-3)


def test_parallelogram_hand_values():
    # L = 0.2, foot straight below at D = 0.2·√2: α = arccos(√2/2) = π/4, β = π/2.
    s1, s2, ok = ik.parallelogram_motor_angles(torch.tensor([0.0]), torch.tensor([0.2 * math.sqrt(2)]), 0.2)
    assert float(s1) == pytest.approx(math.pi / 4) and float(s2) == pytest.approx(3 * math.pi / 4)
    hip, knee = ik.parallelogram_to_serial(s1, s2)
    assert float(hip) == pytest.approx(-math.pi / 4) and float(knee) == pytest.approx(math.pi / 2)


@pytest.mark.parametrize("knee_forward", [True, False])
def test_parallelogram_form_agrees_with_serial_ik_through_j(knee_forward):
    link = 0.2
    generator = torch.Generator().manual_seed(1)
    x = (torch.rand(300, generator=generator, dtype=torch.float64) - 0.5) * 0.3
    z = 0.12 + torch.rand(300, generator=generator, dtype=torch.float64) * 0.15
    s1, s2, _ = ik.parallelogram_motor_angles(x, z, link, knee_forward=knee_forward)
    hip_p, knee_p = ik.parallelogram_to_serial(s1, s2)
    hip_s, knee_s, _ = ik.planar_ik(x, z, link, link, knee_forward=knee_forward)
    torch.testing.assert_close(hip_p, hip_s, atol=1e-9, rtol=0)
    torch.testing.assert_close(knee_p, knee_s, atol=1e-9, rtol=0)
    # And back: q^p = J q^s puts the knee motor on the absolute shank angle S2 − π/2.
    motor_hip, motor_knee = ik.serial_to_motor(hip_s, knee_s)
    torch.testing.assert_close(motor_hip, s1 - math.pi / 2, atol=1e-9, rtol=0)
    torch.testing.assert_close(motor_knee, s2 - math.pi / 2, atol=1e-9, rtol=0)


def test_limit_knee_motor_is_the_absolute_shank_angle():
    config, thigh, shank, axes = _robot("limit")
    convention = _convention("limit")
    angles = ik.leg_ik(torch.tensor(0.03).double(), torch.tensor(0.16).double(), thigh, shank, convention)
    motor_hip, motor_knee = ik.serial_to_motor(angles.hip, angles.knee)
    knee_pos, ankle_pos, _ = _chain_fk(axes, thigh, shank, float(angles.hip), float(angles.knee), 0.0)
    shank_vector = ankle_pos - knee_pos
    # A +y rotation by a turns (0, 0, −1) into (−sin a, 0, −cos a).
    assert float(motor_knee) == pytest.approx(math.atan2(-shank_vector[0], -shank_vector[2]), abs=1e-9)
    assert float(motor_hip) == pytest.approx(float(angles.hip))


def test_planar_fk_zero_pose_hangs_straight_down():
    x, z = ik.planar_fk(torch.tensor(0.0), torch.tensor(0.0), 0.1, 0.085)
    assert float(x) == pytest.approx(0.0) and float(z) == pytest.approx(0.185)
