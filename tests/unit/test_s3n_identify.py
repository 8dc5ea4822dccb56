"""Identification of M_p(α) recovers known parameters from synthetic data."""

from __future__ import annotations

import numpy as np
import pytest

from linkage_lab_experiments.analysis.identify import forward_difference_acceleration, identify_mp

pytestmark = pytest.mark.unit

TRUE = {"m11": 0.04793, "m12": 0.005413, "m22": 0.02368, "b": (0.0972, 0.05), "g": (0.7, 0.2)}


def torques(pos, vel, acc):
    """The motor-space equations of motion written out (independent of identify.mp_regressor)."""
    m11, m12, m22 = TRUE["m11"], TRUE["m12"], TRUE["m22"]
    (b1, b2), (g1, g2) = TRUE["b"], TRUE["g"]
    alpha = pos[:, 1] - pos[:, 0]
    hip = m11 * acc[:, 0] + m12 * (np.cos(alpha) * acc[:, 1] - np.sin(alpha) * vel[:, 1] ** 2) + b1 * vel[:, 0]
    knee = m22 * acc[:, 1] + m12 * (np.cos(alpha) * acc[:, 0] + np.sin(alpha) * vel[:, 0] ** 2) + b2 * vel[:, 1]
    return np.stack([hip + g1 * np.sin(pos[:, 0]), knee + g2 * np.sin(pos[:, 1])], axis=1)


def test_recovers_parameters_from_random_samples():
    rng = np.random.default_rng(0)
    pos = rng.uniform(-1.5, 1.5, (400, 2))
    vel, acc = rng.normal(0, 3, (400, 2)), rng.normal(0, 100, (400, 2))
    result = identify_mp(pos, vel, acc, torques(pos, vel, acc))
    np.testing.assert_allclose(result.mp_kgm2, (TRUE["m11"], TRUE["m12"], TRUE["m22"]), rtol=1e-9)
    np.testing.assert_allclose(result.damping_nms_per_rad, TRUE["b"], rtol=1e-9)
    np.testing.assert_allclose(result.gravity_nm, (0.7, 0.0, 0.2, 0.0), atol=1e-9)
    assert result.residual_rms_nm < 1e-10


def test_noisy_torques_with_known_damping():
    rng = np.random.default_rng(1)
    pos = rng.uniform(-1.5, 1.5, (4000, 2))
    vel, acc = rng.normal(0, 3, (4000, 2)), rng.normal(0, 100, (4000, 2))
    noisy = torques(pos, vel, acc) + rng.normal(0, 0.05, (4000, 2))
    result = identify_mp(pos, vel, acc, noisy, known_damping_nms_per_rad=TRUE["b"])
    np.testing.assert_allclose(result.mp_kgm2, (TRUE["m11"], TRUE["m12"], TRUE["m22"]), rtol=0.02)
    assert result.damping_nms_per_rad == TRUE["b"]
    assert result.residual_rms_nm == pytest.approx(0.05, rel=0.1)


def test_recovers_parameters_from_a_simulated_trajectory():
    # Semi-implicit Euler of M_p(α) θ̈ = τ − c − Bθ̇ − g under a two-tone torque; identify from the
    # logged states with forward-difference accelerations, as from the oracle.
    dt, steps = 1e-3, 3000
    pos, vel = np.array([0.6, -0.6]), np.zeros(2)
    log_pos, log_vel, log_tau = [], [], []
    for k in range(steps):
        time = k * dt
        tau = np.array([1.5 * np.sin(2 * np.pi * 2.3 * time), 0.8 * np.sin(2 * np.pi * 3.7 * time + 1.0)])
        alpha = pos[1] - pos[0]
        inertia = np.array([[TRUE["m11"], TRUE["m12"] * np.cos(alpha)], [TRUE["m12"] * np.cos(alpha), TRUE["m22"]]])
        rest = torques(pos[None], vel[None], np.zeros((1, 2)))[0]
        acc = np.linalg.solve(inertia, tau - rest)
        log_pos.append(pos.copy())
        log_vel.append(vel.copy())
        log_tau.append(tau)
        vel = vel + dt * acc
        pos = pos + dt * vel
    log_pos, log_vel, log_tau = np.array(log_pos), np.array(log_vel), np.array(log_tau)
    acc = forward_difference_acceleration(log_vel, dt)
    result = identify_mp(log_pos[:-1], log_vel[:-1], acc, log_tau[:-1])
    np.testing.assert_allclose(result.mp_kgm2, (TRUE["m11"], TRUE["m12"], TRUE["m22"]), rtol=1e-6)
    assert np.ptp(log_pos[:, 1] - log_pos[:, 0]) > 0.3  # α did vary
