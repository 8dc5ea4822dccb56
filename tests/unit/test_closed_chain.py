"""The closed-chain MuJoCo models of both robots (sim2sim): kinematics, static torque, one source of truth."""

from __future__ import annotations

import copy
import dataclasses
import math

import mujoco
import numpy as np
import pytest
import torch

from linkage_lab.description.model import to_urdf
from linkage_lab.kinematics.rsu_ankle import ik_and_jacobian
from linkage_lab.robots.limit.closed_chain import limit_closed_chain
from linkage_lab.robots.limit.description import build_limit_model
from linkage_lab.robots.marvin.closed_chain import marvin_closed_chain
from linkage_lab.robots.marvin.description import build_marvin_model
from linkage_lab.robots.registry import get_robot
from linkage_lab.sim2sim.model import ClosedChainModel
from linkage_lab.sim2sim.statics import chain_joint_torque, hold_motors, locked_model

pytestmark = pytest.mark.unit

SIDES = ("left", "right")
LEGS = ("fl", "fr", "rl", "rr")
TOLERANCE_RAD = math.radians(0.1)


def _bench(model):
    """Gravity off and a fresh ``MjData`` (the base is welded: the models are built with ``floating_base=False``)."""
    model.opt.gravity[:] = 0.0
    return model, mujoco.MjData(model)


@pytest.fixture(scope="module")
def marvin() -> ClosedChainModel:
    return marvin_closed_chain(floating_base=False)


@pytest.fixture(scope="module")
def limit() -> ClosedChainModel:
    return limit_closed_chain(floating_base=False)


def _ankle(chain: ClosedChainModel, side: str):
    (group,) = [g for g in chain.linkages if g.joints == (f"{side}_ankle_pitch", f"{side}_ankle_roll")]
    return group, group.make_transmission().geometry


def _closure_error_m(chain: ClosedChainModel, model, data) -> float:
    mujoco.mj_kinematics(model, data)
    return max(
        float(np.linalg.norm(data.site_xpos[model.site(r.site).id] - data.site_xpos[model.site(r.target).id]))
        for r in chain.rods
    )


# --- Marvin's ankles -------------------------------------------------------------------------------------------


def test_ankle_foot_settles_to_the_pose_of_the_motor_ik(marvin):
    """Cranks held at IK(pitch, roll) → the foot settles at (pitch, roll) within 0.1°, over the whole range
    (5 × 5 grid, limits included), both ankles; started from neutral, so the loop itself moves the foot."""
    model, data = _bench(marvin.compile())
    index = {name: marvin.joint_names.index(name) for name in marvin.joint_names}
    ranges = {side: (_ankle(marvin, side)[1].pitch_range_rad, _ankle(marvin, side)[1].roll_range_rad) for side in SIDES}
    worst = 0.0
    for pitch_frac in np.linspace(0.0, 1.0, 5):
        for roll_frac in np.linspace(0.0, 1.0, 5):
            marvin.reset(data, marvin.default_joint_pos)
            target = dict(marvin.default_joint_pos)
            for side, ((p_lo, p_hi), (r_lo, r_hi)) in ranges.items():
                target[f"{side}_ankle_pitch"] = p_lo + pitch_frac * (p_hi - p_lo)
                target[f"{side}_ankle_roll"] = r_lo + roll_frac * (r_hi - r_lo)
            hold_motors(marvin, data, marvin.motor_position(target), 100.0, 2.0, 0.6)
            joint_pos, _ = marvin.joint_state(data)
            for side in SIDES:
                for joint in ("ankle_pitch", "ankle_roll"):
                    name = f"{side}_{joint}"
                    worst = max(worst, abs(joint_pos[index[name]] - target[name]))
    assert _closure_error_m(marvin, model, data) < 1e-6
    assert worst < TOLERANCE_RAD, f"worst foot error {math.degrees(worst):.4f}°"


@pytest.mark.parametrize("side", SIDES)
def test_ankle_static_torque_through_the_rods_is_jt_motor_torque(marvin, side):
    """Constant crank torques with the foot locked: the foot torque the rods deliver is Jᵀ τ_m (the library's
    analytic J at the settled pose) within 1 %, at neutral, inside and at the corners of the range."""
    model, data = _bench(locked_model(marvin, [f"{side}_ankle_pitch", f"{side}_ankle_roll"]))
    _, geometry = _ankle(marvin, side)
    (p_lo, p_hi), (r_lo, r_hi) = geometry.pitch_range_rad, geometry.roll_range_rad
    poses = [(0.0, 0.0), (0.5 * p_hi, 0.7 * r_hi), (0.85 * p_lo, 0.85 * r_lo), (p_hi, r_lo), (p_lo, r_hi)]
    worst = 0.0
    for pitch, roll in poses:
        for motor_torque in ((20.0, -35.0), (-45.0, -10.0)):
            pose = {**marvin.default_joint_pos, f"{side}_ankle_pitch": pitch, f"{side}_ankle_roll": roll}
            marvin.reset(data, pose)
            pushing = dict(zip((f"{side}_ankle_motor_a", f"{side}_ankle_motor_b"), motor_torque, strict=True))
            measured = chain_joint_torque(marvin, data, [f"{side}_ankle_pitch", f"{side}_ankle_roll"], pushing)
            assert measured.max_speed < 1e-3 and measured.closure_error_m < 1e-4
            _, jac = ik_and_jacobian(geometry, torch.tensor(measured.joint_pos, dtype=torch.float64))
            expected = jac.numpy().T @ np.array(motor_torque)
            worst = max(worst, float(np.linalg.norm(measured.joint_torque - expected) / np.linalg.norm(expected)))
    assert worst < 0.01, f"worst relative error {worst:.2e}"


# --- the Limit's parallelogram legs ----------------------------------------------------------------------------


def test_limit_knee_follows_the_motors_as_the_seed_jacobian_says(limit):
    """Hip and knee motors held at θ → (q_hip, q_knee) = J⁻¹ θ with the config's J = [[1, 0], [1, 1]], i.e.
    q_knee = θ_knee_motor − θ_hip, within 0.1°, over the hip range and the bent knee, all four legs."""
    model, data = _bench(limit.compile())
    seed = np.array(get_robot("limit").config().transmission.hip_knee_jacobian)
    worst = 0.0
    for hip_motor in (-1.0, 0.0, 1.0):
        for knee in (-1.5, -0.9, -0.3):
            # Motor targets from the seed's J, applied to the motors by name.
            motor_angles = seed @ np.array([hip_motor, knee])
            targets = np.zeros(len(limit.motors))
            for leg in LEGS:
                targets[limit.motor_names.index(f"{leg}_hip")] = motor_angles[0]
                targets[limit.motor_names.index(f"{leg}_knee_motor")] = motor_angles[1]
            limit.reset(data, limit.default_joint_pos)
            hold_motors(limit, data, targets, 20.0, 0.6, 0.6)
            joint_pos, _ = limit.joint_state(data)
            expected = np.linalg.solve(seed, motor_angles)
            for leg in LEGS:
                hip, knee_angle = (joint_pos[limit.joint_names.index(f"{leg}_{j}")] for j in ("hip", "knee"))
                worst = max(worst, abs(hip - expected[0]), abs(knee_angle - expected[1]))
    assert _closure_error_m(limit, model, data) < 1e-6
    assert worst < TOLERANCE_RAD, f"worst joint error {math.degrees(worst):.4f}°"


def test_limit_knee_stop_keeps_the_parallelogram_off_its_straight_knee_fold(limit):
    """Knee motors driven well past a straight knee (target q_knee = +0.4): the knee's stop (-0.25 rad, one-sided in
    the config) holds the leg bent, and the loop stays a parallelogram (q_knee = θ_knee_motor - θ_hip, not crossed)."""
    model, data = _bench(limit.compile())
    upper = get_robot("limit").config().joint_limits["knee"].range_rad[1]
    assert upper < 0.0
    targets = np.zeros(len(limit.motors))
    for leg in LEGS:
        targets[limit.motor_names.index(f"{leg}_hip")] = 0.2
        targets[limit.motor_names.index(f"{leg}_knee_motor")] = 0.2 + 0.4
    limit.reset(data, limit.default_joint_pos)
    hold_motors(limit, data, targets, 20.0, 0.6, 0.6)
    joint_pos, _ = limit.joint_state(data)
    motor_pos, _ = limit.motor_state(data)
    for leg in LEGS:
        hip, knee = (joint_pos[limit.joint_names.index(f"{leg}_{j}")] for j in ("hip", "knee"))
        hip_motor, knee_motor = (motor_pos[limit.motor_names.index(f"{leg}_{m}")] for m in ("hip", "knee_motor"))
        assert knee == pytest.approx(upper, abs=0.02), leg  # on the stop (its contact softness), not past it
        assert knee_motor - hip_motor == pytest.approx(knee, abs=TOLERANCE_RAD), leg
    assert _closure_error_m(limit, model, data) < 1e-6


def test_limit_static_torque_through_the_parallelogram_is_jt_motor_torque(limit):
    """Hip and knee motor torques with hip and knee locked: the serial joint torques are Jᵀ τ_m =
    (τ_hip + τ_knee, τ_knee) within 1 %."""
    model, data = _bench(locked_model(limit, [f"{leg}_{j}" for leg in LEGS for j in ("hip", "knee")]))
    seed = np.array(get_robot("limit").config().transmission.hip_knee_jacobian)
    worst = 0.0
    for hip, knee in ((0.6, -1.2), (-0.5, -0.4), (1.0, -1.5)):
        for motor_torque in ((3.0, -4.0), (-6.0, 2.5)):
            pose = {
                **limit.default_joint_pos,
                **{f"{leg}_hip": hip for leg in LEGS},
                **{f"{leg}_knee": knee for leg in LEGS},
            }
            limit.reset(data, pose)
            pushing = {}
            for leg in LEGS:
                pushing.update({f"{leg}_hip": motor_torque[0], f"{leg}_knee_motor": motor_torque[1]})
            joints = [f"{leg}_{j}" for leg in LEGS for j in ("hip", "knee")]
            measured = chain_joint_torque(limit, data, joints, pushing).joint_torque.reshape(len(LEGS), 2)
            expected = seed.T @ np.array(motor_torque)
            for leg_torque in measured:
                worst = max(worst, float(np.linalg.norm(leg_torque - expected) / np.linalg.norm(expected)))
    assert worst < 0.01, f"worst relative error {worst:.2e}"


# --- one source of truth ---------------------------------------------------------------------------------------


def test_a_limit_config_number_changes_both_models():
    """A longer thigh in the config: the serial model's knee and the closed chain's rod both change to it,
    and the perturbed closed chain still drives its knee as J says."""
    base = get_robot("limit").config()
    longer = dataclasses.replace(base, geometry=dataclasses.replace(base.geometry, thigh_length_m=0.115))
    serial, serial_base = build_limit_model(longer), build_limit_model(base)
    assert to_urdf(serial) != to_urdf(serial_base)
    assert {j.name: j.origin_m for j in serial.joints}["fl_knee"] == pytest.approx((0.0, 0.0, -0.115))
    chain = limit_closed_chain(longer, floating_base=False)
    assert chain.xml != limit_closed_chain(base, floating_base=False).xml
    model, data = _bench(chain.compile())
    for leg in LEGS:
        assert np.linalg.norm(model.site_pos[model.site(f"{leg}_knee_rod_end").id]) == pytest.approx(0.115)
    chain.reset(data, chain.default_joint_pos)
    assert _closure_error_m(chain, model, data) < 1e-9
    targets = chain.motor_position({**chain.default_joint_pos, "fl_hip": 0.2, "fl_knee": -0.7})
    hold_motors(chain, data, targets, 20.0, 0.6, 0.6)
    joint_pos, _ = chain.joint_state(data)
    assert joint_pos[chain.joint_names.index("fl_knee")] == pytest.approx(-0.7, abs=TOLERANCE_RAD)


def test_a_marvin_ankle_config_number_changes_both_models():
    """Motor b 10 mm lower in ``ankle_linkage``: the serial shin (which carries the motor) and the closed
    chain's rod b (whose length the neutral pose defines) both change, and the perturbed closed chain's foot
    still settles at the IK pose of the perturbed geometry."""
    base = get_robot("marvin").config()
    section = copy.deepcopy(base.ankle_linkage)
    section["motor_centre_m"]["b"][2] -= 0.010
    lower = dataclasses.replace(base, ankle_linkage=section)
    serial, serial_base = build_marvin_model(lower), build_marvin_model(base)
    shins = [{link.name: link for link in m.links}["left_shin"].solids for m in (serial, serial_base)]
    assert shins[0] != shins[1]

    # Rod b's length by hand from the config numbers: ‖M_b + r (cos θ0, 0, sin θ0) − A0_b‖.
    centre, foot = np.array(section["motor_centre_m"]["b"]), np.array(section["rod_end_foot_m"]["b"])
    theta0, radius = section["neutral_crank_angle_rad"], section["crank_radius_m"]
    rod_length = np.linalg.norm(centre + radius * np.array([math.cos(theta0), 0.0, math.sin(theta0)]) - foot)
    chain = marvin_closed_chain(lower, floating_base=False)
    model, data = _bench(chain.compile())
    assert np.linalg.norm(model.site_pos[model.site("left_ankle_rod_end_b").id]) == pytest.approx(rod_length)
    base_model = marvin_closed_chain(base, floating_base=False).compile()
    assert np.linalg.norm(base_model.site_pos[base_model.site("left_ankle_rod_end_b").id]) != pytest.approx(rod_length)

    target = {**chain.default_joint_pos, "left_ankle_pitch": 0.4, "left_ankle_roll": -0.2}
    chain.reset(data, chain.default_joint_pos)
    hold_motors(chain, data, chain.motor_position(target), 100.0, 2.0, 0.6)
    joint_pos, _ = chain.joint_state(data)
    for name in ("left_ankle_pitch", "left_ankle_roll"):
        assert joint_pos[chain.joint_names.index(name)] == pytest.approx(target[name], abs=TOLERANCE_RAD)


# --- what a runner needs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("robot", ["limit", "marvin"])
def test_registered_closed_chain_has_the_policy_joints_motors_and_imu(robot):
    spec = get_robot(robot)
    chain = spec.require("closed_chain")()
    assert isinstance(chain, ClosedChainModel) and chain.joint_names == spec.joint_names
    model = chain.compile()
    assert model.nu == len(chain.motors) == len(spec.joint_names)
    assert model.neq == len(chain.rods)
    for motor in chain.motors:
        dof = model.jnt_dofadr[model.joint(motor.joint).id]
        assert model.dof_armature[dof] == pytest.approx(motor.armature_kgm2)
        assert model.dof_damping[dof] == pytest.approx(motor.damping_nms_per_rad)
        assert model.actuator_ctrlrange[model.actuator(motor.joint).id] == pytest.approx(
            [-motor.peak_torque_nm, motor.peak_torque_nm]
        )
    for joint in chain.passive_joints:
        assert model.dof_armature[model.jnt_dofadr[model.joint(joint).id]] == 0.0
    assert model.body(chain.base_body).id == 1 and model.site(chain.imu_site).bodyid == 1
    # The serial model's mass plus the light linkage parts (two 20 g parts per loop).
    extra = 0.04 * len(chain.rods)
    assert model.body_mass.sum() == pytest.approx(spec.description_model().total_mass() + extra)


def test_motor_torque_follows_the_torque_speed_line(limit):
    model, data = _bench(limit.compile())
    limit.reset(data, limit.default_joint_pos)
    motor = limit.motors[0]
    dof = model.jnt_dofadr[model.joint(motor.joint).id]
    peak, speed, stall = motor.peak_torque_nm, motor.no_load_speed_rads, motor.stall_torque_nm
    assert (peak, stall) == (10.0, 11.0)  # the hip: its driver's 10 N·m under the GIM6010-8's 11 N·m stall torque
    # Driving: min(T, T_s (1 − ω/ω₀)); the cap holds up to ω₀ (1 − T/T_s) = ω₀/11. Braking: T.
    cases = ((0.0, peak, peak), (speed / 11.0, peak, peak), (0.5 * speed, 5.5, peak), (1.2 * speed, 0.0, peak))
    for omega, driving, braking in cases:
        data.qvel[dof] = omega
        command = np.zeros(len(limit.motors))
        command[0] = 2.0 * peak
        assert limit.apply_motor_torque(data, command)[0] == pytest.approx(driving)
        command[0] = -2.0 * peak
        assert limit.apply_motor_torque(data, command)[0] == pytest.approx(-braking)
        assert data.ctrl[model.actuator(motor.joint).id] == pytest.approx(-braking)


def test_joint_torque_maps_to_motor_torque_by_the_transmissions(limit, marvin):
    q = np.array([limit.default_joint_pos[j] for j in limit.joint_names])
    tau = np.arange(1.0, 13.0)
    motors = dict(zip(limit.motor_names, limit.motor_torque(q, tau), strict=True))
    # τ_m = J⁻ᵀ τ_joint with J = [[1, 0], [1, 1]]: τ_knee_motor = τ_knee, τ_hip_motor = τ_hip − τ_knee.
    assert motors["fl_knee_motor"] == pytest.approx(2.0) and motors["fl_hip"] == pytest.approx(1.0 - 2.0)
    assert motors["fl_ankle"] == pytest.approx(3.0)
    q = np.array([marvin.default_joint_pos.get(j, 0.0) for j in marvin.joint_names])
    tau = np.zeros(len(q))
    tau[marvin.joint_names.index("left_ankle_pitch")] = 30.0
    motors = marvin.motor_torque(q, tau)
    _, geometry = _ankle(marvin, "left")
    _, jac = ik_and_jacobian(geometry, torch.tensor([q[4], q[5]], dtype=torch.float64))
    pair = [marvin.motor_names.index(f"left_ankle_motor_{m}") for m in "ab"]
    assert jac.numpy().T @ motors[pair] == pytest.approx([30.0, 0.0])


@pytest.mark.parametrize("robot", ["limit", "marvin"])
def test_floating_robot_stands_on_its_closed_chains(robot):
    """Gravity, contacts and a free base: 0.5 s at the standing pose on motor-space PD holds the height and the
    loops (the sim-to-sim runner's job is the gait; this checks the model it gets)."""
    chain = get_robot(robot).require("closed_chain")()
    model = chain.compile()
    data = mujoco.MjData(model)
    chain.reset(data)
    start_height = float(data.qpos[2])
    targets = chain.motor_position(chain.default_joint_pos)
    gains = np.array([10.0 * m.peak_torque_nm for m in chain.motors])
    hold_motors(chain, data, targets, gains, 0.05 * gains, 0.5)
    assert abs(float(data.qpos[2]) - start_height) < 0.01
    assert np.abs(data.qpos[4:6]).max() < 0.02  # the base stays level (quaternion x, y)
    assert _closure_error_m(chain, model, data) < 1e-5
