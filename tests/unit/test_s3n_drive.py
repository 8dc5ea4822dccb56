"""LinkageDrive: PD, motor limits, native parameters, explicit S3N torques, delay and reset."""

from __future__ import annotations

import pytest
import torch

from linkage_lab.dynamics.drive import LinkageDrive
from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import S3NCfg
from linkage_lab.kinematics.transmission import Transmission, parallelogram_leg
from linkage_lab.robots.limit.s3n import leg_drive_cfg

pytestmark = pytest.mark.unit

DT = 0.005


def t(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def act_cfg(**overrides) -> LinkageDriveCfg:
    s3n = S3NCfg(model="s3n_act", reflected_inertia_kgm2=(0.01, 0.03), motor_damping_nms_per_rad=(0.2, 0.1))
    return LinkageDriveCfg(**{"s3n": s3n, "control_space": "joint", **overrides})


class WarpedLeg(Transmission):
    """A pose-dependent toy map θ = (q₁ + 0.1 sin q₂, q₂ + 0.2 q₁²)."""

    num_joints = 2

    def motor_position(self, joint_pos):
        q1, q2 = joint_pos[..., 0], joint_pos[..., 1]
        return torch.stack([q1 + 0.1 * torch.sin(q2), q2 + 0.2 * q1**2], dim=-1)

    def jacobian(self, joint_pos):
        q1, q2 = joint_pos[..., 0], joint_pos[..., 1]
        one = torch.ones_like(q1)
        return torch.stack([torch.stack([one, 0.1 * torch.cos(q2)], -1), torch.stack([0.4 * q1, one], -1)], dim=-2)

    def joint_position(self, motor_pos, joint_pos_guess=None):
        raise NotImplementedError


def test_pd_inside_limits_passes_unchanged():
    drive = LinkageDrive(act_cfg(joint_kp=(20.0, 20.0), joint_kd=(0.5, 0.5)), parallelogram_leg())
    q = t([[0.6, -1.2]])
    out = drive.compute(q + t([[0.01, -0.02]]), torch.zeros_like(q), q, torch.zeros_like(q), DT)
    # τ_j = 20 (0.01, −0.02) = (0.2, −0.4); τ_m = J⁻ᵀ τ_j = [[1, −1], [0, 1]] τ_j = (0.6, −0.4).
    torch.testing.assert_close(out.motor_torque_desired, t([[0.6, -0.4]]))
    torch.testing.assert_close(out.motor_torque, out.motor_torque_desired)
    torch.testing.assert_close(out.actuator_joint_torque, t([[0.2, -0.4]]))


@pytest.mark.parametrize("mode", ["clip", "scale"])
def test_motor_limits_respected(mode):
    cfg = act_cfg(joint_kp=(200.0, 200.0), motor_peak_torque_nm=(10.0, 5.0), saturation_mode=mode)
    drive = LinkageDrive(cfg, parallelogram_leg())
    q = torch.zeros(64, 2, dtype=torch.float64)
    target = torch.randn(64, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    out = drive.compute(target, torch.zeros_like(q), q, torch.zeros_like(q), DT)
    assert (out.motor_torque.abs() <= t([10.0, 5.0]) + 1e-12).all()
    assert (out.motor_torque_desired.abs() > t([10.0, 5.0])).any()
    if mode == "scale":
        ratio = out.motor_torque / out.motor_torque_desired
        torch.testing.assert_close(ratio[:, 0], ratio[:, 1])


def test_torque_speed_line():
    cfg = act_cfg(
        control_space="motor",
        motor_kp=(1000.0, 1000.0),
        motor_kd=(0.0, 0.0),
        motor_no_load_speed_rads=(20.0, 20.0),
    )
    drive = LinkageDrive(cfg, parallelogram_leg())
    q = torch.zeros(1, 2, dtype=torch.float64)
    # Hip motor at +10 rad/s (half the no-load speed) pushed forwards: 10 (1 − 0.5) = 5 N·m.
    # Knee motor θ̇₂ = q̇₁ + q̇₂ = +10 rad/s pushed backwards (braking): the full 10 N·m.
    out = drive.compute(t([[1.0, -2.0]]), torch.zeros_like(q), q, t([[10.0, 0.0]]), DT)
    torch.testing.assert_close(out.motor_torque, t([[5.0, -10.0]]))
    # Beyond the no-load speed a driving motor gives nothing.
    out = drive.compute(t([[1.0, 0.0]]), torch.zeros_like(q), q, t([[25.0, -25.0]]), DT)
    torch.testing.assert_close(out.motor_torque[:, 0], t([0.0]))


def test_joint_and_motor_space_pd_agree_with_mapped_gains():
    gains = {"joint_kp": (30.0, 12.0), "joint_kd": (0.8, 0.3), "motor_peak_torque_nm": (1e6, 1e6)}
    joint = LinkageDrive(act_cfg(**gains), parallelogram_leg())
    motor = LinkageDrive(act_cfg(control_space="motor", **gains), parallelogram_leg())
    gen = torch.Generator().manual_seed(1)
    q, qd, target, target_vel = (torch.randn(5, 4, 2, dtype=torch.float64, generator=gen) for _ in range(4))
    a = joint.compute(target, target_vel, q, qd, DT)
    b = motor.compute(target, target_vel, q, qd, DT)
    torch.testing.assert_close(a.motor_torque, b.motor_torque)
    torch.testing.assert_close(a.joint_torque, b.joint_torque)


def test_pose_dependent_jacobian_first_order_agreement():
    gains = {"joint_kp": (30.0, 12.0), "joint_kd": (0.0, 0.0), "motor_peak_torque_nm": (1e6, 1e6)}
    joint = LinkageDrive(act_cfg(**gains), WarpedLeg())
    motor = LinkageDrive(act_cfg(control_space="motor", **gains), WarpedLeg())
    q = t([[0.3, -0.5]])
    zero = torch.zeros_like(q)
    for step in (1e-2, 1e-3):
        target = q + step * t([[1.0, -1.0]])
        gap = (
            joint.compute(target, zero, q, zero, DT).joint_torque
            - motor.compute(target, zero, q, zero, DT).joint_torque
        )
        assert gap.abs().max() < 3.0 * step**2 * 30.0  # second-order in the error
    # Jᵀ(q) diag(J̄) J(q) changes with the pose: its diagonal at the reference pose (zero) is native,
    # the rest, including the diagonal's change elsewhere, is explicit.
    reference = torch.zeros(1, 2, dtype=torch.float64)
    assert torch.diagonal(motor.explicit_inertia(reference), dim1=-2, dim2=-1).abs().max() < 1e-15
    assert torch.diagonal(motor.explicit_inertia(q), dim1=-2, dim2=-1).abs().max() > 1e-4


def test_native_parameters_per_model():
    leg = parallelogram_leg()
    kin = LinkageDrive(act_cfg(s3n=S3NCfg("kin_only", (0.01, 0.03), (0.2, 0.1))), leg)
    torch.testing.assert_close(kin.native_armature(), t([0.01, 0.03]))
    torch.testing.assert_close(kin.native_damping(), t([0.2, 0.1]))
    act = LinkageDrive(act_cfg(), leg)
    torch.testing.assert_close(act.native_armature(), t([0.04, 0.03]))  # (J̄₁ + J̄₂, J̄₂)
    torch.testing.assert_close(act.native_damping(), t([0.3, 0.1]))  # (B̄₁ + B̄₂, B̄₂)
    # S3N-Full with b ≠ M₁₂, reference pose α = 0: Jᵀ M_p J − M_link has diagonal
    # (M₁₁ + M₂₂ + 2M₁₂ − a − 2b, M₂₂ − c) = (0.05 + 0.02 + 0.004 − 0.01 − 0.002, 0.02 − 0.002).
    full = S3NCfg(
        "s3n_full",
        (0.01, 0.03),
        (0.2, 0.1),
        mp_kgm2=(0.05, 0.002, 0.02),
        serial_link_kgm2=(0.01, 0.001, 0.002),
    )
    paper = LinkageDrive(act_cfg(s3n=full, explicit_split="paper"), leg)
    torch.testing.assert_close(paper.native_armature(), t([0.04, 0.03]))
    diagonal = LinkageDrive(act_cfg(s3n=full, explicit_split="diagonal"), leg)
    torch.testing.assert_close(diagonal.native_armature(), t([0.062, 0.018]))
    torch.testing.assert_close(diagonal.native_damping(), t([0.3, 0.1]))


def test_explicit_torque_from_finite_difference():
    drive = LinkageDrive(act_cfg(joint_kp=(0.0, 0.0), joint_kd=(0.0, 0.0)), parallelogram_leg())
    q = t([[0.6, -1.2]])
    first = drive.compute(q, torch.zeros_like(q), q, t([[1.0, 2.0]]), DT)
    # No history yet: q̈ = 0, only the damping cross term −B̄₂ E_x q̇ = −0.1 (2, 1).
    torch.testing.assert_close(first.s3n_joint_torque, t([[-0.2, -0.1]]))
    second = drive.compute(q, torch.zeros_like(q), q, t([[1.05, 1.9]]), DT)
    # q̈ = ((0.05, −0.1)) / 0.005 = (10, −20); −J̄₂ E_x q̈ = −0.03 (−20, 10) = (0.6, −0.3);
    # −B̄₂ E_x q̇ = −0.1 (1.9, 1.05) = (−0.19, −0.105).
    torch.testing.assert_close(second.s3n_joint_torque, t([[0.41, -0.405]]))
    torch.testing.assert_close(second.joint_torque, second.actuator_joint_torque + second.s3n_joint_torque)


def test_kin_only_adds_nothing():
    cfg = act_cfg(s3n=S3NCfg("kin_only", (0.01, 0.03), (0.2, 0.1)))
    drive = LinkageDrive(cfg, parallelogram_leg())
    q = t([[0.6, -1.2]])
    for vel in ([[1.0, 2.0]], [[3.0, -2.0]]):
        out = drive.compute(q, torch.zeros_like(q), q, t(vel), DT)
        torch.testing.assert_close(out.s3n_joint_torque, torch.zeros_like(q))


def test_reset_is_per_env():
    drive = LinkageDrive(act_cfg(joint_kp=(0.0, 0.0), joint_kd=(0.0, 0.0)), parallelogram_leg())
    q = torch.zeros(2, 2, dtype=torch.float64)
    drive.compute(q, q, q, t([[0.0, 0.0], [0.0, 0.0]]), DT)
    drive.reset(torch.tensor([0]))
    out = drive.compute(q, q, q, t([[0.0, 0.005], [0.0, 0.005]]), DT)
    # Env 0 lost its history (q̈ = 0); env 1 sees q̈ = (0, 1): −J̄₂ E_x q̈ = (−0.03, 0).
    damping = t([-0.1 * 0.005, 0.0])
    torch.testing.assert_close(out.s3n_joint_torque[0], damping)
    torch.testing.assert_close(out.s3n_joint_torque[1], t([-0.03, 0.0]) + damping)


def test_acceleration_low_pass():
    tau = 0.015  # blend = dt / (tau + dt) = 0.25
    cfg = act_cfg(joint_kp=(0.0, 0.0), joint_kd=(0.0, 0.0), accel_filter_time_constant_s=tau)
    drive = LinkageDrive(cfg, parallelogram_leg())
    q = torch.zeros(1, 2, dtype=torch.float64)
    drive.compute(q, q, q, q, DT)
    out = drive.compute(q, q, q, t([[0.0, 0.005]]), DT)  # raw q̈ = (0, 1), filtered (0, 0.25)
    torch.testing.assert_close(out.s3n_joint_torque, t([[-0.03 * 0.25 - 0.1 * 0.005, 0.0]]))


def test_command_delay_one_step_and_reset():
    drive = LinkageDrive(
        act_cfg(joint_kp=(10.0, 10.0), joint_kd=(0.0, 0.0), command_delay_steps=1), parallelogram_leg()
    )
    q = torch.zeros(1, 2, dtype=torch.float64)
    first = drive.compute(t([[0.1, 0.0]]), q, q, q, DT)
    second = drive.compute(t([[0.2, 0.0]]), q, q, q, DT)
    torch.testing.assert_close(first.actuator_joint_torque, t([[1.0, 0.0]]))  # fresh: no stale command
    torch.testing.assert_close(second.actuator_joint_torque, t([[1.0, 0.0]]))  # one step late
    drive.reset()
    third = drive.compute(t([[0.3, 0.0]]), q, q, q, DT)
    torch.testing.assert_close(third.actuator_joint_torque, t([[3.0, 0.0]]))


def test_batched_envs_and_legs_float32():
    drive = LinkageDrive(leg_drive_cfg("s3n_full"), parallelogram_leg())
    q = torch.zeros(8, 4, 2)
    out = drive.compute(q + 0.1, q, q, q, DT)
    assert out.joint_torque.shape == (8, 4, 2) and out.joint_torque.dtype == torch.float32


def test_config_validation():
    with pytest.raises(ValueError):
        LinkageDrive(act_cfg(joint_kp=(1.0,)), parallelogram_leg())
    with pytest.raises(ValueError):
        LinkageDrive(act_cfg(acceleration_estimate="torque_predicted"), parallelogram_leg())


@pytest.mark.parametrize("space", ["joint", "motor"])
def test_per_env_gains_override_the_config(space):
    """A per-env gain of 2× gives 2× the PD torque on that env only, in either control space."""
    cfg = act_cfg(control_space=space, joint_kp=(20.0, 20.0), joint_kd=(0.5, 0.5), motor_peak_torque_nm=(1e6, 1e6))
    drive = LinkageDrive(cfg, parallelogram_leg())
    q = t([[0.6, -1.2], [0.6, -1.2]])
    target = q + t([[0.01, -0.02], [0.01, -0.02]])
    vel = t([[0.4, 0.0], [0.4, 0.0]])
    kp = t([[20.0, 20.0], [40.0, 40.0]])
    kd = t([[0.5, 0.5], [1.0, 1.0]])
    out = drive.compute(target, torch.zeros_like(q), q, vel, DT, joint_kp=kp, joint_kd=kd)
    # τ_j = K_p (0.01, −0.02) − K_d (0.4, 0): env 0 (0.2 − 0.2, −0.4), env 1 twice that.
    torch.testing.assert_close(out.actuator_joint_torque, t([[0.0, -0.4], [0.0, -0.8]]))


def test_per_env_gains_cannot_override_fixed_motor_gains():
    cfg = act_cfg(control_space="motor", motor_kp=(5.0, 5.0), motor_kd=(0.1, 0.1))
    drive = LinkageDrive(cfg, parallelogram_leg())
    q = torch.zeros(1, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="motor_kp"):
        drive.compute(q, q, q, q, DT, joint_kp=t([[1.0, 1.0]]))


@pytest.mark.parametrize("space", ["joint", "motor"])
def test_feed_forward_effort_goes_through_the_motor_limits(space):
    cfg = act_cfg(control_space=space, joint_kp=(20.0, 20.0), joint_kd=(0.0, 0.0), motor_peak_torque_nm=(10.0, 5.0))
    drive = LinkageDrive(cfg, parallelogram_leg())
    q = torch.zeros(2, 2, dtype=torch.float64)
    target = t([[0.1, 0.0], [0.0, 0.0]])
    # Env 0: PD (2, 0) + feed-forward (1, 1) = (3, 1) → τ_m = J⁻ᵀ τ_j = (3 − 1, 1) = (2, 1): inside.
    # Env 1: feed-forward (30, 0) alone → τ_m = (30, 0), clipped to (10, 0) → τ_j = Jᵀ τ_m = (10, 0).
    ff = t([[1.0, 1.0], [30.0, 0.0]])
    out = drive.compute(target, torch.zeros_like(q), q, torch.zeros_like(q), DT, joint_effort=ff)
    torch.testing.assert_close(out.motor_torque_desired, t([[2.0, 1.0], [30.0, 0.0]]))
    torch.testing.assert_close(out.motor_torque, t([[2.0, 1.0], [10.0, 0.0]]))
    torch.testing.assert_close(out.actuator_joint_torque, t([[3.0, 1.0], [10.0, 0.0]]))


def test_the_actuator_bound_caps_the_explicit_acceleration_at_what_the_motors_can_give():
    """A velocity jump of 20 rad/s in one 5 ms step (4000 rad/s², a touchdown's impulse) on the Limit's leg drive:
    unbounded, the knee's explicit torque is ``−X_M,kh q̈_h`` with the full 4000; bounded, ``q̈`` is capped at
    ``(|J|ᵀ τ_peak)_j / (M_link,jj + A_j)`` computed here by hand from the same numbers."""
    from dataclasses import replace

    from linkage_lab.dynamics.drive import LinkageDrive
    from linkage_lab.dynamics.s3n import two_link_inertia
    from linkage_lab.kinematics.transmission import parallelogram_leg
    from linkage_lab.robots.limit.articulation import task_leg_drive_cfg

    cfg = replace(task_leg_drive_cfg("s3n_act"), explicit_acceleration_limit="actuator")
    reference = torch.tensor([cfg.reference_joint_pos_rad], dtype=torch.float64)
    alpha = float(reference[0, 1])  # parallelogram: knee motor − hip motor = the knee angle
    links = torch.diagonal(two_link_inertia(torch.tensor([alpha], dtype=torch.float64), *cfg.s3n.serial_link_kgm2)[0])
    unbounded = LinkageDrive(replace(cfg, explicit_acceleration_limit="none"), parallelogram_leg())
    bounded = LinkageDrive(cfg, parallelogram_leg())
    armature = bounded.native_armature()
    peak_hip, peak_knee = cfg.motor_peak_torque_nm
    # |J|ᵀ τ_peak with J = [[1, 0], [1, 1]]: the hip joint feels both motors, the knee joint the knee motor.
    expected_limit = torch.tensor([peak_hip + peak_knee, peak_knee], dtype=torch.float64) / (links + armature)
    torch.testing.assert_close(bounded.actuator_acceleration_limit(), expected_limit)
    dt = 0.005
    still = torch.zeros(1, 2, dtype=torch.float64)
    jump = torch.tensor([[20.0, 0.0]], dtype=torch.float64)
    explicit = {}
    for name, drive in (("none", unbounded), ("actuator", bounded)):
        drive.compute(reference, still, reference, still, dt)
        out = drive.compute(reference, still, reference, jump, dt)
        explicit[name] = out.s3n_joint_torque[0] + (drive.explicit_damping(reference)[0] @ jump[0])
    coupling = float(bounded.explicit_inertia(reference)[0, 1, 0])
    assert coupling != 0.0
    assert float(explicit["none"][1]) == pytest.approx(-coupling * 4000.0)
    assert float(explicit["actuator"][1]) == pytest.approx(-coupling * float(expected_limit[0]))
    assert abs(float(explicit["actuator"][1])) < abs(float(explicit["none"][1]))
