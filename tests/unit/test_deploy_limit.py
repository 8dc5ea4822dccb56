"""The Limit's deploy layer: deploy.json, wire decoding/encoding, the leg transmission, the policy tick."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from linkage_lab.robots.limit.deploy import (
    ImuSample,
    JointSample,
    LimitDeployConfig,
    LimitDeployment,
    WireMap,
    write_deploy_config,
)
from linkage_lab.robots.limit.deploy_config import LEG_GAINS
from linkage_lab.robots.limit.joints import JOINT_IDS, JOINT_NAMES
from linkage_lab.tasks.velocity.gait_clock import clock_observation, clock_phase

pytestmark = pytest.mark.unit

#: The velocity task's policy terms, in order.
LAYOUT = [
    {"name": "base_lin_vel", "size": 3, "scale": 1.0},
    {"name": "base_ang_vel", "size": 3, "scale": 0.25},
    {"name": "projected_gravity", "size": 3, "scale": 1.0},
    {"name": "velocity_commands", "size": 3, "scale": 1.0},
    {"name": "joint_pos", "size": 12, "scale": 1.0},
    {"name": "joint_vel", "size": 12, "scale": 0.05},
    {"name": "actions", "size": 12, "scale": 1.0},
]
N_OBS = 48
STANDING = {"hip": 0.6, "knee": -1.2, "ankle": 0.6}
IMU = ImuSample(base_lin_vel=(0.1, 0.0, -0.02), ang_vel=(0.4, -0.8, 1.2), projected_gravity=(0.0, 0.1, -0.99))
COMMAND = (0.5, 0.0, 0.3)


def metadata(**overrides) -> dict:
    data = {
        "task": "LinkageLab-Velocity-Flat-Limit",
        "control_period_s": 0.02,
        "joint_names": list(JOINT_NAMES),
        "joint_ids": list(JOINT_IDS),
        "default_joint_pos": {name: STANDING[name.split("_")[1]] for name in JOINT_NAMES},
        "action_scale": 0.25,
        "kp": 20.0,
        "kd": 0.5,
        "observation_layout": LAYOUT,
        "checkpoint": "model_100.pt",
    }
    return data | overrides


def linear_policy(path, weight: np.ndarray, bias: np.ndarray):
    """``actions = obs @ weight + bias`` as an ONNX file with the rsl-rl names."""
    nodes = [
        helper.make_node("MatMul", ["obs", "W"], ["h"]),
        helper.make_node("Add", ["h", "B"], ["actions"]),
    ]
    graph = helper.make_graph(
        nodes,
        "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, weight.shape[0]])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, [1, weight.shape[1]])],
        initializer=[
            numpy_helper.from_array(weight.astype(np.float32), "W"),
            numpy_helper.from_array(bias.astype(np.float32), "B"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


@pytest.fixture
def export_dir(tmp_path):
    """A written export: deploy.json and a seeded linear policy; returns (folder, weight, bias)."""
    rng = np.random.default_rng(0)
    weight, bias = 0.1 * rng.standard_normal((N_OBS, 12)), 0.1 * rng.standard_normal(12)
    # The coupled fold: the driver torques at the sample are the joint PD's exactly (the test below).
    write_deploy_config(tmp_path, {**metadata(), "leg_gains": "coupled"})
    linear_policy(tmp_path / "policy.onnx", weight, bias)
    return tmp_path, weight, bias


def samples_for(wire_pos, wire_vel=None, wire_tq=None) -> list[JointSample]:
    wire_vel = np.zeros(12) if wire_vel is None else wire_vel
    wire_tq = np.zeros(12) if wire_tq is None else wire_tq
    return [
        JointSample(joint_id=i, pos_rad=float(p), vel_rads=float(v), tq_nm=float(t), temp_c=30.0)
        for i, p, v, t in zip(JOINT_IDS, wire_pos, wire_vel, wire_tq, strict=True)
    ]


def test_deploy_json_round_trip_and_defaults(tmp_path):
    path = write_deploy_config(tmp_path, metadata())
    doc = json.loads(path.read_text())
    assert path.name == "deploy.json"
    assert [(j["id"], j["name"]) for j in doc["joints"]] == list(zip(JOINT_IDS, JOINT_NAMES, strict=True))
    assert doc["wire_angles"] == "motor" and doc["leg_gains"] == LEG_GAINS
    assert doc["export"] == {"checkpoint": "model_100.pt"}
    config = LimitDeployConfig.load(tmp_path)
    assert config.observation_size == N_OBS and config.control_period_s == 0.02
    # Isaac Lab's default offset; the robot config's effort limits (docs/design/robots.md §1.3: 10, 10, 5 N·m).
    assert config.action_offset == config.default_joint_pos
    assert config.default_joint_pos[:3] == (0.6, -1.2, 0.6)
    assert config.max_torque_nm == (10.0, 10.0, 5.0) * 4
    assert LimitDeployConfig.from_dict(config.to_dict()) == config
    # Gains as Isaac Lab writes them (regex dicts, numpy values), observation scales left at None.
    layout = [dict(term, scale=None) for term in LAYOUT]
    gains = {"kp": {".*_hip": 25.0, ".*_knee": np.float32(20.0), "fl_ankle": 12.0, ".*": 15.0}}
    config = LimitDeployConfig.load(write_deploy_config(tmp_path, metadata(observation_layout=layout, **gains)))
    assert config.kp[:6] == (25.0, 20.0, 12.0, 25.0, 20.0, 15.0)
    assert all(term.scale == 1.0 for term in config.observation)


def test_deploy_config_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="canonical"):
        write_deploy_config(tmp_path, metadata(joint_names=list(reversed(JOINT_NAMES))))
    with pytest.raises(ValueError, match="unknown observation term 'height_scan'"):
        write_deploy_config(tmp_path, metadata(observation_layout=[{"name": "height_scan", "size": 187}]))
    with pytest.raises(ValueError, match="encoder_sign"):
        write_deploy_config(tmp_path, metadata(encoder_sign=[1.0] * 11 + [0.5]))
    with pytest.raises(ValueError, match="wire_angles"):
        write_deploy_config(tmp_path, metadata(wire_angles="motors"))
    with pytest.raises(KeyError, match="kp"):
        write_deploy_config(tmp_path, {k: v for k, v in metadata().items() if k != "kp"})
    assert not (tmp_path / "deploy.json").exists()


def test_shuffled_samples_decode_to_the_same_observation(export_dir):
    folder, _, _ = export_dir
    deployment = LimitDeployment(folder)
    rng = np.random.default_rng(1)
    samples = samples_for(rng.uniform(-1, 1, 12), rng.uniform(-3, 3, 12), rng.uniform(-5, 5, 12))
    reference = deployment.observation(samples, IMU, COMMAND, np.zeros(12))
    shuffled = list(samples)
    random.Random(2).shuffle(shuffled)
    assert shuffled != samples
    assert np.array_equal(deployment.observation(shuffled, IMU, COMMAND, np.zeros(12)), reference)


def test_observation_layout_by_hand(export_dir):
    folder, _, _ = export_dir
    deployment = LimitDeployment(folder)
    # FL hip motor 0.3, FL knee motor 0.5 (so the knee joint is 0.2), everything else at zero.
    wire_pos, wire_vel = np.zeros(12), np.zeros(12)
    wire_pos[:2], wire_vel[:2] = (0.3, 0.5), (1.0, 3.0)
    last = np.arange(12) / 10
    obs = deployment.observation(samples_for(wire_pos, wire_vel), IMU, COMMAND, last)
    assert obs.dtype == np.float32 and obs.shape == (N_OBS,)
    np.testing.assert_allclose(obs[0:3], IMU.base_lin_vel, rtol=1e-6)
    np.testing.assert_allclose(obs[3:6], [0.1, -0.2, 0.3], rtol=1e-6)
    np.testing.assert_allclose(obs[6:9], IMU.projected_gravity, rtol=1e-6)
    np.testing.assert_allclose(obs[9:12], COMMAND, rtol=1e-6)
    expected_pos = -np.array([0.6, -1.2, 0.6] * 4)
    expected_pos[:2] += (0.3, 0.2)
    np.testing.assert_allclose(obs[12:24], expected_pos, atol=1e-6)
    np.testing.assert_allclose(obs[24:36], [0.05, 0.1] + [0.0] * 10, atol=1e-7)
    np.testing.assert_allclose(obs[36:48], last, atol=1e-7)
    # A layout with base_lin_vel needs it; one without does not.
    with pytest.raises(ValueError, match="base_lin_vel"):
        deployment.observation(samples_for(wire_pos), replace(IMU, base_lin_vel=None), COMMAND)


def test_knee_motor_conversion_by_hand(tmp_path):
    config = LimitDeployConfig.from_dict(config_doc(tmp_path, leg_gains="diagonal"))
    wire = WireMap(config)
    wire_pos, wire_vel, wire_tq = np.zeros(12), np.zeros(12), np.zeros(12)
    wire_pos[:3], wire_vel[:3], wire_tq[:3] = (0.3, 0.5, 0.1), (1.0, 3.0, 0.0), (2.0, 1.0, 0.5)
    state = wire.decode(samples_for(wire_pos, wire_vel, wire_tq))
    # q_knee = θ_knee_motor − θ_hip; the same for rates; τ^s = Jᵀ τ^p = (τ_h + τ_k, τ_k).
    np.testing.assert_allclose(state.joint_pos[:3], (0.3, 0.2, 0.1))
    np.testing.assert_allclose(state.joint_vel[:3], (1.0, 2.0, 0.0))
    np.testing.assert_allclose(state.joint_torque[:3], (3.0, 1.0, 0.5))
    target = np.array([0.6, -1.2, 0.6] * 4)
    records = wire.encode(target, np.zeros(12), state)
    # θ* = J q*: knee motor = 0.6 − 1.2. K_m = J⁻ᵀ diag(20, 20) J⁻¹ = [[40, −20], [−20, 20]].
    assert [r.pos for r in records[:3]] == pytest.approx([0.6, -0.6, 0.6])
    # The hip motor gets 40 N·m/rad, not the joint's 20: joint gains are never copied.
    assert [r.kp for r in records[:3]] == pytest.approx([40.0, 20.0, 20.0])
    assert [r.kd for r in records[:3]] == pytest.approx([1.0, 0.5, 0.5])
    assert [r.max_tq for r in records[:3]] == [10.0, 10.0, 5.0]

    # A knee encoder mounted backwards, reading 0.1 at zero: θ = −(wire − 0.1).
    doc = config_doc(tmp_path, leg_gains="diagonal")
    doc["joints"][1] |= {"encoder_sign": -1.0, "encoder_offset_rad": 0.1}
    flipped = WireMap(LimitDeployConfig.from_dict(doc))
    flipped_state = flipped.decode(samples_for(wire_pos, wire_vel, wire_tq))
    np.testing.assert_allclose(flipped_state.joint_pos[:2], (0.3, -0.4 - 0.3))
    np.testing.assert_allclose(flipped_state.joint_vel[:2], (1.0, -3.0 - 1.0))
    np.testing.assert_allclose(flipped_state.joint_torque[:2], (2.0 - 1.0, -1.0))
    assert flipped.encode(target, np.zeros(12), flipped_state)[1].pos == pytest.approx(0.6 + 0.1)

    coupled = WireMap(replace(config, leg_gains="coupled")).encode(target, np.zeros(12), state)
    # Coupling folded into the targets: hip 0.6 + (−20)(−0.6 − 0.5)/40, knee −0.6 + (−20)(0.6 − 0.3)/20.
    assert [r.pos for r in coupled[:2]] == pytest.approx([1.15, -0.9])
    assert [r.kp for r in coupled[:2]] == pytest.approx([40.0, 20.0])
    # The torque the drivers apply at this sample is J⁻ᵀ K_j e_j: e_j = (0.3, −1.4) → (34, −28).
    motor_torque = driver_torque(coupled, wire_pos, wire_vel)
    joint_error_torque = 20 * np.array([0.3, -1.4]) + 0.5 * np.array([0.0 - 1.0, 0.0 - 2.0])
    expected = np.array([[1.0, -1.0], [0.0, 1.0]]) @ joint_error_torque
    assert motor_torque[:2] == pytest.approx(expected)

    joint_wire = WireMap(replace(config, wire_angles="joint")).encode(target, np.zeros(12), state)
    assert [r.pos for r in joint_wire[:2]] == pytest.approx([0.6, -1.2])
    assert [r.kp for r in joint_wire[:2]] == pytest.approx([20.0, 20.0])


@pytest.mark.parametrize("wire_angles", ["motor", "joint"])
@pytest.mark.parametrize("leg_gains", ["coupled", "diagonal"])
def test_ids_round_trip_with_a_non_identity_encoder_table(tmp_path, wire_angles, leg_gains):
    rng = np.random.default_rng(3)
    signs = rng.choice([-1.0, 1.0], 12)
    offsets = rng.uniform(-0.5, 0.5, 12)
    doc = config_doc(tmp_path, wire_angles=wire_angles, leg_gains=leg_gains)
    for row, sign, offset in zip(doc["joints"], signs, offsets, strict=True):
        row["encoder_sign"], row["encoder_offset_rad"] = float(sign), float(offset)
    wire = WireMap(LimitDeployConfig.from_dict(doc))
    target_pos, target_vel = rng.uniform(-1, 1, 12), rng.uniform(-2, 2, 12)
    # The robot at the target: the coupling shift vanishes, so the records carry the target itself.
    at_target = wire.decode(samples_for(*wire_state(wire, target_pos, target_vel)))
    records = wire.encode(target_pos, target_vel, at_target)
    assert [r.id for r in records] == list(range(1, 13))
    echoed = [JointSample(joint_id=r.id, pos_rad=r.pos, vel_rads=r.vel) for r in reversed(records)]
    decoded = wire.decode(echoed)
    np.testing.assert_allclose(decoded.joint_pos, target_pos, atol=1e-12)
    np.testing.assert_allclose(decoded.joint_vel, target_vel, atol=1e-12)
    # The table is applied: the wire differs from the model angles wherever it is not identity.
    flipped = np.flatnonzero(signs < 0)
    assert all(records[i].pos != pytest.approx(decoded.motor_pos[i]) for i in flipped)


def test_bad_sample_sets_name_the_id(export_dir):
    folder, _, _ = export_dir
    deployment = LimitDeployment(folder)
    samples = samples_for(np.zeros(12))
    with pytest.raises(ValueError, match=r"missing JointSample for joint id\(s\) 5 \(fr_knee\)"):
        deployment.observation([s for s in samples if s.joint_id != 5], IMU, COMMAND)
    with pytest.raises(ValueError, match=r"duplicate JointSample for joint id 3 \(fl_ankle\)"):
        deployment.observation([*samples, samples[2]], IMU, COMMAND)
    with pytest.raises(ValueError, match="13"):
        deployment.observation([*samples[:-1], replace(samples[-1], joint_id=13)], IMU, COMMAND)
    with pytest.raises(ValueError, match=r"joint id 8 \(rl_knee\)"):
        deployment.observation([*samples[:7], replace(samples[7], pos_rad=float("nan")), *samples[8:]], IMU, COMMAND)


def test_step_runs_the_policy_and_orders_targets_by_id(export_dir):
    folder, weight, bias = export_dir
    deployment = LimitDeployment(folder)
    rng = np.random.default_rng(4)
    wire_pos, wire_vel = rng.uniform(-1, 1, 12), rng.uniform(-2, 2, 12)
    samples = samples_for(wire_pos, wire_vel)
    obs = deployment.observation(samples, IMU, COMMAND)
    shuffled = list(samples)
    random.Random(5).shuffle(shuffled)
    records = deployment.step(shuffled, IMU, COMMAND)
    assert [r.id for r in records] == list(JOINT_IDS)
    action = obs.astype(np.float64) @ weight + bias
    np.testing.assert_allclose(deployment.last_action, action, atol=1e-5)
    # q* = default + 0.25 a; the driver torques at this sample equal the joint PD through J⁻ᵀ.
    default = np.array([0.6, -1.2, 0.6] * 4)
    joint_pos = WireMap(deployment.config).decode(samples).joint_pos
    joint_vel = WireMap(deployment.config).decode(samples).joint_vel
    joint_torque = 20.0 * (default + 0.25 * action - joint_pos) - 0.5 * joint_vel
    motor_torque = driver_torque(records, wire_pos, wire_vel)
    for leg in range(4):
        hip, knee, ankle = 3 * leg, 3 * leg + 1, 3 * leg + 2
        # τ^s = Jᵀ τ^p: hip joint = hip motor + knee motor, knee joint = knee motor.
        assert motor_torque[hip] + motor_torque[knee] == pytest.approx(joint_torque[hip], abs=1e-4)
        assert motor_torque[knee] == pytest.approx(joint_torque[knee], abs=1e-4)
        assert motor_torque[ankle] == pytest.approx(joint_torque[ankle], abs=1e-4)
    # The next observation carries the action just taken.
    np.testing.assert_allclose(deployment.observation(samples, IMU, COMMAND)[36:], action, atol=1e-5)
    deployment.reset()
    assert not deployment.last_action.any()


def test_policy_width_must_match_the_layout(tmp_path):
    write_deploy_config(tmp_path, metadata())
    linear_policy(tmp_path / "policy.onnx", np.zeros((45, 12)), np.zeros(12))
    with pytest.raises(ValueError, match="obs has width 45"):
        LimitDeployment(tmp_path)


def test_module_imports_without_torch():
    code = (
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "sys.modules['isaaclab'] = None\n"
        "import linkage_lab.robots.limit.deploy\n"
        "assert 'yaml' not in sys.modules, 'deploy.limit should not need pyyaml on the robot'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def driver_torque(records, wire_pos, wire_vel) -> np.ndarray:
    """What each per-motor driver applies for its record at the sampled state, ``kp e + kd ė`` (N·m)."""
    return np.array(
        [r.kp * (r.pos - p) + r.kd * (r.vel - v) for r, p, v in zip(records, wire_pos, wire_vel, strict=True)]
    )


def config_doc(folder, **overrides) -> dict:
    """The deploy.json document of :func:`metadata` (identity encoders) with top-level overrides."""
    return json.loads(write_deploy_config(folder, metadata()).read_text()) | overrides


def wire_state(wire: WireMap, joint_pos: np.ndarray, joint_vel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wire position and velocity of a joint state, computed from the transform (no encode)."""
    return wire.sign * (wire.transform @ joint_pos) + wire.offset, wire.sign * (wire.transform @ joint_vel)


def test_previous_action_is_the_action_before_the_last(tmp_path):
    layout = [*LAYOUT, {"name": "previous_action", "size": 12, "scale": 1.0}]
    rng = np.random.default_rng(6)
    weight, bias = 0.1 * rng.standard_normal((N_OBS + 12, 12)), 0.1 * rng.standard_normal(12)
    write_deploy_config(tmp_path, metadata(observation_layout=layout))
    linear_policy(tmp_path / "policy.onnx", weight, bias)
    deployment = LimitDeployment(tmp_path)
    samples = samples_for(rng.uniform(-1, 1, 12), rng.uniform(-2, 2, 12))
    first_obs = deployment.observation(samples, IMU, COMMAND)
    assert not first_obs[N_OBS - 12 :].any()  # both actions zero at the start
    deployment.step(samples, IMU, COMMAND)
    first = first_obs.astype(np.float64) @ weight + bias
    second_obs = deployment.observation(samples, IMU, COMMAND)
    deployment.step(samples, IMU, COMMAND)
    second = second_obs.astype(np.float64) @ weight + bias
    obs = deployment.observation(samples, IMU, COMMAND)
    np.testing.assert_allclose(obs[N_OBS - 12 : N_OBS], second, atol=1e-5)  # last action
    np.testing.assert_allclose(obs[N_OBS:], first, atol=1e-5)  # the one before
    deployment.reset()
    assert not deployment.previous_action.any() and not deployment.last_action.any()


def test_the_target_filter_smooths_the_wire_targets_as_training_does(tmp_path):
    rng = np.random.default_rng(8)
    weight, bias = 0.1 * rng.standard_normal((N_OBS, 12)), 0.1 * rng.standard_normal(12)
    plain_dir, smooth_dir = tmp_path / "plain", tmp_path / "smooth"
    for folder, extra in ((plain_dir, {}), (smooth_dir, {"action_target_filter_alpha": 0.4})):
        write_deploy_config(folder, metadata(**extra))
        linear_policy(folder / "policy.onnx", weight, bias)
    assert LimitDeployConfig.load(smooth_dir).target_filter_alpha == 0.4
    assert "action_target_filter_alpha" not in json.loads((smooth_dir / "deploy.json").read_text())["export"]
    plain, smooth = LimitDeployment(plain_dir), LimitDeployment(smooth_dir)
    # One sampled state throughout: the wire encoding is then the same affine map of q* for both, and the
    # policy (which observes its raw action, not the filtered target) acts the same in both.
    samples = samples_for(rng.uniform(-1, 1, 12), rng.uniform(-2, 2, 12))
    previous = None
    for _ in range(4):
        raw = np.array([r.pos for r in plain.step(samples, IMU, COMMAND)])
        out = np.array([r.pos for r in smooth.step(samples, IMU, COMMAND)])
        np.testing.assert_allclose(smooth.last_action, plain.last_action)
        expected = raw if previous is None else 0.4 * raw + 0.6 * previous
        np.testing.assert_allclose(out, expected, atol=1e-9)
        assert previous is None or not np.allclose(out, raw)
        previous = out
    smooth.reset(), plain.reset()
    np.testing.assert_allclose(
        [r.pos for r in smooth.step(samples, IMU, COMMAND)], [r.pos for r in plain.step(samples, IMU, COMMAND)]
    )
    with pytest.raises(ValueError, match="target_filter_alpha"):
        write_deploy_config(tmp_path / "bad", metadata(action_target_filter_alpha=0.0))


def test_targets_are_clipped_to_the_trained_range(tmp_path):
    """Isaac Lab's clip of ``q*`` (export metadata ``action_target_clip``) reaches ``deploy.json`` and the runtime:
    a policy that asks past a joint's range gets the range's end, as in training."""
    clip = [[-1.18, 1.18], [-1.55, -0.27], [-0.58, 0.58]] * 4
    write_deploy_config(tmp_path, metadata(action_target_clip=clip))
    # A constant policy: actions of +8 and -8 (targets 0.6 ± 2 rad, far past every stop) in turn.
    bias = np.array([8.0, -8.0, 8.0] * 2 + [-8.0, 8.0, -8.0] * 2)
    linear_policy(tmp_path / "policy.onnx", np.zeros((N_OBS, 12)), bias)
    deployment = LimitDeployment(tmp_path)
    assert deployment.config.target_clip_rad == tuple(tuple(pair) for pair in clip)
    assert LimitDeployConfig.from_dict(deployment.config.to_dict()) == deployment.config
    targets = deployment.joint_targets(bias)
    expected = [clip[i][1] if bias[i] > 0 else clip[i][0] for i in range(12)]
    np.testing.assert_allclose(targets, expected)
    # Inside the range a target passes unchanged (hip 0.6, knee -1.2); this test's standing ankle, 0.6, is past 0.58.
    np.testing.assert_allclose(deployment.joint_targets(np.zeros(12)), [0.6, -1.2, 0.58] * 4)
    # Without the metadata key nothing is clipped (older bundles).
    write_deploy_config(tmp_path, metadata())
    assert LimitDeployConfig.load(tmp_path).target_clip_rad is None
    with pytest.raises(ValueError, match="lowest <= highest"):
        write_deploy_config(tmp_path, metadata(action_target_clip=[[0.1, -0.1]] * 12))


def test_the_limit_deployment_runs_the_clock(tmp_path):
    layout = [*LAYOUT, {"name": "gait_clock", "size": 2, "scale": 1.0, "params": {"frequency_hz": 3.0}}]
    write_deploy_config(tmp_path, metadata(observation_layout=layout))
    config = LimitDeployConfig.load(tmp_path)
    assert config.observation[-1].frequency_hz == 3.0
    assert LimitDeployConfig.from_dict(config.to_dict()) == config
    linear_policy(tmp_path / "policy.onnx", np.zeros((N_OBS + 2, 12)), np.zeros(12))
    deployment = LimitDeployment(tmp_path)
    samples = samples_for(np.zeros(12))
    seen = []
    for _ in range(4):
        seen.append(deployment.observation(samples, IMU, COMMAND)[N_OBS:])
        deployment.step(samples, IMU, COMMAND)
    expected = clock_observation(clock_phase(torch.arange(4), 0.02, 3.0)).numpy()
    np.testing.assert_allclose(np.array(seen), expected, atol=1e-6)
    deployment.reset()
    np.testing.assert_allclose(deployment.observation(samples, IMU, COMMAND)[N_OBS:], [0.0, 1.0], atol=1e-7)


def test_a_clock_term_without_a_frequency_is_refused(tmp_path):
    layout = [*LAYOUT, {"name": "gait_clock", "size": 2, "scale": 1.0}]
    with pytest.raises(ValueError, match="frequency_hz"):
        write_deploy_config(tmp_path, metadata(observation_layout=layout))
