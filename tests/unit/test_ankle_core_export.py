"""One ankle implementation: the deploy bridge wraps the library's exportable core, and they agree."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
import warnings

import numpy as np
import onnxruntime as ort
import pytest
import torch

from linkage_lab import linkage_constants
from linkage_lab.deploy import ankle_bridge
from linkage_lab.kinematics import rsu_ankle, rsu_fk, transmission
from linkage_lab.kinematics.rsu_ankle import (
    UnreachablePoseError,
    evaluate_core,
    inverse_kinematics,
    jacobian,
    loop_constants,
)
from linkage_lab.kinematics.rsu_fk import forward_kinematics
from linkage_lab.robots.ankles import available_presets, load_ankle_geometry

pytestmark = pytest.mark.unit

F64 = torch.float64
SIDES = ("left", "right")
#: torch functions that would mean the bridge restates the ankle's trigonometry itself.
MATH_CALLS = {"atan2", "atan", "acos", "arccos", "sqrt", "cos", "sin", "hypot"}


def random_poses(geometry, count: int, seed: int) -> torch.Tensor:
    """Poses (pitch, roll) drawn uniformly over the ankle's motion range (rad), ``[count, 2]``."""
    generator = torch.Generator().manual_seed(seed)
    lower = torch.tensor([geometry.pitch_range_rad[0], geometry.roll_range_rad[0]], dtype=F64)
    upper = torch.tensor([geometry.pitch_range_rad[1], geometry.roll_range_rad[1]], dtype=F64)
    return lower + (upper - lower) * torch.rand(count, 2, dtype=F64, generator=generator)


def test_the_bridge_holds_no_copy_of_the_math():
    # The graphs call the library's core, not functions of their own.
    assert ankle_bridge.evaluate_core is rsu_ankle.evaluate_core
    assert ankle_bridge.forward_kinematics_unrolled is rsu_fk.forward_kinematics_unrolled
    geometry = load_ankle_geometry()
    assert ankle_bridge._bridge_constants(geometry) is loop_constants(geometry, F64, "cpu")
    # No trigonometry or square roots in the bridge's source: those belong to the loop closure.
    tree = ast.parse(inspect.getsource(ankle_bridge))
    called = {
        node.func.attr for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }
    assert not called & MATH_CALLS, sorted(called & MATH_CALLS)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("preset", available_presets())
def test_bridge_and_library_agree_in_float64(preset, side):
    """The graphs' float64 compute against the public library functions: IK, J, J⁻¹ and FK."""
    geometry = load_ankle_geometry(preset, side=side)
    poses = random_poses(geometry, 300, seed=11)
    consts = ankle_bridge._bridge_constants(geometry)
    crank, reachable, jac = ankle_bridge._ik(consts, poses)
    assert reachable.all()
    assert (crank - inverse_kinematics(geometry, poses)).abs().max() <= 1e-12
    assert (jac - jacobian(geometry, poses)).abs().max() <= 1e-10
    # The IK graph's float32 atan2 costs only float32 rounding.
    ik_graph = ankle_bridge.AnkleIK(geometry).compute(poses)[0]
    assert (ik_graph - inverse_kinematics(geometry, poses)).abs().max() <= 1e-6
    # Velocity: J⁻¹ applied to the library's J q̇ gives q̇ back.
    generator = torch.Generator().manual_seed(12)
    joint_vel = 4 * torch.rand(len(poses), 2, dtype=F64, generator=generator) - 2
    crank_vel = (jacobian(geometry, poses) @ joint_vel.unsqueeze(-1)).squeeze(-1)
    estimate = ankle_bridge.AnkleVelocity(geometry).compute(crank_vel, poses)[0]
    assert (estimate - joint_vel).abs().max() <= 1e-9
    # FK from neutral: the bridge's unrolled Newton lands on the library's converged pose.
    target = inverse_kinematics(geometry, poses)
    truth = forward_kinematics(geometry, target, poses, tol=1e-12)
    assert truth.converged.all()
    joint_pos, last_step = ankle_bridge.AnkleFK(geometry).compute(target, torch.zeros_like(poses))
    assert (joint_pos - truth.joint_pos).abs().max() <= 1e-9
    assert (joint_pos - poses).abs().max() <= 1e-9 and last_step.max() <= 1e-9


def test_exported_graphs_agree_with_the_library(tmp_path):
    """Through ONNX Runtime (float32 interface): IK, J (via the torque graph) and FK to ~1e-6.

    One side: the float64 test above covers both, and the right ankle's graphs differ only in constants.
    """
    for side in SIDES[:1]:
        geometry = load_ankle_geometry(side=side)
        sessions = {}
        for function in ("ik", "torque", "fk"):
            path = tmp_path / ankle_bridge.bridge_filename(side, function)
            path.write_bytes(ankle_bridge.export_graph(ankle_bridge.GRAPHS[function](geometry), function))
            sessions[function] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        # Float32 poses, so that the graphs and the library see the same inputs.
        poses = random_poses(geometry, 400, seed=13).float().double()
        feed = poses.numpy().astype(np.float32)
        crank, reachable = sessions["ik"].run(None, {"joint_pos_target": feed})
        assert reachable.all()
        assert np.abs(crank - inverse_kinematics(geometry, poses).numpy()).max() <= 1e-6
        # τ_m = J⁻ᵀ τ_j, so Jᵀ τ_m returns the unit joint torques (relative to |J⁻ᵀ|).
        jac = jacobian(geometry, poses).numpy()
        scale = np.abs(np.linalg.inv(jac)).max()
        for axis in range(2):
            torque = np.zeros((len(poses), 2), dtype=np.float32)
            torque[:, axis] = 1.0
            motor_torque = sessions["torque"].run(None, {"joint_pos": feed, "joint_torque": torque})[0]
            assert np.abs(np.einsum("bmj,bm->bj", jac, motor_torque) - torque).max() <= 1e-6 * scale
        target = inverse_kinematics(geometry, poses).float().double()
        truth = forward_kinematics(geometry, target, poses, tol=1e-12).joint_pos.numpy()
        feeds = {"crank_pos": target.numpy().astype(np.float32), "joint_pos_guess": np.zeros_like(feed)}
        joint_pos, last_step = sessions["fk"].run(None, feeds)
        assert np.abs(joint_pos - truth).max() <= 1e-6 and last_step.max() <= 1e-6


def test_the_core_traces_without_host_syncs_and_keeps_a_dynamic_batch():
    """A TracerWarning would mean a host sync or a branch on a tensor value inside the core."""
    geometry = load_ankle_geometry()
    poses = random_poses(geometry, 9, seed=14)
    with warnings.catch_warnings():
        warnings.simplefilter("error", torch.jit.TracerWarning)
        for cls in ankle_bridge.GRAPHS.values():
            module = cls(geometry).eval()
            traced = torch.jit.trace(module, tuple(torch.zeros(3, 2) for _ in module.inputs))
            inputs = tuple(poses.float() for _ in module.inputs)
            for got, expected in zip(traced(*inputs), module(*inputs), strict=True):
                assert got.shape[0] == len(poses) and torch.equal(got, expected)


def test_validity_is_an_output_of_the_core_and_an_error_of_the_public_functions():
    geometry = load_ankle_geometry()
    poses = torch.tensor([[-1.4, 0.0], [0.1, 0.1]], dtype=F64)  # the first one no rod reaches
    consts = loop_constants(geometry, F64, "cpu")
    default = evaluate_core(consts, poses, with_jacobian=False)
    stretched = evaluate_core(consts, poses, with_jacobian=False, stretch_unreachable=True)
    assert not default.reachable[0].all() and default.reachable[1].all()
    assert torch.equal(stretched.reachable, default.reachable)
    assert default.motor_pos[0][~default.reachable[0]].isnan().all()
    assert stretched.motor_pos.isfinite().all()
    assert torch.equal(stretched.motor_pos[1], default.motor_pos[1])
    with pytest.raises(UnreachablePoseError, match="cannot reach pose"):
        inverse_kinematics(geometry, poses)


def test_one_parallelogram_leg_constant_in_a_torch_free_module():
    assert transmission.PARALLELOGRAM_LEG_JACOBIAN is linkage_constants.PARALLELOGRAM_LEG_JACOBIAN
    from linkage_lab.robots.limit import deploy_config

    assert deploy_config.HIP_KNEE_JACOBIAN is linkage_constants.PARALLELOGRAM_LEG_JACOBIAN
    # Hip motor = hip, knee motor = hip + knee (the absolute shank angle).
    hip, knee = 0.3, -0.8
    motors = transmission.parallelogram_leg().motor_position(torch.tensor([hip, knee], dtype=F64))
    assert motors.tolist() == pytest.approx([hip, hip + knee])
    code = "import sys, linkage_lab.linkage_constants; print('torch' in sys.modules, 'numpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]
