"""The robot's sensor noise in closed-chain runs: the draws against their half-widths, and who reads them."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from test_sim2sim_runner import limit_bundle  # noqa: F401 - the fixture: a Limit bundle, zero policy

from linkage_lab.robots.registry import get_robot
from linkage_lab.sim2sim.runner import run_sim2sim
from linkage_lab.sim2sim.sensors import SensorNoiseModel, Sensors, quat_to_rpy
from linkage_lab.typed_config import SensorNoise

pytestmark = pytest.mark.unit

QUIET = dict(
    gyro_noise_radps=0.0,
    gyro_bias_radps=0.0,
    gravity_noise=0.0,
    joint_pos_noise_rad=0.0,
    joint_vel_noise_radps=0.0,
    encoder_rate_noise_radps=0.0,
)
NOISE = SensorNoise(
    gyro_noise_radps=0.05,
    gyro_bias_radps=0.02,
    gravity_noise=0.05,
    joint_pos_noise_rad=0.01,
    joint_vel_noise_radps=1.5,
    encoder_rate_noise_radps=0.05,
)


def _reading(quat=(1.0, 0.0, 0.0, 0.0), motors: int = 12) -> Sensors:
    return Sensors(
        time_s=1.0,
        motor_pos_rad=np.linspace(-1.0, 1.0, motors),
        motor_vel_rads=np.linspace(-2.0, 2.0, motors),
        motor_torque_nm=np.linspace(-3.0, 3.0, motors),
        gyro_b=np.array([0.1, -0.2, 0.3]),
        accelerometer_b=np.array([0.0, 0.0, 9.81]),
        quat_wxyz=np.asarray(quat, dtype=float) / np.linalg.norm(quat),
        base_pos_w=np.array([1.0, 2.0, 0.2]),
        base_lin_vel_b=np.array([0.3, 0.0, 0.0]),
    )


def _draws(model: SensorNoiseModel, exact: Sensors, count: int = 4000) -> list[Sensors]:
    return [model(exact) for _ in range(count)]


def test_no_noise_reads_the_exact_sensors_and_the_input_is_left_alone():
    exact = _reading()
    copy = dataclasses.replace(exact, **{f: getattr(exact, f).copy() for f in ("gyro_b", "motor_pos_rad")})
    read = SensorNoiseModel(SensorNoise(**QUIET))(exact)
    for field in dataclasses.fields(Sensors):
        np.testing.assert_array_equal(getattr(read, field.name), getattr(exact, field.name))
    SensorNoiseModel(NOISE, seed=3)(exact)
    np.testing.assert_array_equal(exact.gyro_b, copy.gyro_b)
    np.testing.assert_array_equal(exact.motor_pos_rad, copy.motor_pos_rad)


def test_the_gyro_carries_a_held_bias_and_uniform_white_noise():
    exact = _reading()
    model = SensorNoiseModel(NOISE, seed=7)
    bias = model.gyro_bias_radps
    assert np.all(np.abs(bias) <= NOISE.gyro_bias_radps) and np.any(bias != 0.0)
    errors = np.array([r.gyro_b - exact.gyro_b for r in _draws(model, exact)])
    white = errors - bias  # the same bias in every reading of the run
    assert np.all(np.abs(white) <= NOISE.gyro_noise_radps + 1e-12)
    assert np.all(white.max(axis=0) > 0.95 * NOISE.gyro_noise_radps)  # the draw spans its half-width
    # A uniform draw on ±a has standard deviation a/√3; its mean over 4000 draws is within 4 standard errors of 0.
    np.testing.assert_allclose(white.std(axis=0), NOISE.gyro_noise_radps / np.sqrt(3), rtol=0.05)
    assert np.all(np.abs(white.mean(axis=0)) < 4 * NOISE.gyro_noise_radps / np.sqrt(3 * len(white)))


@pytest.mark.parametrize("quat", [(1.0, 0.0, 0.0, 0.0), (0.95, 0.1, -0.2, 0.3)])
def test_the_attitude_tilts_the_gravity_direction_by_up_to_its_half_width(quat):
    exact = _reading(quat)
    gravity, yaw = exact.projected_gravity_b, quat_to_rpy(exact.quat_wxyz)[2]
    reads = _draws(SensorNoiseModel(NOISE, seed=1), exact, 2000)
    moved = np.array([r.projected_gravity_b - gravity for r in reads])
    # A body rotation by (δx, δy) moves R^T g by g × δ: at most |δ| ≤ √2·a in total, a per axis when level.
    assert np.all(np.linalg.norm(moved, axis=1) <= np.sqrt(2) * NOISE.gravity_noise * 1.001)
    assert np.abs(moved).max() > 0.9 * NOISE.gravity_noise
    assert all(abs(np.linalg.norm(r.quat_wxyz) - 1.0) < 1e-12 for r in reads)
    if quat[0] == 1.0:
        # Level: g_b = (0, 0, -1) becomes (δy, -δx, -1) to first order, each within ±a.
        assert np.all(np.abs(moved[:, :2]) <= NOISE.gravity_noise * 1.001)
        # A tilt about x and y turns the heading only to second order (≤ a²/2).
        assert max(abs(quat_to_rpy(r.quat_wxyz)[2] - yaw) for r in reads) <= NOISE.gravity_noise**2
    np.testing.assert_array_equal(reads[0].base_pos_w, exact.base_pos_w)  # the odometry scores: left exact
    np.testing.assert_array_equal(reads[0].base_lin_vel_b, exact.base_lin_vel_b)
    np.testing.assert_array_equal(reads[0].accelerometer_b, exact.accelerometer_b)


def test_the_encoders_carry_uniform_noise_per_motor():
    exact = _reading()
    reads = _draws(SensorNoiseModel(NOISE, seed=2), exact)
    for field, half in (
        ("motor_pos_rad", NOISE.joint_pos_noise_rad),
        ("motor_vel_rads", NOISE.encoder_rate_noise_radps),
    ):
        errors = np.array([getattr(r, field) - getattr(exact, field) for r in reads])
        assert np.all(np.abs(errors) <= half + 1e-12) and np.all(errors.max(axis=0) > 0.95 * half)
    np.testing.assert_array_equal(reads[0].motor_torque_nm, exact.motor_torque_nm)


def test_a_seed_repeats_its_draws_and_another_seed_does_not():
    exact = _reading()
    first, again, other = (SensorNoiseModel(NOISE, seed) for seed in ((0, 1, 2), (0, 1, 2), (0, 1, 3)))
    np.testing.assert_array_equal(first.gyro_bias_radps, again.gyro_bias_radps)
    np.testing.assert_array_equal(first(exact).gyro_b, again(exact).gyro_b)
    assert not np.array_equal(first.gyro_bias_radps, other.gyro_bias_radps)
    assert first.describe()["seed"] == [0, 1, 2]


def _gyro_policy(folder, metadata: dict, weight: float) -> None:
    """``actions[0] = weight · ω_z``: the first joint's target follows the gyro's yaw rate, nothing else."""
    obs, actions = metadata["observation_size"], len(metadata["joint_names"])
    values = np.zeros((obs, actions), dtype=np.float32)
    names = [term["name"] for term in metadata["observation_layout"]]
    start = sum(term["size"] for term in metadata["observation_layout"][: names.index("base_ang_vel")])
    values[start + 2, 0] = weight  # the gyro's z
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["obs", "w"], ["actions"])],
        "gyro",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, obs])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, [1, actions])],
        [helper.make_tensor("w", TensorProto.FLOAT, [obs, actions], values.ravel().tolist())],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(folder / "policy.onnx"))


def test_the_controller_reads_the_noise_and_the_score_reads_the_truth(tmp_path, limit_bundle):  # noqa: F811
    # A policy that moves one hip with the gyro's yaw rate, standing still: a gyro bias of 2 rad/s moves that hip, so
    # the motors work harder than with exact sensors, while the yaw rate the run is scored on stays the base's own.
    import json
    import shutil

    folder = tmp_path / "gyro"
    shutil.copytree(limit_bundle, folder)
    metadata = json.loads((folder / "metadata.json").read_text())
    _gyro_policy(folder, metadata, 0.5)
    biased = SensorNoise(**{**QUIET, "gyro_bias_radps": 2.0})
    exact = run_sim2sim(folder, (0.0, 0.0), 1.0, sensor_noise=None)
    noisy = run_sim2sim(folder, (0.0, 0.0), 1.0, sensor_noise=biased, noise_seed=0)
    bias = noisy["sensor_noise"]["drawn_gyro_bias_radps"]
    assert abs(bias[2]) > 0.5  # drawn on ±2 rad/s: large enough to move the hip by a tenth of a radian or more
    first_motor = lambda report: report["motor_torques"]["motors"][0]["rms_nm"]  # noqa: E731
    assert first_motor(noisy) > 2 * first_motor(exact)
    assert abs(noisy["tracking"]["mean_yaw_rate_radps"]) < 0.05  # the base's yaw rate, not the biased reading
    assert exact["sensor_noise"] is None and noisy["sensor_noise"]["gyro_bias_radps"] == 2.0


def test_a_run_reads_the_robots_sensor_model_by_default(limit_bundle):  # noqa: F811
    report = run_sim2sim(limit_bundle, (0.0, 0.0), 0.2, noise_seed=5)
    model = dataclasses.asdict(get_robot("limit").config().sensors)
    assert {k: report["sensor_noise"][k] for k in model} == model
    assert report["sensor_noise"]["seed"] == 5
    with pytest.raises(ValueError, match="sensor_noise"):
        run_sim2sim(limit_bundle, (0.0, 0.0), 0.2, sensor_noise="loud")


def test_the_model_applies_every_term_but_trainings_joint_rate_margin():
    # Each term named in TERMS changes a reading when it alone is set; the joint-rate margin changes none.
    exact = _reading()
    for field in dataclasses.fields(SensorNoise):
        read = SensorNoiseModel(SensorNoise(**{**QUIET, field.name: 0.1}), seed=1)(exact)
        changed = any(
            not np.array_equal(getattr(read, f.name), getattr(exact, f.name)) for f in dataclasses.fields(Sensors)
        )
        assert changed == (field.name in SensorNoiseModel.TERMS), field.name
