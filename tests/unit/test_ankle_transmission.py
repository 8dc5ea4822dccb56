"""``RSUAnkleTransmission`` honours the Transmission interface; the benchmark runs."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.kinematics.ankle_transmission import RSUAnkleTransmission
from linkage_lab.kinematics.rsu_ankle import UnreachablePoseError
from linkage_lab.kinematics.rsu_fk import ForwardKinematicsError
from linkage_lab.kinematics.transmission import Transmission
from linkage_lab.robots.ankles import rsu_ankle_transmission
from linkage_lab_experiments.analysis import ankle_bench

pytestmark = pytest.mark.unit

F64 = torch.float64


def test_is_a_transmission_with_motor_positions_from_neutral():
    ankle = rsu_ankle_transmission()
    assert isinstance(ankle, Transmission) and isinstance(ankle, RSUAnkleTransmission)
    assert ankle.num_joints == 2 and not ankle.is_constant
    assert ankle.motor_position(torch.zeros(2, dtype=F64)).abs().max() < 1e-12
    # Toes up pulls both rods down: both cranks turn the same way, about one for one.
    assert (ankle.motor_position(torch.tensor([0.1, 0.0], dtype=F64)) > 0.09).all()


def test_round_trips_through_the_interface():
    ankle = rsu_ankle_transmission(side="right")
    joint_pos = torch.tensor([[0.3, -0.2], [-0.5, 0.1], [0.0, 0.3]], dtype=F64)
    motor_pos = ankle.motor_position(joint_pos)
    assert torch.allclose(ankle.joint_position(motor_pos, joint_pos + 0.05), joint_pos, atol=1e-9)
    assert torch.allclose(ankle.joint_position(motor_pos), joint_pos, atol=1e-9)

    joint_vel = torch.tensor([[1.0, -2.0], [0.5, 0.5], [3.0, 0.0]], dtype=F64)
    motor_vel = ankle.motor_velocity(joint_vel, joint_pos)
    assert torch.allclose(ankle.joint_velocity(motor_vel, joint_pos), joint_vel, atol=1e-12)

    joint_torque = torch.tensor([[20.0, 5.0], [-40.0, 10.0], [0.0, -30.0]], dtype=F64)
    motor_torque = ankle.motor_torque(joint_torque, joint_pos)
    assert torch.allclose(ankle.joint_torque(motor_torque, joint_pos), joint_torque, atol=1e-12)
    # Virtual work: motor power equals joint power.
    assert torch.allclose((motor_torque * motor_vel).sum(-1), (joint_torque * joint_vel).sum(-1), atol=1e-10)


def test_clamp_and_errors():
    ankle = rsu_ankle_transmission()
    pose = torch.tensor([0.2, 0.1], dtype=F64)
    applied = ankle.clamp_joint_torque(torch.tensor([400.0, 0.0], dtype=F64), pose)
    assert ankle.motor_torque(applied, pose).abs().max() == pytest.approx(60.0)
    with pytest.raises(UnreachablePoseError):
        ankle.jacobian(torch.tensor([-1.4, 0.0], dtype=F64))
    with pytest.raises(ForwardKinematicsError):
        ankle.joint_position(torch.tensor([float("nan"), 0.0], dtype=F64))
    assert rsu_ankle_transmission(preset="rs06").geometry.motor.name == "RS06"
    assert rsu_ankle_transmission(motor="rs04").geometry.motor.peak_nm == 120.0


def test_bench_runs_small():
    result = ankle_bench.run(num_ankles=64, repeats=2)
    for dtype in ("float64", "float32"):
        row = result["results"][dtype]
        assert row["ik_jacobian_ms"] > 0 and row["fk_ms"] > 0 and row["fk_all_converged"]
        assert row["fk_max_error_rad"] < row["fk_tol_rad"]
    text = ankle_bench.format_report(result)
    assert "64 ankles" in text and "float64" in text


def test_transmission_quality_is_at_most_one_and_falls_towards_the_corners():
    from linkage_lab.kinematics.rsu_ankle import transmission_quality

    ankle = rsu_ankle_transmission()
    poses = torch.tensor([[0.0, 0.0], [0.6, 0.3], [-0.6, -0.3]], dtype=torch.float64)
    quality = ankle.transmission_quality(poses)
    assert torch.equal(quality, transmission_quality(ankle.geometry, poses))
    assert bool(((quality > 0) & (quality <= 1)).all())
    assert bool((quality[1:].min(-1).values < quality[0].min()).all())
