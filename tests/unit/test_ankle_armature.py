"""Marvin's ankle armature: the pose-dependent reflected inertia as a preset, and the default on evidence.

The two rotors' inertia seen at the ankle joints is ``Jᵀ(q) diag(J̄) J(q)`` (docs/design/s3n.md §5); here ``J`` comes
from central differences of the library's IK, independent of its analytic Jacobian, and the evidence
from a closed-chain MuJoCo model of the ankle built from the geometry alone.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from linkage_lab.dynamics.drive import LinkageDrive
from linkage_lab.robots.ankles import load_ankle_geometry, rsu_ankle_transmission
from linkage_lab.robots.marvin.articulation import ANKLE_REFLECTED_ARMATURE, ankle_actuator_cfg
from linkage_lab.robots.registry import get_robot, load_robot_config
from linkage_lab_experiments.validation.ankle_armature import (
    ankle_chirp,
    ankle_drive_cfgs,
    run_oracle_ankle,
    run_serial_ankle,
    unstable_poses,
)
from linkage_lab_experiments.validation.ankle_oracle import AnkleOracle, AnkleOracleCfg, SerialAnkle, ankle_parts

pytestmark = pytest.mark.unit

DT = 0.005


def rotor_inertia() -> float:
    """``J̄`` of one ankle motor (kg·m²), from the config."""
    robot = load_robot_config("marvin")
    return float(robot["motors"][robot["ankle_linkage"]["motor"]]["armature_kgm2"])


def fd_jacobian(side: str, pose, eps: float = 1e-6) -> np.ndarray:
    """``∂φ/∂q`` by central differences of the IK (rows motors, columns pitch, roll)."""
    transmission = rsu_ankle_transmission(side)
    columns = []
    for k in range(2):
        step = torch.zeros(1, 2, dtype=torch.float64)
        step[0, k] = eps
        base = torch.tensor([pose], dtype=torch.float64)
        forward, backward = transmission.motor_position(base + step), transmission.motor_position(base - step)
        columns.append(((forward - backward) / (2 * eps))[0].numpy())
    return np.stack(columns, axis=-1)


def reflected(side: str, pose) -> np.ndarray:
    jacobian = fd_jacobian(side, pose)
    return jacobian.T @ (rotor_inertia() * jacobian)


def resolved_ankles(*presets: str):
    """The Marvin task's ankle actuator config after resolving ``presets`` (as ``presets=…`` on the CLI)."""
    from isaaclab_tasks.utils.hydra import resolve_presets

    from linkage_lab.tasks.velocity.config.marvin.env_cfg import MarvinFlatEnvCfg

    env_cfg = resolve_presets(MarvinFlatEnvCfg(), list(presets))
    return env_cfg.scene.robot.actuators["ankles"]


def test_reflected_armature_preset_at_neutral_is_the_hand_value():
    ankles = resolved_ankles("reflected_armature")
    for side in ("left", "right"):
        expected = np.diag(reflected(side, (0.0, 0.0)))
        armature = [ankles.armature[f"{side}_ankle_pitch"], ankles.armature[f"{side}_ankle_roll"]]
        np.testing.assert_allclose(armature, expected, rtol=1e-6)
        # Pitch: J_a,p² + J_b,p² ≈ 1.02² + 0.96² ≈ 2 motors' worth; roll: 2 × 0.67² ≈ 0.9.
        assert expected[0] == pytest.approx(2.0 * rotor_inertia(), rel=0.05)
    # The old per-joint armature (one motor each) is half the pitch value, and still selectable.
    motor = resolved_ankles("motor_armature")
    assert motor.armature["left_ankle_pitch"] == pytest.approx(rotor_inertia())
    assert ankles.armature["left_ankle_pitch"] > 1.9 * motor.armature["left_ankle_pitch"]


def test_default_preset_is_the_chosen_armature():
    default = resolved_ankles()
    chosen = resolved_ankles("reflected_armature" if ANKLE_REFLECTED_ARMATURE else "motor_armature")
    assert default.armature == chosen.armature and default.model == chosen.model
    assert resolved_ankles("diamond").armature == default.armature
    # The box keeps one motor per joint: it models the naive serial simulator.
    assert resolved_ankles("box").armature["left_ankle_pitch"] == pytest.approx(rotor_inertia())


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("pose", [(0.0, 0.0), (-0.5, 0.3), (0.6, -0.2)])
def test_reflected_model_inertia_is_jt_jbar_j_at_every_pose(side, pose):
    """Native armature + explicit inertia = ``Jᵀ(q) diag(J̄) J(q)``, off-diagonals included."""
    from linkage_lab.actuators.linkage_actuator import drive_cfg
    from linkage_lab.actuators.transmissions import make_transmission

    actuator = ankle_actuator_cfg(get_robot("marvin").config(), "diamond", DT, reflected_armature=True)
    drive = LinkageDrive(drive_cfg(actuator, [300.0] * 2, [6.0] * 2), make_transmission(f"marvin_ankle_{side}"))
    q = torch.tensor([pose], dtype=torch.float64)
    total = torch.diag(drive.native_armature()) + drive.explicit_inertia(q)[0]
    np.testing.assert_allclose(total.numpy(), reflected(side, pose), rtol=1e-6, atol=1e-9)


def test_oracle_carries_the_rotors_through_the_linkage():
    """The closed chain's response to a joint torque from rest is that of ``M_foot + Jᵀ diag(J̄) J``
    (within its light cranks and rods), with ``J`` from the IK: the oracle and the library agree."""
    cross, foot = ankle_parts("marvin")
    pose = (-0.45, 0.2)
    oracle = AnkleOracle(AnkleOracleCfg(load_ankle_geometry(), cross, foot, rotor_inertia(), timestep_s=1e-4))
    oracle.model.opt.gravity[:] = 0.0
    jacobian = fd_jacobian("left", pose)
    motor_pos = rsu_ankle_transmission("left").motor_position(torch.tensor([pose], dtype=torch.float64))[0].numpy()
    measured = []
    for torque in np.eye(2):
        oracle.reset(pose, motor_pos)
        assert oracle.closure_error_m() < 1e-12
        oracle.step(np.linalg.solve(jacobian.T, torque))
        measured.append(oracle.state()[1] / 1e-4)
    link = SerialAnkle(cross, foot, (0.0, 0.0), DT).link_inertia(pose)
    expected = np.linalg.inv(link + reflected("left", pose))
    np.testing.assert_allclose(np.array(measured).T, expected, rtol=0.03, atol=0.3)


def test_default_is_the_most_faithful_armature_that_is_stable_everywhere():
    """Against the oracle the pose-dependent armature tracks best (the paper's unfiltered recipe even
    better), but only the low-passed one holds every pose of the range: the default is that one."""
    configs, transmission = ankle_drive_cfgs(DT, robot="marvin")
    errors = {model: [] for model in configs}
    for pose in ((0.0, 0.0), (-0.45, 0.2)):
        targets = ankle_chirp(pose, 2.0, DT)
        oracle = run_oracle_ankle(configs["motor"], transmission, targets, DT)
        for model, cfg in configs.items():
            run = run_serial_ankle(cfg, transmission, targets, DT)
            errors[model].append(np.sqrt(np.mean((run.joint_pos - oracle.joint_pos) ** 2, axis=0)))
    mean = {model: float(np.mean(values)) for model, values in errors.items()}
    assert mean["reflected_unfiltered"] < mean["reflected"] < mean["neutral_diagonal"] < mean["motor"]
    assert mean["reflected"] < 0.5 * mean["motor"]
    assert unstable_poses(configs["reflected"], transmission, grid=(3, 3)) == []
    # The paper's recipe limit-cycles at the toes-down, roll-out corner (explicit-loop gain 1.1 there).
    unfiltered = unstable_poses(configs["reflected_unfiltered"], transmission, grid=(3, 3))
    assert any(pitch < -0.6 and roll > 0.3 for pitch, roll in unfiltered)
    stable = [model for model in configs if model != "reflected_unfiltered"]
    best = min(stable, key=mean.get)
    default = ankle_actuator_cfg(get_robot("marvin").config(), "diamond", DT)
    chosen = configs[best]
    assert (default.model, default.accel_filter_time_constant_s) == (
        chosen.s3n.model,
        chosen.accel_filter_time_constant_s,
    )
