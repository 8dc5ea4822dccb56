"""The Limit's hip/knee motors on their torque–speed line, in motor space (docs/design/ankle_linkage.md §5).

While a motor drives (torque and motor speed of one sign) its torque is ``min(T, T_s (1 − ω/ω₀))``: the
driver's cap ``T`` (10 N·m hip/knee, 5 N·m ankle) under the back-EMF line from the stall torque ``T_s`` at
rest to 0 at the no-load speed ``ω₀``; braking keeps ``T``. The speed is the motor's own, ``θ̇ = J q̇``, so
the knee motor turns at ``q̇_hip + q̇_knee``. ``T_s`` and ``ω₀`` come from ``configs/robots/limit.yaml``
(``motor.stall_torque_nm``, ``motor.no_load_speed_rads``), nowhere else.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import pytest
import torch
from isaaclab.utils.types import ArticulationActions

from linkage_lab.actuators.linkage_actuator import drive_cfg
from linkage_lab.dynamics.drive import LinkageDrive
from linkage_lab.kinematics.transmission import parallelogram_leg
from linkage_lab.robots.limit.articulation import leg_actuator_cfg, limit_articulation_cfg
from linkage_lab.robots.limit.config import LimitConfig
from linkage_lab.robots.registry import get_robot, load_robot_config
from linkage_lab.typed_config import parse

pytestmark = pytest.mark.unit

STANDING = (0.6, -1.2)


def t(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def yaml_speed() -> float:
    return float(load_robot_config("limit")["motor"]["no_load_speed_rads"])


#: The GIM6010-8's stall torque (Steadywin manual rev2.1, §1.2), N·m.
STALL_NM = 11.0


def saturating_limit_drive(model: str = "kin_only") -> LinkageDrive:
    """The Limit's leg drive as the task builds it, with stiff diagonal motor gains so that every
    test command saturates the motors (the limit, not the PD, sets the torque)."""
    actuator = leg_actuator_cfg(get_robot("limit").config(), model)
    cfg = drive_cfg(actuator, [actuator.stiffness] * 2, [actuator.damping] * 2)
    return LinkageDrive(
        replace(cfg, motor_coupling="full", motor_kp=(1e4, 1e4), motor_kd=(0.0, 0.0)), parallelogram_leg()
    )


def motor_torque(drive: LinkageDrive, push: tuple[float, float], joint_vel: tuple[float, float]) -> torch.Tensor:
    """Motor torques (N·m) for a serial command ``q + push`` at ``STANDING`` with velocity ``joint_vel``."""
    q = t([STANDING])
    out = drive.compute(q + t([push]), torch.zeros_like(q), q, t([joint_vel]), 0.005)
    return out.motor_torque[0]


def test_limit_yaml_gives_the_datasheet_line():
    # Steadywin GIM6010-8 manual rev2.1, §1.2: 12.3 rpm/V at the output; on a 6S pack under load (21 V),
    # 258 rpm = 27.05 rad/s, rounded in the config to 27.0. The stall torque is the manual's 11 N·m.
    assert yaml_speed() == pytest.approx(12.3 * 21.0 * 2.0 * math.pi / 60.0, abs=0.1)
    assert load_robot_config("limit")["motor"]["stall_torque_nm"] == STALL_NM
    # The manual's rated point (5 N·m at 120 rpm) lies under the line: a motor can give it continuously.
    assert STALL_NM * (1.0 - 120.0 * 2.0 * math.pi / 60.0 / yaml_speed()) >= 5.0


def test_half_no_load_speed_driving_gives_half_stall_torque():
    drive = saturating_limit_drive()
    peak = 10.0  # docs/design/robots.md §1.3: hip and knee effort limit per motor, N·m
    half = 0.5 * yaml_speed()
    # q̇ = (ω₀/2, −ω₀/2): hip motor at θ̇₁ = ω₀/2, knee motor at θ̇₂ = q̇₁ + q̇₂ = 0. Push both motors
    # forwards (θ* − θ = J (1, 0) = (1, 1)): the hip motor drives at half speed → T_s/2 = 5.5 N·m; the knee
    # motor is at rest → its cap T, although its joint turns at ω₀/2 (a per-joint line would give 5.5).
    torch.testing.assert_close(motor_torque(drive, (1.0, 0.0), (half, -half)), t([0.5 * STALL_NM, peak]))
    # Knee motor at half speed (q̇ = (0, ω₀/2)), hip motor at rest: the roles swap.
    torch.testing.assert_close(motor_torque(drive, (1.0, 0.0), (0.0, half)), t([peak, 0.5 * STALL_NM]))
    # Below ω₀ (1 − T/T_s) the driver's cap, not the line, limits: 0.9 of that speed still gives T.
    knee = 0.9 * yaml_speed() * (1.0 - peak / STALL_NM)
    torch.testing.assert_close(motor_torque(drive, (1.0, 0.0), (0.0, knee)), t([peak, peak]))


def test_braking_keeps_the_full_peak_torque():
    drive = saturating_limit_drive()
    half = 0.5 * yaml_speed()
    # Both motors turn backwards at ω₀/2 (q̇ = (−ω₀/2, 0) → θ̇ = (−ω₀/2, −ω₀/2)) and are pushed forwards.
    torch.testing.assert_close(motor_torque(drive, (1.0, 0.0), (-half, 0.0)), t([10.0, 10.0]))
    # At and beyond the no-load speed a driving motor gives nothing; braking there still gives T.
    torch.testing.assert_close(motor_torque(drive, (1.0, 0.0), (1.5 * yaml_speed(), 0.0)), t([0.0, 0.0]))
    torch.testing.assert_close(motor_torque(drive, (-1.0, 0.0), (1.5 * yaml_speed(), 0.0)), t([-10.0, -10.0]))


def test_actuator_cfg_carries_the_speed_from_the_yaml():
    robot = load_robot_config("limit")
    assert leg_actuator_cfg(parse(LimitConfig, robot, "limit.yaml"), "s3n_act").motor_no_load_speed_rads == [
        yaml_speed(),
        yaml_speed(),
    ]
    # A changed config number reaches the actuator and its drive: read, not hard-coded.
    raw = copy.deepcopy(robot)
    raw["motor"]["no_load_speed_rads"] = 7.5
    changed = parse(LimitConfig, raw, "limit.yaml (changed)")
    actuator = leg_actuator_cfg(changed, "s3n_act")
    assert actuator.motor_no_load_speed_rads == [7.5, 7.5]
    assert drive_cfg(actuator, [20.0] * 2, [0.5] * 2).motor_no_load_speed_rads == (7.5, 7.5)
    # The serial ankle's DC motor (same motor) takes it as its no-load speed too, and the stall torque as the
    # line's start (Isaac Lab's saturation_effort) under its 5 N·m cap.
    raw["motor"]["stall_torque_nm"] = 9.0
    changed = parse(LimitConfig, raw, "limit.yaml (changed)")
    articulation = limit_articulation_cfg(changed, "kin_only")
    ankles = articulation.actuators["ankles"]
    assert (ankles.actuator_velocity_limit, ankles.saturation_effort, ankles.actuator_effort_limit) == (7.5, 9.0, 5.0)
    assert leg_actuator_cfg(changed, "s3n_act").motor_stall_torque_nm == [9.0, 9.0]


def test_isaac_actuator_applies_the_line_per_motor():
    """The Isaac Lab actuator of the Limit's legs: a saturating command at ``q̇ = (ω₀/2, −ω₀/2)`` on
    every leg gives the joint torque ``Jᵀ (T_s/2, T)`` (not ``Jᵀ (T, T)`` as without the speed limit)."""
    cfg = leg_actuator_cfg(get_robot("limit").config(), "kin_only")
    joints = [name for group in cfg.coupled_joints for name in group]
    stiffness = 1e4  # saturate: the motor-space gains map from this joint stiffness
    cfg.stiffness, cfg.damping = stiffness, 0.0
    actuator = cfg.class_type(cfg, joints, slice(None), 1, "cpu", stiffness=stiffness, damping=0.0)
    pos = torch.tensor([list(STANDING) * 4])
    half = 0.5 * yaml_speed()
    vel = torch.tensor([[half, -half] * 4])
    # Mapped motor gains K_m = J⁻ᵀ K_j J⁻¹: τ_m* = J⁻ᵀ K_j δq = K_j (δq₁ − δq₂, δq₂), both > 0 here.
    target = pos + torch.tensor([[0.2, 0.1] * 4])
    action = ArticulationActions(joint_positions=target, joint_velocities=torch.zeros_like(pos), joint_efforts=None)
    effort = actuator.compute(action, pos, vel).joint_efforts
    # τ_m = (5.5, 10) N·m → τ_j = Jᵀ τ_m = (τ₁ + τ₂, τ₂) = (15.5, 10) N·m on every leg.
    torch.testing.assert_close(effort, torch.tensor([[15.5, 10.0] * 4]))


def test_isaac_ankle_motor_keeps_its_cap_until_the_line_falls_below_it():
    """The serial ankle (Isaac Lab's DC motor, same GIM6010-8): pushed hard forwards at joint speeds 0, 10 and 20
    rad/s and −10 rad/s (braking), it gives its 5 N·m cap, 5, ``T_s (1 − 20/ω₀)`` and 5 N·m."""
    cfg = limit_articulation_cfg(None, "kin_only").actuators["ankles"]
    joints = [f"{leg}_ankle" for leg in ("fl", "fr", "rl", "rr")]
    cfg.stiffness, cfg.damping = 1e4, 0.0
    actuator = cfg.class_type(cfg, joints, slice(None), 1, "cpu", stiffness=1e4, damping=0.0)
    pos = torch.zeros(1, 4)
    action = ArticulationActions(
        joint_positions=pos + 0.1, joint_velocities=torch.zeros_like(pos), joint_efforts=torch.zeros_like(pos)
    )
    effort = actuator.compute(action, pos, torch.tensor([[0.0, 10.0, 20.0, -10.0]])).joint_efforts
    expected = torch.tensor([[5.0, 5.0, STALL_NM * (1.0 - 20.0 / yaml_speed()), 5.0]])
    torch.testing.assert_close(effort, expected)
