"""The stance leg's static sag: the statics' joint torques against virtual work through the full FK."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.gait.biped import BipedGait, TorsoState
from linkage_lab.gait.compensation import SAG_JOINTS, stance_sag_compensation
from linkage_lab.robots.marvin.description import build_marvin_model
from linkage_lab.robots.marvin.gait import marvin_sprint_gait_cfg
from linkage_lab.robots.registry import get_robot, load_robot_config
from linkage_lab.statics.tree import STANDARD_GRAVITY, KinematicTree

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def setup():
    cfg = marvin_sprint_gait_cfg()
    robot = load_robot_config("marvin")
    tree = KinematicTree(build_marvin_model(get_robot("marvin").config()))
    zeros = torch.zeros(1, dtype=torch.float64)
    plain = BipedGait(marvin_sprint_gait_cfg(stance_compensation_rad=None, step_ramp_time_s=0.0, sway_ramp_time_s=0.0))
    targets = plain.joint_targets(0.25 / cfg.frequency_hz, TorsoState(*(zeros,) * 6), 0.0)
    pose = {name: float(value) for name, value in targets.items()}
    return cfg, robot, tree, pose


def _potential_energy_with_left_foot_fixed(tree, pose, reference):
    """Gravity potential (J) of the robot in ``pose``, moved rigidly so the left foot sits where it does in
    ``reference``: the left foot is the ground, everything else hangs on it."""
    frames = tree.forward_kinematics(pose)
    foot, foot_ref = frames["left_foot"], reference["left_foot"]
    rotation = foot_ref.rotation @ foot.rotation.T
    energy = 0.0
    for link, mass in tree.mass_kg.items():
        com = tree.link_com_world(frames, link)
        moved = rotation @ (com - foot.position) + foot_ref.position
        energy += mass * STANDARD_GRAVITY * moved[2]
    return energy


def test_sag_is_the_virtual_work_of_gravity_over_the_gain(setup):
    cfg, robot, tree, pose = setup
    sag = stance_sag_compensation(cfg, *_marvin())
    reference = tree.forward_kinematics(pose)
    step = 1e-6
    for joint, group in SAG_JOINTS.items():
        name = f"left_{joint}"
        up = _potential_energy_with_left_foot_fixed(tree, {**pose, name: pose[name] + step}, reference)
        down = _potential_energy_with_left_foot_fixed(tree, {**pose, name: pose[name] - step}, reference)
        # Holding the pose takes the torque whose work pays the potential energy: τ = dV/dq.
        torque = (up - down) / (2 * step)
        assert sag[joint] * robot["control"]["stiffness"][group] == pytest.approx(torque, rel=1e-5, abs=1e-6), joint


def test_sag_signs_match_the_physics(setup):
    cfg, *_ = setup
    sag = stance_sag_compensation(cfg, *_marvin())
    # The pelvis and the right leg hang to the right of the left hip: the hip must abduct (+).
    assert sag["hip_roll"] > 0.05
    # The body above a bent knee folds it further: the target extends it (−).
    assert sag["knee"] < -0.02
    # No gravity, no sag.
    assert all(abs(v) < 1e-12 for v in stance_sag_compensation(cfg, *_marvin(), gravity_mps2=0.0).values())


def test_sag_scales_with_gravity(setup):
    cfg, *_ = setup
    half = stance_sag_compensation(cfg, *_marvin(), gravity_mps2=0.5 * STANDARD_GRAVITY)
    full = stance_sag_compensation(cfg, *_marvin())
    for joint in SAG_JOINTS:
        assert half[joint] == pytest.approx(0.5 * full[joint], rel=1e-9)


def _marvin():
    """Marvin's mass model and its position gains per joint group."""
    spec = get_robot("marvin")
    return spec.description_model(), spec.config().control.stiffness
