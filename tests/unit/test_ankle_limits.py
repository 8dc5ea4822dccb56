"""Torque and speed limits of the 2-RSU ankle (docs/design/ankle_linkage.md §5) and rod forces (§6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.optimize import linprog

from linkage_lab.kinematics import ankle_limits as limits
from linkage_lab.kinematics.rsu_ankle import jacobian, transmission_quality
from linkage_lab.robots.ankles import available_presets, load_ankle_geometry

pytestmark = pytest.mark.unit

F64 = torch.float64


def _random_poses(geometry, count: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    low = torch.tensor([geometry.pitch_range_rad[0], geometry.roll_range_rad[0]], dtype=F64)
    high = torch.tensor([geometry.pitch_range_rad[1], geometry.roll_range_rad[1]], dtype=F64)
    return low + (high - low) * torch.rand(count, 2, generator=generator, dtype=F64)


def test_box_limits_match_the_spec():
    """118.8 / 80.4 N·m peak, 39.6 / 26.8 rated, 20.6 / 30.5 rad/s, within the rounding of the spec.

    The spec's figures come from J rounded to 0.01 ([[1.02, −0.67], [0.96, 0.67]]), i.e. ratios
    0.99 and 0.67 each known to ±0.005; the tolerances below are what that rounding allows.
    """
    box = limits.box_limits(load_ankle_geometry())  # RS03: 60 / 20 N·m, 20.4 rad/s
    ratio_tol = 0.005
    assert box.pitch_peak_nm == pytest.approx(118.8, abs=2 * 60 * ratio_tol)
    assert box.roll_peak_nm == pytest.approx(80.4, abs=2 * 60 * ratio_tol)
    assert box.pitch_rated_nm == pytest.approx(39.6, abs=2 * 20 * ratio_tol)
    assert box.roll_rated_nm == pytest.approx(26.8, abs=2 * 20 * ratio_tol)
    assert box.pitch_speed_rads == pytest.approx(20.6, abs=20.4 / 0.99**2 * ratio_tol + 0.05)
    assert box.roll_speed_rads == pytest.approx(30.5, abs=20.4 / 0.67**2 * ratio_tol + 0.05)
    # The RS06 preset: same geometry, 36 / 11 N·m and 30 rad/s.
    rs06 = limits.box_limits(load_ankle_geometry("rs06"))
    assert rs06.pitch_peak_nm == pytest.approx(box.pitch_peak_nm * 36 / 60)
    assert rs06.roll_rated_nm == pytest.approx(box.roll_rated_nm * 11 / 20)
    assert rs06.pitch_speed_rads == pytest.approx(box.pitch_speed_rads * 30 / 20.4)


def test_diamond_vertices_are_jt_of_the_motor_corners():
    geometry = load_ankle_geometry()
    poses = _random_poses(geometry, 5, seed=1)
    jac = jacobian(geometry, poses)
    vertices = limits.torque_diamond(jac, 60.0)
    assert vertices.shape == (5, 4, 2)
    for jac_i, vertices_i in zip(jac.numpy(), vertices.numpy(), strict=True):
        expected = [jac_i.T @ np.array(signs) * 60.0 for signs in ((1, 1), (1, -1), (-1, -1), (-1, 1))]
        assert vertices_i == pytest.approx(np.array(expected), abs=1e-12)


def test_clamp_keeps_feasible_torques_and_projects_the_rest_onto_the_boundary():
    geometry = load_ankle_geometry()
    limit = geometry.motor.peak_nm
    poses = _random_poses(geometry, 64, seed=2)
    jac = jacobian(geometry, poses)
    generator = torch.Generator().manual_seed(3)
    inside_motor = 0.99 * limit * (2 * torch.rand(64, 2, generator=generator, dtype=F64) - 1)
    inside = limits.joint_torque(jac, inside_motor)
    assert limits.in_diamond(jac, inside, limit).all()
    for mode in ("clip", "scale"):
        assert torch.allclose(limits.clamp_to_diamond(jac, inside, limit, mode), inside, atol=1e-10)

    outside = limits.joint_torque(jac, inside_motor * 3.0 + torch.sign(inside_motor) * limit)
    assert not limits.in_diamond(jac, outside, limit).any()
    for mode in ("clip", "scale"):
        applied = limits.clamp_to_diamond(jac, outside, limit, mode)
        motors = limits.motor_torque(jac, applied).abs()
        assert (motors <= limit * (1 + 1e-12)).all()
        assert torch.allclose(motors.amax(dim=-1), torch.full((64,), limit, dtype=F64))  # on the boundary
    scaled = limits.clamp_to_diamond(jac, outside, limit, "scale")
    cross = scaled[:, 0] * outside[:, 1] - scaled[:, 1] * outside[:, 0]
    assert cross.abs().max() < 1e-9 and ((scaled * outside).sum(-1) > 0).all()  # same direction


def _lp_pure_capacity(jac: np.ndarray, limit: float, axis: int) -> float:
    """max τ_axis subject to τ_other = 0 and |τ_m| ≤ T, by linear programming over motor torques."""
    other = 1 - axis
    result = linprog(
        c=-jac[:, axis], A_eq=jac[:, other][None, :], b_eq=[0.0], bounds=[(-limit, limit)] * 2, method="highs"
    )
    assert result.success
    return -result.fun


@pytest.mark.parametrize("preset", available_presets())
def test_capacities_against_linear_programming(preset):
    geometry = load_ankle_geometry(preset)
    limit = geometry.motor.peak_nm
    poses = _random_poses(geometry, 8, seed=4)
    jac = jacobian(geometry, poses)
    pure = limits.pure_axis_capacity(jac, limit).numpy()
    axis = limits.axis_capacity(jac, limit).numpy()
    for jac_i, pure_i, axis_i in zip(jac.numpy(), pure, axis, strict=True):
        for joint in range(2):
            assert pure_i[joint] == pytest.approx(_lp_pure_capacity(jac_i, limit, joint), rel=1e-9)
            unconstrained = linprog(c=-jac_i[:, joint], bounds=[(-limit, limit)] * 2, method="highs")
            assert axis_i[joint] == pytest.approx(-unconstrained.fun, rel=1e-9)
            assert pure_i[joint] <= axis_i[joint] * (1 + 1e-12)


def test_pure_capacity_against_dense_search():
    """Brute force: walk the boundary of the motor-torque square, keep points with ~zero roll torque."""
    geometry = load_ankle_geometry()
    jac = jacobian(geometry, torch.tensor([-0.6, 0.3], dtype=F64)).numpy()
    limit = 60.0
    edge = np.linspace(-limit, limit, 20001)
    boundary = np.concatenate(
        [np.stack([edge, np.full_like(edge, s * limit)], -1) for s in (-1, 1)]
        + [np.stack([np.full_like(edge, s * limit), edge], -1) for s in (-1, 1)]
    )
    torques = boundary @ jac
    # Each boundary point with (nearly) zero roll torque; the best pitch among them.
    near = np.abs(torques[:, 1]) < 0.05
    expected = torques[near, 0].max()
    got = float(limits.pure_axis_capacity(torch.as_tensor(jac), limit)[0])
    assert got == pytest.approx(expected, abs=0.1)


def test_transmission_and_rod_forces_by_hand_at_neutral():
    """At neutral the cranks point backwards (−x); transmission = |(u × w)·ŷ| of crank and rod."""
    geometry = load_ankle_geometry()
    radius = geometry.crank_radius_m
    crank = np.array([-1.0, 0.0, 0.0])
    sines = []
    for i in range(2):
        rod = np.array(geometry.motor_centre_m[i]) + radius * crank - np.array(geometry.rod_end_foot_m[i])
        sines.append(abs(np.cross(crank, rod / np.linalg.norm(rod))[1]))
    neutral = torch.zeros(2, dtype=F64)
    code_transmission = transmission_quality(geometry, neutral)
    assert code_transmission.numpy() == pytest.approx(np.array(sines), abs=1e-12)

    jac = jacobian(geometry, neutral)
    demand = np.array([60.0, 30.0])
    motor = np.linalg.solve(jac.numpy().T, demand)
    forces = limits.rod_forces(jac, code_transmission, torch.as_tensor(demand), radius)
    assert forces.numpy() == pytest.approx(np.abs(motor) / (radius * np.array(sines)), rel=1e-12)


def test_velocity_limits_through_the_jacobian():
    geometry = load_ankle_geometry()
    speed = geometry.motor.speed_rads
    jac = jacobian(geometry, _random_poses(geometry, 32, seed=5))
    joint_vel = torch.full((32, 2), 30.0, dtype=F64)
    assert not limits.velocity_within_limits(jac, joint_vel, speed).any()
    for mode in ("scale", "clip"):
        clamped = limits.clamp_joint_velocity(jac, joint_vel, speed, mode)
        motor_vel = limits.motor_velocity(jac, clamped).abs()
        assert (motor_vel <= speed * (1 + 1e-12)).all()
        assert torch.allclose(motor_vel.amax(-1), torch.full((32,), speed, dtype=F64))
    slow = torch.full((32, 2), 1.0, dtype=F64)
    assert torch.allclose(limits.clamp_joint_velocity(jac, slow, speed), slow)
    curve = limits.torque_speed_limit(torch.tensor([0.0, speed / 2, speed, 2 * speed]), 60.0, speed)
    assert curve.tolist() == pytest.approx([60.0, 30.0, 0.0, 0.0])
    assert math.isclose(float(limits.torque_speed_limit(torch.tensor(10.0), 60.0, speed, stall_torque_nm=200.0)), 60.0)
