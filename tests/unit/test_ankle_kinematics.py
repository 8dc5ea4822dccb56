"""The 2-RSU ankle's IK, Jacobian and FK against an independent reading of docs/design/ankle_linkage.md §1–§4."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from scipy.optimize import brentq

from linkage_lab.kinematics.rsu_ankle import (
    UnreachablePoseError,
    evaluate,
    ik_and_jacobian,
    inverse_kinematics,
    jacobian,
)
from linkage_lab.kinematics.rsu_fk import ForwardKinematicsError, forward_kinematics
from linkage_lab.robots.ankles import available_presets, load_ankle_geometry

pytestmark = pytest.mark.unit

PRESETS = available_presets()
F64 = torch.float64


# --- An independent reference: the spec's equations, literally, in numpy ---------------------


def _rot_x(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rot_y(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def reference_crank_angle(geometry, motor: int, pitch: float, roll: float) -> float:
    """θ − π of one motor: root of ‖M + r(cos θ, 0, sin θ) − A‖ = L nearest π (bracketed search)."""
    radius = geometry.crank_radius_m
    centre = np.array(geometry.motor_centre_m[motor])
    foot0 = np.array(geometry.rod_end_foot_m[motor])
    length = np.linalg.norm(centre + radius * np.array([-1.0, 0.0, 0.0]) - foot0)
    foot = _rot_y(-pitch) @ _rot_x(roll) @ foot0

    def gap(theta: float) -> float:
        return np.linalg.norm(centre + radius * np.array([math.cos(theta), 0.0, math.sin(theta)]) - foot) - length

    # The assembled branch: the root reached walking out from π (the rod-length gap changes
    # sign once within ±80° of the neutral angle on the assembled branch over this range).
    grid = np.linspace(math.pi - 1.4, math.pi + 1.4, 281)
    values = np.array([gap(t) for t in grid])
    crossings = np.nonzero(np.sign(values[:-1]) != np.sign(values[1:]))[0]
    best = min(crossings, key=lambda i: abs(grid[i] - math.pi))
    return brentq(gap, grid[best], grid[best + 1], xtol=1e-14) - math.pi


def _autograd_jacobian(fn, x: torch.Tensor) -> torch.Tensor:
    """∂fn/∂x for a 2-vector x, one backward pass per output."""
    x = x.detach().clone().requires_grad_(True)
    y = fn(x)
    return torch.stack([torch.autograd.grad(y[i], x, retain_graph=True)[0] for i in range(2)])


def _random_poses(geometry, count: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    low = torch.tensor([geometry.pitch_range_rad[0], geometry.roll_range_rad[0]], dtype=F64)
    high = torch.tensor([geometry.pitch_range_rad[1], geometry.roll_range_rad[1]], dtype=F64)
    return low + (high - low) * torch.rand(count, 2, generator=generator, dtype=F64)


# --- IK --------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["marvin", "calf"])
def test_ik_matches_reference_root(preset):
    geometry = load_ankle_geometry(preset)
    poses = _random_poses(geometry, 6, seed=1)
    crank = inverse_kinematics(geometry, poses)
    for pose, angles in zip(poses.tolist(), crank.tolist(), strict=True):
        expected = [reference_crank_angle(geometry, i, *pose) for i in range(2)]
        assert angles == pytest.approx(expected, abs=1e-10)


def test_neutral_pose_is_zero_and_batched_shapes_work():
    geometry = load_ankle_geometry()
    assert inverse_kinematics(geometry, torch.zeros(2, dtype=F64)).abs().max() < 1e-12
    poses = _random_poses(geometry, 12, seed=2).reshape(3, 4, 2)
    crank, jac = ik_and_jacobian(geometry, poses)
    assert crank.shape == (3, 4, 2) and jac.shape == (3, 4, 2, 2)
    flat_crank, flat_jac = ik_and_jacobian(geometry, poses.reshape(-1, 2))
    assert torch.equal(crank.reshape(-1, 2), flat_crank) and torch.equal(jac.reshape(-1, 2, 2), flat_jac)
    crank32 = inverse_kinematics(geometry, poses.float())
    assert crank32.dtype == torch.float32 and torch.allclose(crank32.double(), crank, atol=1e-5)


def test_neutral_jacobian_by_hand():
    """J at neutral from central differences of the reference root solver (not the code's J)."""
    geometry = load_ankle_geometry()
    h = 1e-6
    expected = np.zeros((2, 2))
    for motor in range(2):
        for joint in range(2):
            plus, minus = [0.0, 0.0], [0.0, 0.0]
            plus[joint], minus[joint] = h, -h
            diff = reference_crank_angle(geometry, motor, *plus) - reference_crank_angle(geometry, motor, *minus)
            expected[motor, joint] = diff / (2 * h)
    # The spec's sanity value, to its two decimals.
    assert expected == pytest.approx(np.array([[1.02, -0.67], [0.96, 0.67]]), abs=0.006)
    assert jacobian(geometry, torch.zeros(2, dtype=F64)).numpy() == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("side", ["left", "right"])
def test_jacobian_matches_finite_differences(preset, side):
    geometry = load_ankle_geometry(preset, side=side)
    poses = _random_poses(geometry, 16, seed=3)
    h = 1e-6
    columns = []
    for joint in range(2):
        step = torch.zeros(2, dtype=F64)
        step[joint] = h
        columns.append(
            (inverse_kinematics(geometry, poses + step) - inverse_kinematics(geometry, poses - step)) / (2 * h)
        )
    finite_diff = torch.stack(columns, dim=-1)
    assert torch.allclose(jacobian(geometry, poses), finite_diff, atol=1e-7, rtol=0)


def test_ik_is_differentiable_and_autograd_agrees_with_jacobian():
    geometry = load_ankle_geometry()
    poses = _random_poses(geometry, 2, seed=4).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda q: inverse_kinematics(geometry, q), (poses,))
    auto = _autograd_jacobian(lambda q: inverse_kinematics(geometry, q), poses[0])
    assert torch.allclose(auto, jacobian(geometry, poses.detach()[0]), atol=1e-12)


@pytest.mark.parametrize("preset", PRESETS)
def test_branch_is_continuous_over_the_range(preset):
    """Dense lines through the range: neighbours differ by about |J| · step (≤ ~2.2 here), never a jump."""
    geometry = load_ankle_geometry(preset)
    step = math.radians(0.1)
    pitch = torch.arange(geometry.pitch_range_rad[0], geometry.pitch_range_rad[1] + step / 2, step, dtype=F64)
    roll = torch.arange(geometry.roll_range_rad[0], geometry.roll_range_rad[1] + step / 2, step, dtype=F64)
    for fixed_roll in (geometry.roll_range_rad[0], 0.0, geometry.roll_range_rad[1]):
        line = torch.stack([pitch, torch.full_like(pitch, fixed_roll)], dim=-1)
        jumps = inverse_kinematics(geometry, line).diff(dim=0).abs()
        assert jumps.max() < 3.0 * step
    for fixed_pitch in (geometry.pitch_range_rad[0], 0.0, geometry.pitch_range_rad[1]):
        line = torch.stack([torch.full_like(roll, fixed_pitch), roll], dim=-1)
        assert inverse_kinematics(geometry, line).diff(dim=0).abs().max() < 3.0 * step
    # Away from the singularity everywhere (the branches never meet inside the range).
    grid = torch.stack(torch.meshgrid(pitch[::10], roll[::10], indexing="ij"), dim=-1)
    assert evaluate(geometry, grid, with_jacobian=False).transmission.min() > 0.2


def test_right_ankle_is_the_mirror_image():
    left, right = load_ankle_geometry(side="left"), load_ankle_geometry(side="right")
    assert right.rod_end_foot_m[0][1] == -left.rod_end_foot_m[0][1]
    poses = _random_poses(left, 10, seed=5)
    mirrored = poses * torch.tensor([1.0, -1.0], dtype=F64)
    crank_r, jac_r = ik_and_jacobian(right, poses)
    crank_l, jac_l = ik_and_jacobian(left, mirrored)
    assert torch.allclose(crank_r, crank_l, atol=1e-13)
    assert torch.allclose(jac_r, jac_l * torch.tensor([1.0, -1.0], dtype=F64), atol=1e-12)
    neutral = jacobian(right, torch.zeros(2, dtype=F64))
    assert neutral[:, 1].tolist() == pytest.approx((-jacobian(left, torch.zeros(2, dtype=F64))[:, 1]).tolist())


def test_unreachable_pose_raises_naming_motor_and_pose():
    geometry = load_ankle_geometry()
    poses = torch.tensor([[0.1, 0.0], [-1.4, 0.0]], dtype=F64)  # toes 80° down: a rod is too short
    with pytest.raises(UnreachablePoseError, match=r"rod [ab] cannot reach pose pitch=-80\.21°, roll=\+0\.00°"):
        inverse_kinematics(geometry, poses)
    state = evaluate(geometry, poses)
    assert state.reachable[0].all() and not state.reachable[1].all()
    assert torch.isnan(state.motor_pos[1][~state.reachable[1]]).all()


def test_unreachable_geometry_raises():
    """A crank far too short for its rod: most of the range cannot be reached."""
    geometry = dataclasses.replace(load_ankle_geometry(), crank_radius_m=0.004)
    corner = torch.tensor([geometry.pitch_range_rad[1], geometry.roll_range_rad[1]], dtype=F64)
    with pytest.raises(UnreachablePoseError, match="ankle marvin/left: rod"):
        jacobian(geometry, corner)


# --- FK --------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS)
def test_fk_inverts_ik(preset):
    geometry = load_ankle_geometry(preset)
    poses = _random_poses(geometry, 256, seed=6)
    generator = torch.Generator().manual_seed(7)
    previous = poses + 0.08 * (2 * torch.rand(poses.shape, generator=generator, dtype=F64) - 1)
    result = forward_kinematics(geometry, inverse_kinematics(geometry, poses), previous)
    assert result.converged.all() and result.in_range.all()
    assert (result.joint_pos - poses).abs().max() < 1e-9
    assert result.iterations <= 6


@pytest.mark.parametrize("mixed_precision", [True, False])
def test_ik_of_fk_returns_the_crank_angles(mixed_precision):
    geometry = load_ankle_geometry()
    crank = inverse_kinematics(geometry, _random_poses(geometry, 256, seed=8))
    result = forward_kinematics(geometry, crank, mixed_precision=mixed_precision)  # from neutral
    assert result.converged.all()
    assert (inverse_kinematics(geometry, result.joint_pos) - crank).abs().max() < 1e-9


def test_fk_reports_leaving_the_range_and_non_convergence():
    geometry = load_ankle_geometry()
    outside = torch.tensor([[0.75, 0.0], [0.1, 0.1]], dtype=F64)
    result = forward_kinematics(geometry, inverse_kinematics(geometry, outside))
    assert result.converged.all() and result.in_range.tolist() == [False, True]
    result.raise_if_failed(geometry)
    with pytest.raises(ForwardKinematicsError, match="left the motion range"):
        result.raise_if_failed(geometry, require_in_range=True)
    # Too few iterations from neutral to a corner, and a broken encoder reading (NaN).
    corner = torch.tensor([geometry.pitch_range_rad[1], geometry.roll_range_rad[1]], dtype=F64)
    crank = torch.stack([inverse_kinematics(geometry, corner), torch.tensor([math.nan, 0.0], dtype=F64)])
    failed = forward_kinematics(geometry, crank, max_iter=1, mixed_precision=False)
    assert failed.converged.tolist() == [False, False]
    with pytest.raises(ForwardKinematicsError, match="did not converge for 2 of 2 ankles after 1 Newton steps"):
        failed.raise_if_failed(geometry)
    assert forward_kinematics(geometry, crank[:1]).converged.all()


def test_fk_gradient_is_the_inverse_jacobian():
    geometry = load_ankle_geometry()
    pose = torch.tensor([0.3, -0.1], dtype=F64)
    crank = inverse_kinematics(geometry, pose)
    auto = _autograd_jacobian(lambda c: forward_kinematics(geometry, c).joint_pos, crank)
    assert torch.allclose(auto, torch.linalg.inv(jacobian(geometry, pose)), atol=1e-9)
