"""The ankle-torque replay agrees with counts known by construction on a synthetic trace."""

from __future__ import annotations

import math

import pytest
import torch

from linkage_lab.evaluation.replay import AnkleReplay, rsu_ankle_replay
from linkage_lab.kinematics.transmission import parallelogram_leg
from linkage_lab.robots.ankles import rsu_ankle_transmission

pytestmark = pytest.mark.unit

F64 = torch.float64
PEAK, RATED = 60.0, 20.0


def finite_difference_jacobian(transmission, pose: torch.Tensor, h: float = 1e-6) -> torch.Tensor:
    """``J = ∂θ/∂q`` by central differences of the motor positions, ``(N, 2, 2)`` (rows motors)."""
    columns = []
    for j in range(2):
        step = torch.zeros(2, dtype=F64)
        step[j] = h
        columns.append((transmission.motor_position(pose + step) - transmission.motor_position(pose - step)) / (2 * h))
    return torch.stack(columns, dim=-1)


def synthetic_trace(seed: int = 0, steps: int = 40, envs: int = 3):
    """Motor torques chosen per (step, env, ankle), mapped to joint torques with a finite-difference J.

    Each motor torque is drawn either clearly inside (|τ| ≤ 0.9 T) or clearly outside
    (1.1 T ≤ |τ| ≤ 1.5 T) the peak and clearly on one side of the rated torque, so counts do
    not depend on the last digits of J.
    """
    generator = torch.Generator().manual_seed(seed)
    ankles = {"left": rsu_ankle_transmission("left"), "right": rsu_ankle_transmission("right")}
    shape = (steps, envs, 2)
    pitch = (torch.rand(shape, generator=generator, dtype=F64) * 2 - 1) * 0.6
    roll = (torch.rand(shape, generator=generator, dtype=F64) * 2 - 1) * 0.3
    pose = torch.stack([pitch, roll], dim=-1)  # (S, E, A, 2)
    magnitude = torch.rand((*shape, 2), generator=generator, dtype=F64)
    band = torch.randint(0, 3, (*shape, 2), generator=generator)
    # band 0: below rated (≤ 0.9 T_rated); 1: between rated and peak; 2: above peak.
    low = torch.tensor([0.0, 1.1 * RATED, 1.1 * PEAK], dtype=F64)[band]
    high = torch.tensor([0.9 * RATED, 0.9 * PEAK, 1.5 * PEAK], dtype=F64)[band]
    sign = torch.where(torch.rand((*shape, 2), generator=generator) < 0.5, -1.0, 1.0).to(F64)
    motor = sign * (low + magnitude * (high - low))
    joint = torch.empty_like(motor)
    for k, name in enumerate(ankles):
        flat_pose = pose[:, :, k].reshape(-1, 2)
        jac = finite_difference_jacobian(ankles[name], flat_pose)
        joint[:, :, k] = (jac.transpose(-1, -2) @ motor[:, :, k].reshape(-1, 2, 1)).reshape(steps, envs, 2)
    return ankles, pose, motor, joint


def test_counts_and_extremes_match_the_constructed_trace():
    ankles, pose, motor, joint = synthetic_trace()
    replay = AnkleReplay(ankles, peak_nm=PEAK, rated_nm=RATED, worst_count=5)
    for step in range(pose.shape[0]):
        replay.add(joint[step], pose[step])
    summary = replay.summary()

    samples = pose.shape[0] * pose.shape[1]
    outside = (motor.abs() > PEAK).any(-1)  # (S, E, A)
    rated = (motor.abs() > RATED).any(-1)
    assert summary["steps"] == pose.shape[0]
    for k, name in enumerate(ankles):
        result = summary["ankles"][name]
        assert result["samples"] == samples and result["invalid_samples"] == 0
        assert result["outside_samples"] == int(outside[:, :, k].sum()) > 0
        assert result["fraction_outside"] == pytest.approx(float(outside[:, :, k].float().mean()))
        assert result["above_rated_samples"] == int(rated[:, :, k].sum())
        ratio = motor[:, :, k].abs().amax(-1) / PEAK
        assert result["worst_ratio"] == pytest.approx(float(ratio.max()), rel=1e-6)
        where = divmod(int(ratio.argmax()), pose.shape[1])
        assert (result["worst"]["step"], result["worst"]["env"]) == where
        assert result["worst"]["pitch_deg"] == pytest.approx(math.degrees(float(pose[where][k][0])))
        assert result["worst"]["roll_deg"] == pytest.approx(math.degrees(float(pose[where][k][1])))
        rms = motor[:, :, k].pow(2).mean(dim=(0, 1)).sqrt()
        assert result["rms_motor_nm"]["a"] == pytest.approx(float(rms[0]), rel=1e-6)
        assert result["rms_motor_nm"]["b"] == pytest.approx(float(rms[1]), rel=1e-6)
        assert result["rms_ratio_to_rated"]["b"] == pytest.approx(float(rms[1]) / RATED, rel=1e-6)
        listed = [row["ratio"] for row in result["worst_outside"]]
        assert listed == sorted(listed, reverse=True) and len(listed) == 5
        assert listed == pytest.approx(sorted(ratio[outside[:, :, k]].tolist(), reverse=True)[:5], rel=1e-6)
    overall = summary["overall"]
    assert overall["samples"] == samples
    assert overall["outside_samples"] == int(outside.any(-1).sum())
    assert overall["fraction_above_rated"] == pytest.approx(float(rated.any(-1).float().mean()))
    assert overall["worst_ratio"] == pytest.approx(float((motor.abs().amax(dim=(-1, -2)) / PEAK).max()), rel=1e-6)


def test_constant_transmission_by_hand_and_single_sample_shape():
    # Parallelogram: τ_joint = Jᵀ τ_motor with J = [[1, 0], [1, 1]], so τ_motor = (τ_hip − τ_knee, τ_knee).
    replay = AnkleReplay([parallelogram_leg()], peak_nm=10.0, rated_nm=5.0, worst_count=3)
    replay.add(torch.tensor([[15.0, 3.0]]), torch.zeros(1, 2))  # motors (12, 3): outside, above rated
    replay.add(torch.tensor([[4.0, 2.0]]), torch.zeros(1, 2))  # motors (2, 2): inside
    summary = replay.summary()["ankles"]["0"]
    assert (summary["samples"], summary["outside_samples"], summary["above_rated_samples"]) == (2, 1, 1)
    assert summary["worst_ratio"] == pytest.approx(1.2)
    assert summary["worst"]["step"] == 0 and summary["worst"]["motor_torque_nm"] == pytest.approx([12.0, 3.0])
    assert summary["rms_motor_nm"]["a"] == pytest.approx(math.sqrt((144 + 4) / 2))
    assert summary["peak_motor_nm"] == pytest.approx({"a": 12.0, "b": 3.0})
    kept = replay.samples()["0"]["normalised_motor_torque"]
    assert torch.allclose(kept, torch.tensor([[1.2, 0.3], [0.2, 0.2]], dtype=F64))


def test_unreachable_pose_is_invalid_not_fatal_and_shapes_are_checked():
    replay = rsu_ankle_replay()
    assert replay.peak_nm == PEAK and replay.rated_nm == RATED and replay.names == ["left", "right"]
    torque = torch.tensor([[[10.0, 0.0], [10.0, 0.0]], [[10.0, 0.0], [10.0, 0.0]]], dtype=F64)
    pose = torch.tensor([[[-1.4, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]], dtype=F64)
    replay.add(torque, pose)
    summary = replay.summary()
    assert summary["ankles"]["left"]["invalid_samples"] == 1 and summary["ankles"]["left"]["samples"] == 1
    assert summary["ankles"]["right"]["samples"] == 2 and summary["overall"]["samples"] == 1
    with pytest.raises(ValueError, match="shape"):
        replay.add(torch.zeros(3, 2), torch.zeros(3, 2))


def test_empty_replay_summary_has_no_numbers():
    summary = rsu_ankle_replay().summary()
    assert summary["overall"]["fraction_outside"] is None and summary["overall"]["worst"] is None
    assert summary["ankles"]["left"]["rms_motor_nm"] == {"a": None, "b": None}


def test_replay_plots_are_png_files(tmp_path):
    from linkage_lab.evaluation.plots import MOTOR_TORQUE_PLOT, POSE_PLOT, write_replay_plots

    ankles, pose, _, joint = synthetic_trace(steps=5, envs=2)
    replay = AnkleReplay(ankles, peak_nm=PEAK, rated_nm=RATED)
    for step in range(pose.shape[0]):
        replay.add(joint[step], pose[step])
    paths = write_replay_plots(replay, tmp_path)
    assert [p.name for p in paths] == [MOTOR_TORQUE_PLOT, POSE_PLOT]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_substep_is_replayed_and_the_first_substeps_peak_counts():
    # One control step of 4 physics substeps, 3 envs. A PD on a new target commands its largest
    # torque in the first substep and decays after it: motors (1.3 T, 0.2 T) then 0.5, 0.3, 0.1 T.
    # Parallelogram: τ_joint = Jᵀ τ_motor with J = [[1, 0], [1, 1]], i.e. (τ_a + τ_b, τ_b).
    peak, envs = 10.0, 3
    motor_a = torch.tensor([13.0, 5.0, 3.0, 1.0], dtype=F64)
    motor_b = torch.full((4,), 2.0, dtype=F64)
    joint = torch.stack([motor_a + motor_b, motor_b], dim=-1)  # (4, 2)
    torque = joint[:, None, None, :].expand(4, envs, 1, 2)
    pose = torch.zeros_like(torque)
    replay = AnkleReplay([parallelogram_leg()], peak_nm=peak, rated_nm=4.0, worst_count=10)
    replay.add(torque, pose)
    summary = replay.summary()
    ankle = summary["ankles"]["0"]
    assert (summary["steps"], summary["physics_steps"]) == (1, 4)
    assert ankle["samples"] == summary["overall"]["samples"] == 4 * envs
    # Only the first substep is outside; the last substep alone (what one sample per step saw) is not.
    assert ankle["outside_samples"] == summary["overall"]["outside_samples"] == envs
    assert ankle["worst_ratio"] == pytest.approx(1.3)
    assert (ankle["worst"]["step"], ankle["worst"]["substep"], ankle["worst"]["env"]) == (0, 0, 0)
    assert [(row["substep"], row["env"]) for row in ankle["worst_outside"]] == [(0, e) for e in range(envs)]
    assert ankle["above_rated_samples"] == 2 * envs  # 13 and 5 N·m exceed the 4 N·m rated torque
    assert ankle["peak_motor_nm"] == pytest.approx({"a": 13.0, "b": 2.0})
    assert ankle["rms_motor_nm"]["a"] == pytest.approx(math.sqrt((169 + 25 + 9 + 1) / 4))
    last_only = AnkleReplay([parallelogram_leg()], peak_nm=peak, rated_nm=4.0)
    last_only.add(torque[-1], pose[-1])
    assert last_only.summary()["ankles"]["0"]["outside_samples"] == 0


def test_substep_rows_keep_their_step_substep_and_env():
    # Two control steps of 2 substeps, 2 envs; one outside sample at step 1, substep 1, env 1.
    torque = torch.zeros(2, 2, 2, 1, 2, dtype=F64)  # (steps, substeps, envs, ankles, 2)
    torque[1, 1, 1, 0] = torch.tensor([0.0, 15.0], dtype=F64)  # motors (−15, 15)
    replay = AnkleReplay([parallelogram_leg()], peak_nm=10.0, rated_nm=5.0)
    for step in range(2):
        replay.add(torque[step], torch.zeros_like(torque[step]), step=step + 100)
    ankle = replay.summary()["ankles"]["0"]
    assert ankle["samples"] == 8 and ankle["outside_samples"] == 1
    assert (ankle["worst"]["step"], ankle["worst"]["substep"], ankle["worst"]["env"]) == (101, 1, 1)
    assert ankle["worst"]["motor_torque_nm"] == pytest.approx([-15.0, 15.0])
