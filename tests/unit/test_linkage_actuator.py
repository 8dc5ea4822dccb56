"""The Isaac Lab linkage actuator on Marvin's ankles, with hand-computed expectations."""

from __future__ import annotations

import pytest
import torch
from isaaclab.utils.types import ArticulationActions

from linkage_lab.robots.ankles import rsu_ankle_transmission
from linkage_lab.robots.marvin.articulation import ankle_actuator_cfg
from linkage_lab.robots.registry import get_robot

pytestmark = pytest.mark.unit

JOINTS = ["left_ankle_pitch", "left_ankle_roll", "right_ankle_pitch", "right_ankle_roll"]
KP, KD = 300.0, 6.0


def make_actuator(mode: str, num_envs: int = 1, **options):
    cfg = ankle_actuator_cfg(get_robot("marvin").config(), mode, 0.005, **options)
    cfg.stiffness, cfg.damping = KP, KD
    return cfg.class_type(cfg, JOINTS, slice(None), num_envs, "cpu", stiffness=KP, damping=KD)


def run(actuator, target: torch.Tensor, pos: torch.Tensor, vel: torch.Tensor | None = None) -> torch.Tensor:
    vel = torch.zeros_like(pos) if vel is None else vel
    action = ArticulationActions(joint_positions=target, joint_velocities=torch.zeros_like(pos), joint_efforts=None)
    return actuator.compute(action, pos, vel).joint_efforts


def finite_difference_jacobian(transmission, pose: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """J from central differences of the IK (independent of the analytic Jacobian)."""
    columns = []
    for k in range(2):
        step = torch.zeros(2, dtype=torch.float64)
        step[k] = eps
        columns.append(
            (transmission.motor_position(pose + step) - transmission.motor_position(pose - step)) / (2 * eps)
        )
    return torch.stack(columns, dim=-1)


def test_box_limits_come_from_geometry_and_motor():
    from linkage_lab.robots.marvin.articulation import ankle_box_limits

    box = ankle_box_limits()
    # docs/design/robots.md §2.4 quotes ratios rounded to 0.99 / 0.67: the geometry gives them to ~0.3 %.
    assert box.pitch_peak_nm == pytest.approx(118.8, rel=5e-3)
    assert box.roll_peak_nm == pytest.approx(80.4, rel=5e-3)
    assert box.pitch_rated_nm == pytest.approx(39.6, rel=5e-3)
    assert box.roll_rated_nm == pytest.approx(26.8, rel=5e-3)
    assert box.pitch_speed_rads == pytest.approx(20.6, rel=5e-3)
    assert box.roll_speed_rads == pytest.approx(30.5, rel=5e-3)
    # Consistency: torque ratio pitch/roll equals the inverse speed ratio (same neutral ratios).
    assert box.pitch_peak_nm / box.roll_peak_nm == pytest.approx(box.roll_speed_rads / box.pitch_speed_rads)


def test_box_mode_clips_each_axis():
    actuator = make_actuator("box")
    box_p, box_r = actuator.cfg.motor_peak_torque_nm
    pos = torch.zeros(1, 4)
    target = torch.tensor([[1.0, -1.0, 0.05, 0.02]])  # huge errors on the left, small on the right
    effort = run(actuator, target, pos)
    assert effort[0, 0].item() == pytest.approx(box_p, rel=1e-5)
    assert effort[0, 1].item() == pytest.approx(-box_r, rel=1e-5)
    assert effort[0, 2:].tolist() == pytest.approx([KP * 0.05, KP * 0.02], rel=1e-5)


def test_diamond_passes_torques_inside_unchanged():
    actuator = make_actuator("diamond")
    pose = torch.tensor([[0.2, -0.1, -0.3, 0.15]])
    target = pose + torch.tensor([[0.03, -0.02, 0.01, 0.04]])
    effort = run(actuator, target, pose)
    assert effort[0].tolist() == pytest.approx((KP * (target - pose))[0].tolist(), rel=1e-5)


@pytest.mark.parametrize("side, columns", [("left", slice(0, 2)), ("right", slice(2, 4))])
def test_diamond_outside_lands_each_motor_at_its_limit(side, columns):
    actuator = make_actuator("diamond")
    pose = torch.tensor([[0.3, 0.2, 0.3, -0.2]])
    target = pose + torch.tensor([[0.5, 0.3, 0.5, -0.3]])  # 150 / 90 N·m asked: far outside
    effort = run(actuator, target, pose)[0, columns].double()
    transmission = rsu_ankle_transmission(side)
    jac = finite_difference_jacobian(transmission, pose[0, columns].double())
    motor = torch.linalg.solve(jac.T, effort)
    peak = 60.0
    assert motor.abs().max().item() == pytest.approx(peak, rel=1e-3)
    assert (motor.abs() <= peak * (1 + 1e-3)).all()
    # Per-motor clipping: each motor's torque is its unclipped demand clipped to ±T.
    demand = torch.linalg.solve(jac.T, (KP * (target - pose))[0, columns].double())
    assert motor.tolist() == pytest.approx(demand.clamp(-peak, peak).tolist(), rel=1e-3, abs=1e-2)


def test_scale_mode_preserves_direction():
    actuator = make_actuator("diamond", saturation_mode="scale")
    pose = torch.tensor([[0.3, 0.2, 0.0, 0.0]])
    target = pose + torch.tensor([[0.5, 0.3, 0.0, 0.0]])
    effort = run(actuator, target, pose)[0, :2]
    demand = KP * torch.tensor([0.5, 0.3])
    cosine = torch.dot(effort, demand) / (effort.norm() * demand.norm())
    assert cosine.item() == pytest.approx(1.0, abs=1e-6)
    assert effort.norm() < demand.norm()


def test_joint_and_motor_space_pd_agree_for_small_errors_at_neutral():
    joint = make_actuator("diamond", control_space="joint")
    motor = make_actuator("diamond", control_space="motor")
    pos = torch.zeros(1, 4)
    target = torch.tensor([[1e-3, -2e-3, 5e-4, 1e-3]])
    assert run(motor, target, pos)[0].tolist() == pytest.approx(run(joint, target, pos)[0].tolist(), rel=2e-3, abs=1e-5)


def test_motor_gains_are_never_the_joint_gains_copied():
    """K_m = J⁻ᵀ K_j J⁻¹ ≠ K_j: copying kp to the motors would give a different joint torque."""
    jac = finite_difference_jacobian(rsu_ankle_transmission("left"), torch.tensor([0.0, 0.0], dtype=torch.float64))
    joint_gain = torch.diag(torch.tensor([KP, KP], dtype=torch.float64))
    jac_inv = torch.linalg.inv(jac)
    motor_gain = jac_inv.T @ joint_gain @ jac_inv
    assert not torch.allclose(motor_gain, joint_gain, rtol=0.05)
    # The actuator's motor-space PD produces K_j δq, which copied gains (τ_m = K_j δθ) would not.
    actuator = make_actuator("diamond", control_space="motor")
    delta = torch.tensor([1e-3, 1e-3], dtype=torch.float64)
    target = torch.tensor([[1e-3, 1e-3, 0.0, 0.0]])
    effort = run(actuator, target, torch.zeros(1, 4))[0, :2].double()
    copied = jac.T @ (joint_gain @ (jac @ delta))
    assert effort.tolist() == pytest.approx((joint_gain @ delta).tolist(), rel=3e-3)
    assert not torch.allclose(effort, copied, rtol=0.05)


def test_armature_must_follow_the_model():
    cfg = ankle_actuator_cfg(get_robot("marvin").config(), "diamond", 0.005, reflected_armature=True)
    cfg.armature = 0.01
    with pytest.raises(ValueError, match="needs"):
        cfg.class_type(cfg, JOINTS, slice(None), 1, "cpu", stiffness=KP, damping=KD)


def actuator_step(actuator, pos, vel, target=None, effort=None):
    target = pos if target is None else target
    action = ArticulationActions(joint_positions=target, joint_velocities=torch.zeros_like(pos), joint_efforts=effort)
    return actuator.compute(action, pos, vel).joint_efforts


def make_actuator_with_history(pos, vel):
    actuator = make_actuator("diamond", pos.shape[0], reflected_armature=True)
    actuator_step(actuator, pos, vel)
    return actuator


@pytest.mark.parametrize("env_ids", [None, slice(None), Ellipsis, torch.arange(3), [0, 1, 2], (0, 1, 2)])
def test_reset_accepts_every_form_of_all_envs(env_ids):
    """The explicit S3N torque uses q̈ from the last step: after a full reset it is a fresh actuator's."""
    pos = torch.full((3, 4), 0.1)
    previous, current = torch.zeros(3, 4), torch.full((3, 4), 0.5)
    fresh = make_actuator("diamond", 3, reflected_armature=True)
    expected = actuator_step(fresh, pos, current)
    # With a history the torque differs (so the comparison below can fail).
    assert not torch.allclose(actuator_step(make_actuator_with_history(pos, previous), pos, current), expected)
    used = make_actuator_with_history(pos, previous)
    used.reset(env_ids)
    torch.testing.assert_close(actuator_step(used, pos, current), expected)


def test_reset_of_some_envs_keeps_the_others():
    pos = torch.full((3, 4), 0.1)
    previous, current = torch.zeros(3, 4), torch.full((3, 4), 0.5)
    fresh = actuator_step(make_actuator("diamond", 3, reflected_armature=True), pos, current)
    used = make_actuator_with_history(pos, previous)
    kept = actuator_step(make_actuator_with_history(pos, previous), pos, current)
    used.reset(torch.tensor([1]))
    effort = actuator_step(used, pos, current)
    torch.testing.assert_close(effort[1], fresh[1])
    torch.testing.assert_close(effort[[0, 2]], kept[[0, 2]])


def test_reset_rejects_a_partial_slice():
    with pytest.raises(ValueError, match="slice"):
        make_actuator("diamond", 3).reset(slice(0, 2))


@pytest.mark.parametrize("mode", ["diamond", "box"])
def test_per_env_gains_are_read_every_step(mode):
    """What Isaac Lab's randomize_actuator_gains writes (actuator.stiffness/damping per env) is used."""
    actuator = make_actuator(mode, 2)
    pose = torch.tensor([[0.1, -0.05, 0.1, -0.05]]).repeat(2, 1)
    target = pose + torch.tensor([[0.02, -0.01, 0.01, 0.02]])
    vel = torch.full((2, 4), 0.1)
    actuator.stiffness[1] *= 2.0
    actuator.damping[1] *= 3.0
    effort = actuator_step(actuator, pose, vel, target)
    error = (target - pose)[0]
    torch.testing.assert_close(effort[0], KP * error - KD * vel[0], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(effort[1], 2 * KP * error - 3 * KD * vel[1], rtol=1e-4, atol=1e-4)


def test_feed_forward_effort_respects_the_diamond():
    """A feed-forward joint torque beyond the motors' peak is clipped like the PD's own torque."""
    actuator = make_actuator("diamond")
    pose = torch.tensor([[0.1, 0.05, 0.0, 0.0]])
    feed_forward = torch.tensor([[400.0, 0.0, 5.0, -3.0]])  # 400 N·m of pitch: beyond 2 × 60 N·m
    effort = actuator_step(actuator, pose, torch.zeros_like(pose), effort=feed_forward)[0]
    jac = finite_difference_jacobian(rsu_ankle_transmission("left"), pose[0, :2].double())
    motor = torch.linalg.solve(jac.T, effort[:2].double())
    assert motor.abs().max().item() == pytest.approx(60.0, rel=1e-3)
    # Inside the diamond the feed-forward passes unchanged (the PD adds nothing at the target).
    assert effort[2:].tolist() == pytest.approx([5.0, -3.0], rel=1e-5)


@pytest.mark.parametrize("space", ["joint", "motor"])
def test_an_unreachable_pose_of_one_env_does_not_stop_the_batch(space):
    """A NaN or wild ankle pose in one env is moved into the joint range there and counted; the
    other envs get exactly what they would get alone."""
    actuator = make_actuator("diamond", 3, control_space=space)
    pose = torch.tensor([[0.1, -0.05, 0.2, 0.1]]).repeat(3, 1)
    target = pose + 0.02
    pose[1, 0] = float("nan")
    pose[2, 2:] = torch.tensor([2.5, -2.0])  # far beyond what the rods reach
    if space == "motor":
        target[0, :2] = torch.tensor([2.5, -2.0])  # an unreachable target is guarded in motor space
    effort = actuator_step(actuator, pose, torch.zeros_like(pose), target)
    alone = make_actuator("diamond", 1, control_space=space)
    clean = torch.tensor([[0.1, -0.05, 0.2, 0.1]])
    expected = actuator_step(alone, clean, torch.zeros_like(clean), clean + 0.02)[0]
    assert torch.isfinite(effort[:, 2:]).all() and torch.isfinite(effort[[0, 2], :2]).all()
    torch.testing.assert_close(effort[0, 2:], expected[2:])
    torch.testing.assert_close(effort[1, 2:], expected[2:])
    if space == "joint":
        torch.testing.assert_close(effort[0], expected)
    assert actuator.unreachable_poses.tolist() == [1 if space == "motor" else 0, 1, 1]


def test_poses_reachable_beyond_the_joint_range_are_not_moved():
    actuator = make_actuator("diamond", 1)
    pose = torch.tensor([[0.75, 0.0, 0.0, 0.37]])  # a few degrees past the range, still reachable
    effort = actuator_step(actuator, pose, torch.zeros_like(pose), pose + 0.01)
    torch.testing.assert_close(effort, KP * torch.full_like(pose, 0.01), rtol=1e-4, atol=1e-4)
    assert actuator.unreachable_poses.tolist() == [0]


@pytest.mark.parametrize("preset", ["marvin", "calf"])
def test_the_ankle_joint_range_is_reachable_everywhere(preset):
    """The guard moves poses into the joint range: every pose of it must have a solution."""
    from linkage_lab.actuators.transmissions import joint_domain

    for side in ("left", "right"):
        domain = joint_domain(f"marvin_ankle_{side}:{preset}")
        axes = [torch.linspace(lo, hi, 81, dtype=torch.float64) for lo, hi in zip(domain.lower, domain.upper)]
        grid = torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=-1)
        assert domain.reachable(grid).all()
        assert not domain.reachable(torch.tensor([float("nan"), 0.0], dtype=torch.float64))
