"""The command-driven biped gait (a residual policy's prior): clock, stride, standing, IMU readings."""

from __future__ import annotations

import math

import pytest
import torch

from linkage_lab.gait import BipedGait, leg_fk
from linkage_lab.gait.commanded import CommandedBipedGait, GaitCommandCfg, gait_observation, torso_from_body
from linkage_lab.gait.policy import quat_xyzw_to_rpy
from linkage_lab.robots.marvin.gait import marvin_sprint_gait_cfg

pytestmark = pytest.mark.unit

DT = 0.02
UPRIGHT = torch.tensor([[0.0, 0.0, -1.0]])
ZERO3 = torch.zeros(1, 3)


def _prior(**command) -> CommandedBipedGait:
    gait = BipedGait(marvin_sprint_gait_cfg(heading_gain=0.0))
    cfg = GaitCommandCfg(**({"speed_per_stride_mps": 0.5, "stride_ramp_time_s": 3.0} | command))
    return CommandedBipedGait(gait, cfg, DT)


def _run(prior: CommandedBipedGait, command: tuple[float, float, float], steps: int, state=None):
    state = prior.initial_state(1) if state is None else state
    command_tensor = torch.tensor([command])
    history = []
    for _ in range(steps):
        targets, state = prior(state, command_tensor, UPRIGHT, ZERO3, ZERO3)
        history.append((targets[0], state[0]))
    return state, history


def _rotation(quat_xyzw: torch.Tensor) -> torch.Tensor:
    """Rotation matrices (body → world) of unit quaternions, the textbook formula."""
    x, y, z, w = quat_xyzw.unbind(-1)
    rows = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    return torch.stack([torch.stack(row, dim=-1) for row in rows], dim=-2)


def test_imu_readings_match_the_euler_angles_and_heading_frame_velocity():
    generator = torch.Generator().manual_seed(3)
    quat = torch.randn(200, 4, generator=generator, dtype=torch.float64)
    quat = quat / quat.norm(dim=-1, keepdim=True)
    rotation = _rotation(quat)
    velocity_w = torch.randn(200, 3, generator=generator, dtype=torch.float64)
    gravity_b = rotation.transpose(-1, -2) @ torch.tensor([0.0, 0.0, -1.0], dtype=torch.float64)
    velocity_b = (rotation.transpose(-1, -2) @ velocity_w.unsqueeze(-1))[..., 0]
    torso = torso_from_body(gravity_b, torch.zeros_like(velocity_b), velocity_b)
    rpy = quat_xyzw_to_rpy(quat)
    yaw = rpy[:, 2]
    # The sprint's ScriptedPolicy reads the same quantities from the world-frame state.
    forward = torch.cos(yaw) * velocity_w[:, 0] + torch.sin(yaw) * velocity_w[:, 1]
    lateral = -torch.sin(yaw) * velocity_w[:, 0] + torch.cos(yaw) * velocity_w[:, 1]
    torch.testing.assert_close(torso.roll_rad, rpy[:, 0])
    torch.testing.assert_close(torso.pitch_rad, rpy[:, 1])
    torch.testing.assert_close(torso.forward_velocity_mps, forward)
    torch.testing.assert_close(torso.lateral_velocity_mps, lateral)


def test_full_scales_reproduce_the_clocked_sprint_gait():
    prior = _prior()
    gait = prior.gait
    time_s = torch.tensor([5.0, 6.3, 7.77], dtype=torch.float64)  # past both start ramps (4.5 s)
    phase = torch.remainder(2 * math.pi * gait.cfg.frequency_hz * time_s, 2 * math.pi)
    state = torch.stack((phase, torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)), dim=-1)
    gravity = torch.tensor([[0.05, -0.02, -1.0]], dtype=torch.float64).repeat(3, 1)
    gravity = gravity / gravity.norm(dim=-1, keepdim=True)
    velocity = torch.tensor([[0.45, 0.03, 0.0]], dtype=torch.float64).repeat(3, 1)
    gyro = torch.tensor([[0.0, 0.2, 0.0]], dtype=torch.float64).repeat(3, 1)
    targets, _ = prior(state, torch.zeros(3, 3, dtype=torch.float64), gravity, gyro, velocity)
    torso = torso_from_body(gravity, gyro, velocity)
    expected = gait.joint_targets_tensor(time_s, torso, 0.0, 0.0)
    torch.testing.assert_close(targets, expected)


def test_zero_command_stands_still_in_the_crouch():
    prior = _prior()
    state, history = _run(prior, (0.0, 0.0, 0.0), 100)
    assert torch.equal(state, torch.zeros(1, 3))
    first = history[0][0]
    assert all(torch.equal(targets, first) for targets, _ in history)
    names = prior.joint_names
    cfg = prior.gait.cfg
    for side in ("left", "right"):
        hip, knee = first[names.index(f"{side}_hip_pitch")], first[names.index(f"{side}_knee")]
        x, z = leg_fk(hip, knee, cfg.thigh_length_m, cfg.shin_length_m, cfg.leg_convention)
        assert float(x) == pytest.approx(cfg.neutral_foot_x_m, abs=1e-5)
        assert float(z) == pytest.approx(cfg.hip_height_m, abs=1e-5)


@pytest.mark.parametrize("phase", [0.3, 1.6, 3.0, 4.4, 5.9])
def test_no_stepping_keeps_both_feet_down_at_any_phase(phase):
    prior = _prior()
    state = torch.tensor([[phase, 0.0, 0.0]])
    targets, _ = prior(state, torch.zeros(1, 3), UPRIGHT, ZERO3, ZERO3)
    names, cfg = prior.joint_names, prior.gait.cfg
    for side in ("left", "right"):
        hip = targets[0, names.index(f"{side}_hip_pitch")]
        knee = targets[0, names.index(f"{side}_knee")]
        _, z = leg_fk(hip, knee, cfg.thigh_length_m, cfg.shin_length_m, cfg.leg_convention)
        assert float(z) == pytest.approx(cfg.hip_height_m, abs=1e-5)
        assert float(targets[0, names.index(f"{side}_hip_roll")]) == pytest.approx(0.0, abs=1e-6)  # no sway


def test_forward_command_ramps_the_stride_and_starts_stepping():
    prior = _prior()
    frequency = prior.gait.cfg.frequency_hz
    _, history = _run(prior, (0.4, 0.0, 0.0), 200)
    for step, (_, state) in enumerate(history, start=1):
        # Stride target 0.4 / 0.5 = 0.8, reached at 1/3 per second; stepping 0 → 1 in 0.5 s.
        assert float(state[1]) == pytest.approx(min(step * DT / 3.0, 0.8), abs=1e-5)
        assert float(state[2]) == pytest.approx(min(step * DT / 0.5, 1.0), abs=1e-5)
        expected_phase = math.remainder(step * 2 * math.pi * frequency * DT, 2 * math.pi) % (2 * math.pi)
        assert float(state[0]) == pytest.approx(expected_phase, abs=1e-4)


def test_a_stop_runs_the_stride_down_before_the_feet_stop():
    prior = _prior(in_place_speed_mps=0.065)  # the drift correction must not keep it stepping
    walking, _ = _run(prior, (0.6, 0.0, 0.0), 200)  # 4 s: stride 1 (capped), stepping 1
    assert torch.allclose(walking[0, 1:], torch.ones(2))
    _, history = _run(prior, (0.0, 0.0, 0.0), 200, walking)
    strides = [float(state[1]) for _, state in history]
    steppings = [float(state[2]) for _, state in history]
    # The stride shrinks by dt/3 per step; the feet keep stepping until it is at most 0.05.
    last_stepping = max(k for k, s in enumerate(strides) if s > 0.05)
    assert all(s == pytest.approx(1.0) for s in steppings[: last_stepping + 1])
    assert steppings[last_stepping + 1] == pytest.approx(1.0 - DT / 0.5)
    stopped = history[-1][1]
    assert float(stopped[1]) == 0.0 and float(stopped[2]) == 0.0
    phases = {float(state[0]) for _, state in history[-20:]}
    assert len(phases) == 1, "the phase keeps running while standing"


def test_in_place_drift_and_stride_cap():
    prior = _prior(in_place_speed_mps=0.1, max_stride_scale=0.8)
    # (v − v_0) / v_s: 0.1 m/s of drift is held by stepping backwards; 0.7 m/s asks past the cap.
    for command, stride in (((0.0, 0.2, 0.0), -0.2), ((0.35, 0.0, 0.0), 0.5), ((0.7, 0.0, 0.0), 0.8)):
        state, _ = _run(prior, command, 300)
        assert float(state[0, 1]) == pytest.approx(stride, abs=1e-5)


def test_sideways_or_turning_command_steps_in_place():
    prior = _prior()
    for command in ((0.0, 0.2, 0.0), (0.0, 0.0, 0.3)):
        state, _ = _run(prior, command, 50)
        assert float(state[0, 1]) == 0.0 and float(state[0, 2]) == 1.0


def test_stride_scales_the_foot_travel():
    prior = _prior()
    cfg = prior.gait.cfg
    stride = 0.6
    # Walking exactly at the stride's ideal speed: the foot placement term is zero.
    velocity = torch.tensor([[2 * cfg.step_length_m * stride * cfg.frequency_hz, 0.0, 0.0]])
    names = prior.joint_names
    feet = []
    for phase in (0.0, math.pi):  # the right foot at the back (lift-off) and front (touch-down)
        state = torch.tensor([[phase, stride, 1.0]])
        targets, _ = prior(state, torch.zeros(1, 3), UPRIGHT, ZERO3, velocity)
        hip, knee = targets[0, names.index("right_hip_pitch")], targets[0, names.index("right_knee")]
        feet.append(float(leg_fk(hip, knee, cfg.thigh_length_m, cfg.shin_length_m, cfg.leg_convention)[0]))
    assert feet[1] - feet[0] == pytest.approx(stride * cfg.step_length_m, abs=1e-5)


def test_default_speed_per_stride_is_the_ideal_two_s_f():
    prior = CommandedBipedGait(BipedGait(marvin_sprint_gait_cfg(heading_gain=0.0)), GaitCommandCfg(), DT)
    cfg = prior.gait.cfg
    assert prior.speed_per_stride_mps == pytest.approx(2 * cfg.step_length_m * cfg.frequency_hz)
    assert prior.stride_ramp_time_s == cfg.step_ramp_time_s


def test_swing_time_is_the_share_of_the_cycle_with_the_foot_up():
    prior = _prior()
    cfg = prior.gait.cfg
    psi = torch.linspace(0.0, 2 * math.pi, 200_001, dtype=torch.float64)[:-1]
    airborne = (torch.sin(psi) > cfg.double_support_margin).double().mean()
    assert prior.swing_time_s() == pytest.approx(float(airborne) / cfg.frequency_hz, rel=1e-4)


def test_observation_is_sin_cos_stride_stepping():
    state = torch.tensor([[math.pi / 2, 0.3, 1.0]])
    torch.testing.assert_close(gait_observation(state), torch.tensor([[1.0, 0.0, 0.3, 1.0]]), atol=1e-7, rtol=0)


def test_bad_configurations_are_rejected():
    with pytest.raises(ValueError, match="heading_gain"):
        CommandedBipedGait(BipedGait(marvin_sprint_gait_cfg()), GaitCommandCfg(), DT)
    gait = BipedGait(marvin_sprint_gait_cfg(heading_gain=0.0))
    with pytest.raises(ValueError, match="no joint named"):
        CommandedBipedGait(gait, GaitCommandCfg(), DT, ["left_knee", "torso"])
    with pytest.raises(ValueError, match="control_period_s"):
        CommandedBipedGait(gait, GaitCommandCfg(), 0.0)
    with pytest.raises(ValueError, match="speed_per_stride_mps"):
        GaitCommandCfg(speed_per_stride_mps=-0.5)
    with pytest.raises(ValueError, match="in_place_speed_mps"):
        GaitCommandCfg(in_place_speed_mps=float("inf"))
    with pytest.raises(ValueError, match="linear_deadband_mps"):
        GaitCommandCfg(linear_deadband_mps=float("nan"))


def test_swing_legs_are_the_feet_the_gait_lifts():
    """Oracle: the foot height of the gait's own joint targets (leg FK) at the same state."""
    from linkage_lab.gait.biped import BIPED_SIDES

    prior = _prior()
    names, cfg = prior.joint_names, prior.gait.cfg
    phases = torch.linspace(0.0, 2 * math.pi, 73)[:-1]
    for stepping in (0.0, 0.5, 1.0):
        state = torch.stack((phases, torch.full_like(phases, 0.6), torch.full_like(phases, stepping)), dim=-1)
        swing = prior.swing_legs(state)
        assert swing.shape == (len(phases), 2) and swing.dtype == torch.bool
        targets, _ = prior(state, torch.zeros(len(phases), 3), UPRIGHT.expand(len(phases), 3), ZERO3, ZERO3)
        for index, side in enumerate(BIPED_SIDES):
            hip, knee = targets[:, names.index(f"{side}_hip_pitch")], targets[:, names.index(f"{side}_knee")]
            _, z = leg_fk(hip, knee, cfg.thigh_length_m, cfg.shin_length_m, cfg.leg_convention)
            lifted = (cfg.hip_height_m - z) > 1e-6
            assert torch.equal(swing[:, index], lifted), (side, stepping)
    # One foot at a time, and both down at some phases (the double-support margin).
    swing = prior.swing_legs(torch.stack((phases, torch.ones_like(phases), torch.ones_like(phases)), dim=-1))
    assert not (swing[:, 0] & swing[:, 1]).any() and (~swing.any(dim=-1)).any() and swing.any(dim=-1).any()


def test_yaw_command_turns_each_step_through_the_hip_yaw():
    # u = sat(k_ω ω_z) on both hips, weighted ½(1 − cos ψ)·a: by hand at φ = π/2 (ψ = π/2 on the
    # right leg, 3π/2 on the left: weight ½ each), stepping 1, u = 0.5 s · 0.2 rad/s = 0.1 rad.
    prior = _prior(turn_per_yaw_rate_s=0.5)
    state = torch.tensor([[math.pi / 2, 0.0, 1.0]])
    names = prior.joint_names
    for yaw_rate, turn in ((0.2, 0.1), (-0.2, -0.1), (0.0, 0.0), (1.0, prior.gait.cfg.turn_limit_rad)):
        targets, _ = prior(state, torch.tensor([[0.3, 0.0, yaw_rate]]), UPRIGHT, ZERO3, ZERO3)
        for side in ("left", "right"):
            assert float(targets[0, names.index(f"{side}_hip_yaw")]) == pytest.approx(0.5 * turn, abs=1e-6)


def test_the_turn_touches_only_the_hip_yaw_and_not_a_standing_robot():
    plain, turning = _prior(), _prior(turn_per_yaw_rate_s=0.5)
    command = torch.tensor([[0.3, 0.0, 0.2]])
    names = plain.joint_names
    others = [i for i, name in enumerate(names) if not name.endswith("hip_yaw")]
    for phase in (0.0, 1.0, 2.5, 4.0):
        state = torch.tensor([[phase, 0.5, 1.0]])
        a, next_a = plain(state, command, UPRIGHT, ZERO3, ZERO3)
        b, next_b = turning(state, command, UPRIGHT, ZERO3, ZERO3)
        torch.testing.assert_close(a[:, others], b[:, others])
        torch.testing.assert_close(next_a, next_b)
    # Standing (a = 0) keeps the feet planted: no turn whatever the command.
    standing, _ = turning(torch.tensor([[1.0, 0.0, 0.0]]), command, UPRIGHT, ZERO3, ZERO3)
    for side in ("left", "right"):
        assert float(standing[0, names.index(f"{side}_hip_yaw")]) == 0.0


def test_a_negative_turn_gain_is_rejected():
    with pytest.raises(ValueError, match="turn_per_yaw_rate_s"):
        GaitCommandCfg(turn_per_yaw_rate_s=-0.1)


def test_a_prior_at_another_frequency_keeps_its_steps_and_scales_its_cadence():
    prior = _prior(in_place_speed_mps=0.05)
    faster = prior.with_frequency(1.2)
    ratio = 1.2 / prior.gait.cfg.frequency_hz
    assert prior.gait.cfg.frequency_hz == pytest.approx(0.88)  # the original is unchanged
    assert faster.gait.cfg.frequency_hz == 1.2
    assert faster.gait.cfg.step_length_m == prior.gait.cfg.step_length_m
    assert faster.speed_per_stride_mps == pytest.approx(0.5 * ratio)
    assert faster.command_cfg.in_place_speed_mps == 0.05
    assert faster.swing_time_s() == pytest.approx(prior.swing_time_s() / ratio)
    # The clock: once stepping, each control step advances the phase by 2π f dt.
    state, history = _run(faster, (0.4, 0.0, 0.0), 60)
    phases = torch.stack([s[0] for _, s in history[-10:]])
    advance = torch.remainder(phases[1:] - phases[:-1], 2 * math.pi)
    torch.testing.assert_close(advance, torch.full_like(advance, 2 * math.pi * 1.2 * DT))
    # The stride a command asks for: (v - v0) / (v_s f'/f), reached after its ramp (3 s per unit).
    state, _ = _run(faster, (0.4, 0.0, 0.0), 200, state)
    assert float(state[0, 1]) == pytest.approx((0.4 - 0.05) / (0.5 * ratio))


@pytest.mark.parametrize("frequency", [0.0, -1.0, float("nan"), float("inf"), "fast", True])
def test_a_prior_refuses_a_frequency_that_is_not_a_positive_number(frequency):
    with pytest.raises(ValueError, match="frequency_hz must be a positive number"):
        _prior().with_frequency(frequency)
