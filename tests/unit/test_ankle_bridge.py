"""The ankle bridge ONNX graphs: valid files, and parity with the library's IK, J and FK."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from linkage_lab.deploy import ankle_bridge
from linkage_lab.evaluation.replay import ankle_geometry_preset
from linkage_lab.kinematics import forward_kinematics, inverse_kinematics
from linkage_lab.robots.ankles import load_ankle_geometry

pytestmark = pytest.mark.unit

F64 = torch.float64
#: Motor a's crank moves ≤ speed × 20 ms between two control ticks (rad).
TICK_S = 0.02


@pytest.fixture(scope="module")
def bridge(tmp_path_factory):
    """Sessions of every exported graph, keyed by (side, function), and the written paths."""
    paths = ankle_bridge.export_ankle_bridge(tmp_path_factory.mktemp("bridge"))
    sessions = {}
    for path in paths:
        _, side, function = path.stem.split("_")
        sessions[side, function] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sessions, paths


def run(sessions, side, function, **inputs):
    feeds = {name: np.asarray(value, dtype=np.float32) for name, value in inputs.items()}
    return sessions[side, function].run(None, feeds)


def random_poses(side: str, count: int, seed: int) -> torch.Tensor:
    geometry = load_ankle_geometry(side=side)
    generator = torch.Generator().manual_seed(seed)
    lower = torch.tensor([geometry.pitch_range_rad[0], geometry.roll_range_rad[0]], dtype=F64)
    upper = torch.tensor([geometry.pitch_range_rad[1], geometry.roll_range_rad[1]], dtype=F64)
    return lower + (upper - lower) * torch.rand(count, 2, dtype=F64, generator=generator)


def fd_jacobian(side: str, poses: torch.Tensor, step: float = 1e-6) -> torch.Tensor:
    """``∂crank/∂pose`` by central differences of the library's IK, ``[B, 2, 2]``."""
    geometry = load_ankle_geometry(side=side)
    columns = []
    for axis in range(2):
        offset = torch.zeros(2, dtype=F64)
        offset[axis] = step
        plus, minus = (
            inverse_kinematics(geometry, poses + offset),
            inverse_kinematics(geometry, poses - offset),
        )
        columns.append((plus - minus) / (2 * step))
    return torch.stack(columns, dim=-1)


def test_files_are_valid_with_named_io_and_metadata(bridge):
    sessions, paths = bridge
    assert [p.name for p in paths] == [
        ankle_bridge.bridge_filename(side, function)
        for side in ankle_bridge.SIDES
        for function in ankle_bridge.FUNCTIONS
    ]
    for path in paths:
        model = onnx.load(path)
        onnx.checker.check_model(model, full_check=True)
        assert model.opset_import[0].version >= 17
        props = {p.key: p.value for p in model.metadata_props}
        _, side, function = path.stem.split("_")
        assert props["linkage_lab.side"] == side and props["linkage_lab.function"] == function
        assert props["linkage_lab.gain_mode"] == "host_torque"
        graph = ankle_bridge.GRAPHS[function]
        session = sessions[side, function]
        assert [i.name for i in session.get_inputs()] == list(graph.inputs)
        assert [o.name for o in session.get_outputs()] == list(graph.outputs)
        assert all(i.type == "tensor(float)" and i.shape[0] == "batch" for i in session.get_inputs())
        # Every input and output is described in the README text.
        assert all(f"`{name}`" in ankle_bridge.BRIDGE_DOC for name in (*graph.inputs, *graph.outputs))
    # The batch is dynamic: one ankle and many give the same rows.
    poses = random_poses("left", 5, seed=1).numpy()
    many = run(sessions, "left", "ik", joint_pos_target=poses)[0]
    one = run(sessions, "left", "ik", joint_pos_target=poses[:1])[0]
    assert one.shape == (1, 2) and np.allclose(one, many[:1], atol=1e-7)


@pytest.mark.parametrize("side", ["left", "right"])
def test_ik_and_jacobian_match_the_library(bridge, side):
    sessions, _ = bridge
    geometry = load_ankle_geometry(side=side)
    poses = random_poses(side, 500, seed=2)
    crank, reachable = run(sessions, side, "ik", joint_pos_target=poses)
    assert reachable.dtype == np.bool_ and reachable.all()
    assert np.abs(crank - inverse_kinematics(geometry, poses).numpy()).max() <= 1e-5
    # J through the torque graph: J⁻ᵀ of a unit torque recovers J column by column.
    jac = fd_jacobian(side, poses).numpy()
    for axis in range(2):
        torque = np.zeros((len(poses), 2))
        torque[:, axis] = 1.0
        motor_torque = run(sessions, side, "torque", joint_pos=poses, joint_torque=torque)[0]
        assert np.abs(np.einsum("bmj,bm->bj", jac, motor_torque) - torque).max() <= 1e-5


def test_ik_flags_an_unreachable_pose_without_nan(bridge):
    sessions, _ = bridge
    crank, reachable = run(sessions, "left", "ik", joint_pos_target=[[-1.4, 0.0], [0.1, 0.1]])
    assert np.isfinite(crank).all()
    assert not reachable[0].all() and reachable[1].all()


def test_right_ankle_is_the_mirror(bridge):
    sessions, _ = bridge
    poses = random_poses("left", 50, seed=3).numpy()
    mirrored = poses * np.array([1.0, -1.0])
    left = run(sessions, "left", "ik", joint_pos_target=poses)[0]
    right = run(sessions, "right", "ik", joint_pos_target=mirrored)[0]
    assert np.abs(left - right).max() <= 1e-6


@pytest.mark.parametrize("side", ["left", "right"])
def test_fk_matches_the_library_from_neutral_and_a_warm_start(bridge, side):
    sessions, _ = bridge
    geometry = load_ankle_geometry(side=side)
    poses = random_poses(side, 400, seed=4)
    crank = inverse_kinematics(geometry, poses).float().double()
    truth = forward_kinematics(geometry, crank, poses, tol=1e-12).joint_pos.numpy()
    neutral = np.zeros((len(poses), 2))
    estimate, last_step = run(sessions, side, "fk", crank_pos=crank, joint_pos_guess=neutral)
    assert np.abs(estimate - truth).max() < 1e-6 and last_step.max() < 1e-6
    # The previous tick: each crank up to its no-load speed × 20 ms away (random direction).
    generator = torch.Generator().manual_seed(5)
    move = geometry.motor.speed_rads * TICK_S * (2 * torch.rand(len(poses), 2, generator=generator, dtype=F64) - 1)
    previous = forward_kinematics(geometry, inverse_kinematics(geometry, poses) + move, poses)
    keep = (previous.converged & previous.in_range).numpy()
    assert keep.sum() > 100
    guess = previous.joint_pos.numpy()[keep]
    estimate, _ = run(sessions, side, "fk", crank_pos=crank.numpy()[keep], joint_pos_guess=guess)
    assert np.abs(estimate - truth[keep]).max() < 1e-6


def test_fk_unroll_count_converges_in_float64():
    """The unrolled Newton steps alone (no float32 rounding) reach 1e-9 rad from neutral, every preset."""
    for preset in ("marvin", "rods_close", "narrow_rods", "calf"):
        geometry = load_ankle_geometry(preset)
        pitch = torch.linspace(*geometry.pitch_range_rad, 15, dtype=F64)
        roll = torch.linspace(*geometry.roll_range_rad, 9, dtype=F64)
        poses = torch.stack(torch.meshgrid(pitch, roll, indexing="ij"), dim=-1).reshape(-1, 2)
        consts = ankle_bridge._bridge_constants(geometry)
        crank = inverse_kinematics(geometry, poses)
        estimate, _ = ankle_bridge._fk(consts, crank, torch.zeros_like(poses), ankle_bridge.FK_NEWTON_STEPS)
        assert (estimate - poses).abs().max() < 1e-9, preset


@pytest.mark.parametrize("side", ["left", "right"])
def test_velocity_matches_finite_differences(bridge, side):
    sessions, _ = bridge
    geometry = load_ankle_geometry(side=side)
    poses = random_poses(side, 200, seed=6) * 0.95
    generator = torch.Generator().manual_seed(7)
    joint_vel = 4 * torch.rand(len(poses), 2, dtype=F64, generator=generator) - 2
    step = 1e-6
    crank_vel = (
        inverse_kinematics(geometry, poses + step * joint_vel) - inverse_kinematics(geometry, poses - step * joint_vel)
    ) / (2 * step)
    estimate = run(sessions, side, "velocity", crank_vel=crank_vel, joint_pos=poses)[0]
    assert np.abs(estimate - joint_vel.numpy()).max() <= 1e-4


@pytest.mark.parametrize("side", ["left", "right"])
def test_gains_map_through_the_jacobian_and_are_never_copied(bridge, side):
    sessions, _ = bridge
    poses = random_poses(side, 200, seed=8)
    generator = torch.Generator().manual_seed(9)
    kp = 100 + 400 * torch.rand(len(poses), 2, dtype=F64, generator=generator)
    kd = 1 + 9 * torch.rand(len(poses), 2, dtype=F64, generator=generator)
    motor_kp, motor_kd = run(sessions, side, "gains", joint_pos=poses, joint_kp=kp, joint_kd=kd)
    inverse = np.linalg.inv(fd_jacobian(side, poses).numpy())
    for joint_gain, motor_gain in ((kp.numpy(), motor_kp), (kd.numpy(), motor_kd)):
        expected = np.einsum("bkm,bk,bkn->bmn", inverse, joint_gain, inverse)
        scale = np.abs(expected).max(axis=(1, 2))
        assert (np.abs(motor_gain - expected).max(axis=(1, 2)) <= 1e-5 * scale).all()
        assert np.allclose(motor_gain, motor_gain.transpose(0, 2, 1), rtol=1e-5)
        # J is never the identity here, so copying the joint gains would be wrong at every pose.
        copied = np.einsum("bk,kn->bkn", joint_gain, np.eye(2))
        assert (np.abs(motor_gain - copied).max(axis=(1, 2)) > 0.1 * scale).all()


def test_ankle_geometry_preset_follows_the_actuator_transmissions():
    assert ankle_geometry_preset(["marvin_ankle_left:calf", "marvin_ankle_right:calf"]) == "calf"
    assert ankle_geometry_preset(["marvin_ankle_left", "marvin_ankle_right"]) == "marvin"
    assert ankle_geometry_preset(["identity", "identity"]) == "marvin"  # the box model: default geometry
    with pytest.raises(ValueError, match="different geometry presets"):
        ankle_geometry_preset(["marvin_ankle_left:calf", "marvin_ankle_right:rods_close"])


@pytest.mark.parametrize("preset", ["calf", "rods_close"])
def test_bundle_bridge_uses_the_trained_ankle_preset(tmp_path, preset):
    """The bundle's deploy writer builds the bridge of the trained preset, not ``marvin``'s."""
    from linkage_lab.export import bundle
    from linkage_lab.robots.marvin.bundle import ANKLE_BRIDGE_DIR

    # What policy_metadata reads off an env whose ankle actuator uses ``marvin_ankle_<side>:<preset>``.
    transmissions = [f"marvin_ankle_{side}:{preset}" for side in ankle_bridge.SIDES]
    metadata = {"robot": "marvin", "ankle_preset": ankle_geometry_preset(transmissions)}
    deploy = bundle.robot_deploy(metadata)
    files = deploy.write(tmp_path, {**metadata, **deploy.metadata})
    for side in ankle_bridge.SIDES:
        name = ankle_bridge.bridge_filename(side, "ik")
        assert f"{ANKLE_BRIDGE_DIR}/{name}" in files
        path = tmp_path / ANKLE_BRIDGE_DIR / name
        assert {p.key: p.value for p in onnx.load(path).metadata_props}["linkage_lab.preset"] == preset
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        poses = random_poses(side, 300, seed=10)
        crank, reachable = session.run(None, {"joint_pos_target": poses.numpy().astype(np.float32)})
        assert reachable.all()
        trained = inverse_kinematics(load_ankle_geometry(preset, side=side), poses).numpy()
        default = inverse_kinematics(load_ankle_geometry("marvin", side=side), poses).numpy()
        assert np.abs(crank - trained).max() <= 1e-5
        assert np.abs(crank - default).max() > 0.01  # the default geometry puts the cranks elsewhere


def test_the_trained_preset_is_read_from_the_run_and_a_mismatch_is_refused(tmp_path):
    from linkage_lab.evaluation.policies import PolicyLoadError
    from linkage_lab.export.metadata import check_ankle_preset, trained_ankle_preset

    checkpoint = tmp_path / "run" / "model_1.pt"
    assert trained_ankle_preset(checkpoint) is None  # a checkpoint without its run's config
    (checkpoint.parent / "params").mkdir(parents=True)
    # Isaac Lab's dump (params/env.yaml) holds Python tags (tuples, objects) besides the transmissions.
    (checkpoint.parent / "params" / "env.yaml").write_text(
        "sim:\n  gravity: !!python/tuple\n  - 0.0\n  - -9.81\n"
        "scene:\n  robot:\n    actuators:\n"
        "      hips: {class_type: !!python/name:isaaclab.actuators.DCMotor '', stiffness: 300.0}\n"
        "      ankles:\n        transmissions:\n        - marvin_ankle_left:calf\n        - marvin_ankle_right:calf\n"
    )
    assert trained_ankle_preset(checkpoint) == "calf"
    check_ankle_preset(checkpoint, {"robot": "marvin", "ankle_preset": "calf"})
    check_ankle_preset(checkpoint, {"robot": "limit", "ankle_preset": None})
    with pytest.raises(
        PolicyLoadError, match="trained with ankle geometry preset 'calf', but this config uses 'marvin'"
    ):
        check_ankle_preset(checkpoint, {"robot": "marvin", "ankle_preset": "marvin"})
