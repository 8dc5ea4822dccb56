"""The drive's per-motor gain structures against second models of the robot's drivers: ``held``, the deploy wire's fold
of ``K_m``'s cross terms into each motor's target (numpy, :func:`~linkage_lab.deploy.wire.coupling_shift`) followed by
each driver's PD on its own motor with its diagonal gain; ``diagonal``, the hand-mapped diagonal of the parallelogram
leg's ``K_m``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from linkage_lab.deploy.wire import coupling_shift
from linkage_lab.dynamics.drive import LinkageDrive
from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import S3NCfg
from linkage_lab.kinematics.transmission import parallelogram_leg

pytestmark = pytest.mark.unit

KP, KD = (60.0, 45.0), (1.5, 1.2)
JACOBIAN = np.array([[1.0, 0.0], [1.0, 1.0]])  # the parallelogram leg: θ = (q_hip, q_hip + q_knee)
DT = 0.005


def make_drive(coupling: str = "held") -> LinkageDrive:
    cfg = LinkageDriveCfg(
        s3n=S3NCfg(model="kin_only"),
        control_space="motor",
        motor_coupling=coupling,
        joint_kp=KP,
        joint_kd=KD,
        motor_peak_torque_nm=(1e3, 1e3),
    )
    return LinkageDrive(cfg, parallelogram_leg())


def drivers(target_q: np.ndarray, tick: tuple, now: tuple) -> np.ndarray:
    """Motor torques of per-motor drivers: targets folded from the tick's sample ``(q, q̇)``, PD on ``now``."""
    inverse = np.linalg.inv(JACOBIAN)
    kp_m, kd_m = inverse.T @ np.diag(KP) @ inverse, inverse.T @ np.diag(KD) @ inverse
    motor_target = JACOBIAN @ target_q
    position = motor_target + coupling_shift(kp_m, motor_target - JACOBIAN @ tick[0])
    velocity = coupling_shift(kd_m, -(JACOBIAN @ tick[1]))
    return np.diag(kp_m) * (position - JACOBIAN @ now[0]) + np.diag(kd_m) * (velocity - JACOBIAN @ now[1])


def step(drive: LinkageDrive, target: np.ndarray, state: tuple) -> np.ndarray:
    """One physics step of a batch; returns the PD's motor torques before the limits."""
    as_t = lambda v: torch.as_tensor(v, dtype=torch.float64)  # noqa: E731
    out = drive.compute(as_t(target), torch.zeros_like(as_t(target)), as_t(state[0]), as_t(state[1]), DT)
    return out.motor_torque_desired.numpy()


def random_state(rng: np.random.Generator, envs: int) -> tuple:
    return rng.normal(0.0, 0.3, (envs, 2)), rng.normal(0.0, 2.0, (envs, 2))


def test_held_cross_terms_match_the_drivers_between_ticks_and_resample_on_a_new_target():
    rng = np.random.default_rng(3)
    drive, full = make_drive(), make_drive("full")
    target = rng.normal(0.0, 0.3, (3, 2))
    tick = random_state(rng, 3)
    # At the tick's sample the fold is exact: the full K_m.
    np.testing.assert_allclose(step(drive, target, tick), step(full, target, tick), rtol=1e-12, atol=1e-12)
    for _ in range(3):  # the rest of the tick: same target, the motors move on
        now = random_state(rng, 3)
        held = step(drive, target, now)
        expected = np.stack([drivers(target[e], (tick[0][e], tick[1][e]), (now[0][e], now[1][e])) for e in range(3)])
        np.testing.assert_allclose(held, expected, rtol=1e-10, atol=1e-10)
        assert not np.allclose(held, step(full, target, now), atol=1e-3)  # holding the cross terms is not K_m e
    # A new target is a new tick: the state it comes with is sampled.
    new_target, new_tick = target + 0.05, random_state(rng, 3)
    np.testing.assert_allclose(step(drive, new_target, new_tick), step(full, new_target, new_tick), atol=1e-10)


def test_a_reset_env_samples_afresh_and_the_others_keep_their_tick():
    rng = np.random.default_rng(4)
    drive = make_drive()
    target = rng.normal(0.0, 0.3, (3, 2))
    tick = random_state(rng, 3)
    step(drive, target, tick)
    drive.reset(torch.tensor([1]))
    now = random_state(rng, 3)
    torques = step(drive, target, now)
    for env in range(3):
        sampled = (now[0][env], now[1][env]) if env == 1 else (tick[0][env], tick[1][env])
        np.testing.assert_allclose(torques[env], drivers(target[env], sampled, (now[0][env], now[1][env])), atol=1e-10)


def test_diagonal_gains_are_each_motors_own_share_of_the_mapped_matrix():
    """``diag(K_m)`` of ``J⁻ᵀ diag(k_h, k_k) J⁻¹`` with ``J = [[1, 0], [1, 1]]`` is ``(k_h + k_k, k_k)``, on every step,
    whatever the other motor does."""
    rng = np.random.default_rng(5)
    drive = make_drive("diagonal")
    target = rng.normal(0.0, 0.3, (3, 2))
    for _ in range(3):
        position, velocity = random_state(rng, 3)
        pos_error, vel_error = (target - position) @ JACOBIAN.T, -(velocity @ JACOBIAN.T)
        expected = pos_error * [KP[0] + KP[1], KP[1]] + vel_error * [KD[0] + KD[1], KD[1]]
        np.testing.assert_allclose(step(drive, target, (position, velocity)), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("coupling", ["held", "diagonal"])
def test_per_motor_gain_structures_need_mapped_motor_gains(coupling):
    for bad in ({"control_space": "joint"}, {"control_space": "motor", "motor_kp": (1.0, 1.0), "motor_kd": (0.1, 0.1)}):
        with pytest.raises(ValueError, match="motor_coupling"):
            LinkageDrive(LinkageDriveCfg(motor_coupling=coupling, **bad), parallelogram_leg())
    with pytest.raises(ValueError, match="unknown motor_coupling"):
        LinkageDrive(LinkageDriveCfg(control_space="motor", motor_coupling="sometimes"), parallelogram_leg())
