"""Marvin's scripted walk: scaling, foot placement, sway, ankle feedback, heading and arms."""

from __future__ import annotations

import math

import pytest
import torch

from linkage_lab.gait import BipedGait, LegReachError, TorsoState, heading_turn, leg_fk
from linkage_lab.robots.marvin.gait import marvin_gait_cfg

pytestmark = pytest.mark.unit

PI = math.pi


def _torso(n: int = 1, **values: float) -> TorsoState:
    fields = ("roll_rad", "pitch_rad", "yaw_rad", "pitch_rate_rads", "x_m", "y_m")
    optional = ("forward_velocity_mps", "lateral_velocity_mps")
    state = {f: torch.full((n,), values.get(f, 0.0), dtype=torch.float64) for f in fields}
    state |= {f: torch.full((n,), values[f], dtype=torch.float64) for f in optional if f in values}
    return TorsoState(**state)


def _plain_cfg(**overrides):
    """No ramps, no sway lead, no clamping: every term shows in the targets as its formula says."""
    base = dict(
        step_ramp_time_s=0.0,
        sway_ramp_time_s=0.0,
        sway_amplitude_rad=0.1,
        sway_phase_lead_rad=0.0,
        joint_limits_rad=None,
    )
    return marvin_gait_cfg(**(base | overrides))


def _time_at(phase: float, cfg) -> torch.Tensor:
    return torch.tensor(phase / (2 * PI * cfg.frequency_hz), dtype=torch.float64)


def test_marvin_cfg_is_the_nao_lesson_scaled():
    cfg = marvin_gait_cfg()
    scale = 0.64 / 0.2029  # Marvin hip-to-ankle / NAO, 3.1543
    assert cfg.hip_height_m == pytest.approx(0.17 * scale)  # 0.536 m
    assert cfg.step_length_m == pytest.approx(0.10 * scale)  # 0.315 m
    assert cfg.step_height_m == pytest.approx(0.038 * scale)  # 0.120 m
    assert cfg.frequency_hz == pytest.approx(2.2 / math.sqrt(scale))  # 1.239 Hz
    assert cfg.pitch_rate_gain_s == pytest.approx(0.08 * math.sqrt(scale))
    assert (cfg.double_support_margin, cfg.pitch_gain, cfg.roll_gain) == (0.27, 0.05, 0.38)
    assert cfg.joint_limits_rad["right_hip_roll"] == (-0.6, 0.4)
    assert cfg.joint_limits_rad["left_hip_roll"] == (-0.4, 0.6)


def test_sixteen_named_targets():
    gait = BipedGait(marvin_gait_cfg())
    targets = gait.joint_targets(0.0, _torso(3))
    expected = {
        f"{side}_{joint}"
        for side in ("left", "right")
        for joint in (
            "hip_yaw",
            "hip_roll",
            "hip_pitch",
            "knee",
            "ankle_pitch",
            "ankle_roll",
            "shoulder_pitch",
            "elbow",
        )
    }
    assert set(targets) == expected and len(targets) == 16
    assert all(value.shape == (3,) for value in targets.values())
    assert gait.joint_targets_tensor(0.0, _torso(3)).shape == (3, 16)


def test_crouch_before_start():
    cfg = marvin_gait_cfg()
    targets = BipedGait(cfg).joint_targets(0.5, _torso(), start_time_s=2.0)
    # Equal links, foot under the hip: hip = −arccos(z / 2T), knee = 2 arccos(z / 2T), ankle = hip + knee.
    half_knee = math.acos(cfg.hip_height_m / (2 * 0.32))
    for side in ("left", "right"):
        assert float(targets[f"{side}_hip_pitch"]) == pytest.approx(-half_knee, abs=1e-6)
        assert float(targets[f"{side}_knee"]) == pytest.approx(2 * half_knee, abs=1e-6)
        assert float(targets[f"{side}_ankle_pitch"]) == pytest.approx(half_knee, abs=1e-6)
        assert float(targets[f"{side}_hip_roll"]) == 0.0 and float(targets[f"{side}_hip_yaw"]) == 0.0


@pytest.mark.parametrize(
    ("phase", "right_x", "left_x", "right_lift", "left_lift", "sway"),
    [
        (0.0, -0.5, 0.5, 0.0, 0.0, 0.0),
        (PI / 2, 0.0, 0.0, 1.0, 0.0, -0.1),
        (PI, 0.5, -0.5, 0.0, 0.0, 0.0),
        (1.5 * PI, 0.0, 0.0, 0.0, 1.0, 0.1),
    ],
)
def test_feet_and_sway_at_hand_computed_phases(phase, right_x, left_x, right_lift, left_lift, sway):
    # x in units of S (x = −(S/2) cos ψ), lift in units of H; ψ_R = φ, ψ_L = φ + π.
    cfg = _plain_cfg()
    targets = BipedGait(cfg).joint_targets(_time_at(phase, cfg), _torso())
    for side, x_fraction, lift in (("right", right_x, right_lift), ("left", left_x, left_lift)):
        x, z = leg_fk(targets[f"{side}_hip_pitch"], targets[f"{side}_knee"], 0.32, 0.32, cfg.leg_convention)
        assert float(x) == pytest.approx(x_fraction * cfg.step_length_m, abs=1e-6)
        assert float(z) == pytest.approx(cfg.hip_height_m - lift * cfg.step_height_m, abs=1e-6)
        # Sole flat: ankle_pitch (axis −y) = hip_pitch + knee.
        flat = targets[f"{side}_hip_pitch"] + targets[f"{side}_knee"]
        assert float(targets[f"{side}_ankle_pitch"]) == pytest.approx(float(flat), abs=1e-9)
        assert float(targets[f"{side}_hip_roll"]) == pytest.approx(sway, abs=1e-9)
        assert float(targets[f"{side}_ankle_roll"]) == pytest.approx(-sway, abs=1e-9)


def test_ankle_feedback_signs_and_sizes():
    cfg = _plain_cfg()
    gait = BipedGait(cfg)
    time = _time_at(0.3, cfg)
    still = gait.joint_targets(time, _torso())
    leaning = gait.joint_targets(time, _torso(pitch_rad=0.1, pitch_rate_rads=0.2, roll_rad=0.1))
    for side in ("left", "right"):
        # Leaning forward presses the toes down: Marvin's ankle_pitch (+ = toes up) decreases
        # by K_θ θ + K_θ̇ θ̇ = 0.05·0.1 + 0.1421·0.2.
        delta_pitch = leaning[f"{side}_ankle_pitch"] - still[f"{side}_ankle_pitch"]
        assert float(delta_pitch) == pytest.approx(-(0.05 * 0.1 + cfg.pitch_rate_gain_s * 0.2), abs=1e-9)
        delta_roll = leaning[f"{side}_ankle_roll"] - still[f"{side}_ankle_roll"]
        assert float(delta_roll) == pytest.approx(-0.38 * 0.1, abs=1e-9)


def test_heading_and_lane_loops():
    cfg = marvin_gait_cfg()
    # 0.2 m left of the lane: ψ_ref = −0.5·0.2 = −0.1, u = 0.3·(−0.1) = −0.03 (turn right).
    assert float(heading_turn(_torso(y_m=1.2), 1.0, cfg)) == pytest.approx(-0.03)
    # Heading 2π − 0.05 is 0.05 right of straight: u = 0.3·0.05 = 0.015 (wrapped, not 0.3·(−6.23)).
    assert float(heading_turn(_torso(yaw_rad=2 * PI - 0.05), 0.0, cfg)) == pytest.approx(0.015)
    # Saturations: ψ_ref at −0.3; u at −0.15.
    assert float(heading_turn(_torso(y_m=10.0, yaw_rad=0.0), 0.0, cfg)) == pytest.approx(-0.09)
    assert float(heading_turn(_torso(yaw_rad=1.0), 0.0, cfg)) == pytest.approx(-0.15)


def test_hip_yaw_turn_grows_in_swing_and_returns_in_stance():
    cfg = _plain_cfg()
    gait = BipedGait(cfg)
    torso = _torso(y_m=0.2)  # u = −0.03
    at_zero = gait.joint_targets(_time_at(0.0, cfg), torso)
    at_half = gait.joint_targets(_time_at(PI / 2, cfg), torso)
    # u·½(1 − cos ψ): right ψ = 0 → 0, left ψ = π → u; at φ = π/2 both are u/2.
    assert float(at_zero["right_hip_yaw"]) == pytest.approx(0.0, abs=1e-9)
    assert float(at_zero["left_hip_yaw"]) == pytest.approx(-0.03)
    assert float(at_half["right_hip_yaw"]) == pytest.approx(-0.015)
    assert float(at_half["left_hip_yaw"]) == pytest.approx(-0.015)


def test_arms_swing_opposite_to_the_legs():
    cfg = _plain_cfg()
    targets = BipedGait(cfg).joint_targets(_time_at(0.0, cfg), _torso())
    # φ = 0: right foot back, left foot forward → left arm back (+ shoulder pitch), right arm forward.
    assert float(targets["left_shoulder_pitch"]) == pytest.approx(cfg.arm_swing_amplitude_rad)
    assert float(targets["right_shoulder_pitch"]) == pytest.approx(-cfg.arm_swing_amplitude_rad)
    assert float(targets["left_elbow"]) == pytest.approx(cfg.elbow_rad)


def test_targets_are_clamped_to_joint_ranges():
    cfg = marvin_gait_cfg()
    gait = BipedGait(cfg)
    times = torch.linspace(5.0, 6.0, 50, dtype=torch.float64)
    targets = gait.joint_targets(times, _torso(50, roll_rad=0.5))
    for name, (lower, upper) in cfg.joint_limits_rad.items():
        assert float(targets[name].min()) >= lower and float(targets[name].max()) <= upper, name


def test_trajectory_out_of_reach_is_rejected():
    with pytest.raises(LegReachError, match="biped gait trajectory"):
        BipedGait(marvin_gait_cfg(hip_height_m=0.62, step_length_m=0.4))


def test_torso_lean_tilts_the_pelvis_over_unchanged_legs():
    upright = BipedGait(marvin_gait_cfg(joint_limits_rad=None)).joint_targets(2.0, _torso(2), 0.5)
    leaning = BipedGait(marvin_gait_cfg(joint_limits_rad=None, torso_lean_rad=0.1)).joint_targets(2.0, _torso(2), 0.5)
    for side in ("left", "right"):
        # Hip pitch − = thigh forward of the pelvis: a pelvis pitched forward by 0.1 over a fixed thigh.
        assert torch.allclose(leaning[f"{side}_hip_pitch"], upright[f"{side}_hip_pitch"] - 0.1)
        for joint in ("knee", "ankle_pitch", "hip_roll", "ankle_roll"):
            assert torch.equal(leaning[f"{side}_{joint}"], upright[f"{side}_{joint}"])


@pytest.mark.parametrize("right_phase, right_weight", [(1.5 * math.pi, 1.0), (0.5 * math.pi, 0.0), (0.0, 0.5)])
def test_stance_hip_feedback_weights(right_phase, right_weight):
    # φ = 2π f (t − t₀) with f = 1 Hz and t₀ = 0: t = ψ_R / 2π puts the right leg at ψ_R.
    time = right_phase / (2 * math.pi)
    cfg = _plain_cfg(frequency_hz=1.0, hip_pitch_gain=0.4, hip_roll_gain=0.3)
    torso = _torso(1, pitch_rad=0.1, roll_rad=-0.2)
    with_feedback = BipedGait(cfg).joint_targets(time, torso, 0.0)
    without = BipedGait(_plain_cfg(frequency_hz=1.0)).joint_targets(time, torso, 0.0)
    # w = ½(1 − sin ψ): 1 mid-stance, 0 mid-swing, ½ at touch-down; the left leg is half a cycle away.
    for side, weight in (("right", right_weight), ("left", 1.0 - right_weight)):
        pitch_delta = with_feedback[f"{side}_hip_pitch"] - without[f"{side}_hip_pitch"]
        roll_delta = with_feedback[f"{side}_hip_roll"] - without[f"{side}_hip_roll"]
        assert pitch_delta.item() == pytest.approx(0.4 * 0.1 * weight, abs=1e-9)
        assert roll_delta.item() == pytest.approx(0.3 * -0.2 * weight, abs=1e-9)


@pytest.mark.parametrize(
    "right_phase, right_single, left_single",
    [(1.5 * math.pi, 1.0, 0.0), (0.5 * math.pi, 0.0, 1.0), (0.0, 0.0, 0.0), (math.pi, 0.0, 0.0)],
)
def test_stance_compensation_only_in_single_support(right_phase, right_single, left_single):
    # f = 1 Hz, t₀ = 0: t = ψ_R / 2π. Mid right stance (ψ_R = 3π/2) the left foot is at the top of its
    # swing, so the right leg carries everything; at ψ_R = 0 and π both feet are down.
    time = right_phase / (2 * math.pi)
    comp = {"hip_roll": 0.12, "knee": -0.05, "ankle_pitch": -0.08}
    cfg = _plain_cfg(frequency_hz=1.0, double_support_margin=0.2, stance_compensation_rad=comp)
    with_comp = BipedGait(cfg).joint_targets(time, _torso(1), 0.0)
    without = BipedGait(_plain_cfg(frequency_hz=1.0, double_support_margin=0.2)).joint_targets(time, _torso(1), 0.0)
    for side, single in (("right", right_single), ("left", left_single)):
        for joint, offset in comp.items():
            # Roll is mirrored on the right: abduction (foot outwards) is − there.
            sign = -1.0 if side == "right" and joint == "hip_roll" else 1.0
            delta = (with_comp[f"{side}_{joint}"] - without[f"{side}_{joint}"]).item()
            assert delta == pytest.approx(sign * offset * single, abs=1e-9), (side, joint)
        for joint in ("hip_yaw", "hip_pitch", "ankle_roll"):
            assert torch.equal(with_comp[f"{side}_{joint}"], without[f"{side}_{joint}"])


def test_stance_compensation_rejects_unknown_joints():
    with pytest.raises(ValueError, match="stance_compensation_rad"):
        BipedGait(marvin_gait_cfg(stance_compensation_rad={"shoulder_pitch": 0.1}))


def _sagittal_foot_x(targets, side, cfg):
    """Forward foot position under the hip from the targets (the sagittal leg joints' FK)."""
    x, _ = leg_fk(
        targets[f"{side}_hip_pitch"], targets[f"{side}_knee"], cfg.thigh_length_m, cfg.shin_length_m, cfg.leg_convention
    )
    return x.item()


@pytest.mark.parametrize("speed_error", [0.2, -0.1])
def test_foot_placement_lands_the_swing_foot_by_the_speed_error(speed_error):
    cfg = _plain_cfg(frequency_hz=1.0, foot_placement_velocity_gain_s=0.3, foot_placement_limit_m=0.5)
    nominal = 2.0 * cfg.step_length_m * cfg.frequency_hz
    moving = _torso(1, forward_velocity_mps=nominal + speed_error)
    plain = _torso(1, forward_velocity_mps=nominal)
    gait = BipedGait(cfg)
    # ψ_R = π: the right foot touches down (full offset); ψ_R = 0: it lifts off (no offset).
    for right_phase, right_weight in ((math.pi, 1.0), (0.0, 0.0), (0.5 * math.pi, 0.5)):
        time = right_phase / (2 * math.pi)
        shifted = _sagittal_foot_x(gait.joint_targets(time, moving, 0.0), "right", cfg)
        base = _sagittal_foot_x(gait.joint_targets(time, plain, 0.0), "right", cfg)
        assert shifted - base == pytest.approx(0.3 * speed_error * right_weight, abs=1e-6)


def test_foot_placement_saturates_and_missing_velocity_reads_as_standing_still():
    cfg = _plain_cfg(frequency_hz=1.0, foot_placement_velocity_gain_s=1.0, foot_placement_limit_m=0.05)
    gait = BipedGait(cfg)
    time = 0.5  # ψ_R = π: right touch-down
    fast = _sagittal_foot_x(gait.joint_targets(time, _torso(1, forward_velocity_mps=5.0), 0.0), "right", cfg)
    nominal = 2.0 * cfg.step_length_m * cfg.frequency_hz
    plain = _sagittal_foot_x(gait.joint_targets(time, _torso(1, forward_velocity_mps=nominal), 0.0), "right", cfg)
    assert fast - plain == pytest.approx(0.05, abs=1e-6)
    unknown = _sagittal_foot_x(gait.joint_targets(time, _torso(1), 0.0), "right", cfg)
    standing = _sagittal_foot_x(gait.joint_targets(time, _torso(1, forward_velocity_mps=0.0), 0.0), "right", cfg)
    assert unknown == pytest.approx(standing)


def test_lateral_placement_moves_the_swing_foot_sideways_with_a_flat_sole():
    cfg = _plain_cfg(frequency_hz=1.0, sway_amplitude_rad=0.0, lateral_placement_velocity_gain_s=0.2)
    gait = BipedGait(cfg)
    time = 0.5  # ψ_R = π: the right foot touches down, the left lifts off
    drifting = gait.joint_targets(time, _torso(1, lateral_velocity_mps=0.25), 0.0)
    still = gait.joint_targets(time, _torso(1), 0.0)
    # Hip roll + moves the foot to +y by z·sin(roll): the right foot lands 0.2 · 0.25 m further left.
    roll = (drifting["right_hip_roll"] - still["right_hip_roll"]).item()
    assert cfg.hip_height_m * math.sin(roll) == pytest.approx(0.2 * 0.25, abs=1e-9)
    assert (drifting["right_ankle_roll"] - still["right_ankle_roll"]).item() == pytest.approx(-roll)
    assert torch.equal(drifting["left_hip_roll"], still["left_hip_roll"])


def test_describe_keeps_every_number_of_the_sprint_gait():
    import json

    from linkage_lab.gait.policy import describe
    from linkage_lab.robots.marvin.gait import MARVIN_SPRINT_GAIT, marvin_sprint_gait_cfg

    info = describe(BipedGait(marvin_sprint_gait_cfg()))
    assert info["gait"] == "BipedGait"
    for key, value in MARVIN_SPRINT_GAIT.items():
        assert info[key] == value, key
    assert "joint_limits_rad" not in info and "leg_convention" not in info  # tuples and objects stay out
    json.dumps(info)  # race.json must be able to hold it
