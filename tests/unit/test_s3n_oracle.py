"""The closed-chain oracle and the serial MuJoCo leg: loop closure and mass matrices by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linkage_lab.dynamics.serial_leg import LegBody, MassPart, MujocoSerialLeg, PlanarLink
from linkage_lab_experiments.analysis.oracle import OracleCfg, ParallelogramOracle

pytestmark = pytest.mark.unit

# A hand-built leg, the oracle of these tests (Limit-like numbers; the task's leg body comes from the
# generated description, robots/limit/s3n.py, and is checked in test_limit_s3n.py), worked out by hand:
# thigh: 0.15 kg rod, 0.100 m, radius 0.012 m: I_com = 0.15 (3·0.012² + 0.1²)/12 = 1.304e-4,
#   about the hip 1.304e-4 + 0.15·0.05² = 5.054e-4.
# lower link about the knee: rod 0.10 kg over 0.085 m (6.3808e-5 + 0.1·0.0425²), ankle motor
#   0.38 kg disc r = 0.03 m at 0.015 m (1.71e-4 + 0.38·0.015²), shank + foot 0.13 kg at 0.085 m
#   (foot plate 0.05·0.06²/12 + 0.13·0.085²): c = 1.455183e-3; m₂ l_c2 = 0.00425 + 0.0057 + 0.01105.
THIGH_ABOUT_HIP = 5.054e-4
C_KNEE = 1.455183e-3
M2 = 0.61
M2_LC2 = 0.021
L1 = 0.1


def _rod(mass: float, length: float, radius: float = 0.012) -> MassPart:
    return MassPart(mass, length / 2.0, mass * (3.0 * radius**2 + length**2) / 12.0)


HAND_BODY = LegBody(
    thigh=PlanarLink.lumped([_rod(0.15, L1)]),
    shank=PlanarLink.lumped(
        [
            _rod(0.10, 0.085),
            MassPart(0.38, 0.015, 0.5 * 0.38 * 0.030**2),
            MassPart(0.13, 0.085, 0.05 * 0.06**2 / 12.0),
        ]
    ),
    thigh_length_m=L1,
    shank_length_m=0.085,
)


def test_hand_body_lumps_by_hand():
    a, b, c = HAND_BODY.serial_link_kgm2()
    assert c == pytest.approx(C_KNEE, rel=1e-6)
    assert b == pytest.approx(L1 * M2_LC2, rel=1e-9)
    assert a == pytest.approx(THIGH_ABOUT_HIP + C_KNEE + M2 * L1**2, rel=1e-6)


@pytest.mark.parametrize("knee", [-1.2, 0.4])
def test_serial_mujoco_mass_matrix_is_the_two_link_form(knee):
    leg = MujocoSerialLeg(HAND_BODY, (0.0162, 0.0162), (0.0, 0.0))
    a = THIGH_ABOUT_HIP + C_KNEE + M2 * L1**2
    b = L1 * M2_LC2
    expected = [
        [a + 2 * b * math.cos(knee) + 0.0162, C_KNEE + b * math.cos(knee)],
        [C_KNEE + b * math.cos(knee), C_KNEE + 0.0162],
    ]
    np.testing.assert_allclose(leg.mass_matrix((0.3, knee)), expected, rtol=1e-6)


def test_oracle_motor_space_inertia_by_hand():
    oracle = ParallelogramOracle(OracleCfg(body=HAND_BODY))
    # Crank 0.02 kg, r = 0.025 m; rod 0.02 kg, 0.1 m, parallel to the thigh, pinned r behind the shank:
    # M₁₁ = J̄₁ + thigh + m₂ l₁² + rod (l₁²/12 + l₁²/4) = 0.0162 + 5.054e-4 + 0.0061 + 6.6667e-5
    # M₁₂ = m₂ l₁ l_c2 − m_rod r l₁/2 = 0.0021 − 2.5e-5
    # M₂₂ = J̄₂ + c + crank r²/3 + m_rod r² = 0.0162 + 1.455183e-3 + 4.1667e-6 + 1.25e-5
    m11, m12, m22 = 0.02287207, 0.002075, 0.01767185
    alphas = np.array([-1.8, -1.2, -0.6])
    result = oracle.motor_space_inertia(alphas)
    for alpha, matrix in zip(alphas, result, strict=True):
        expected = [[m11, m12 * math.cos(alpha)], [m12 * math.cos(alpha), m22]]
        np.testing.assert_allclose(matrix, expected, rtol=1e-5, atol=1e-9)


def test_loop_closure_holds_under_pd_motion():
    oracle = ParallelogramOracle(OracleCfg(body=HAND_BODY))
    target = np.array([0.6, -0.6])
    oracle.reset(target)
    worst_gap, worst_branch = 0.0, 0.0
    for step in range(1500):
        time = step * oracle.cfg.timestep_s
        wiggle = np.array([0.3 * math.sin(2 * math.pi * 3.0 * time), 0.4 * math.sin(2 * math.pi * 5.0 * time)])
        torque = np.clip(50.0 * (target + wiggle - oracle.motor_pos) - 1.5 * oracle.motor_vel, -10.0, 10.0)
        oracle.step(torque)
        worst_gap = max(worst_gap, oracle.constraint_violation_m())
        worst_branch = max(worst_branch, oracle.branch_error_rad())
    assert np.abs(oracle.motor_vel).max() > 1.0  # it did move
    assert worst_gap < 1e-5  # 10 µm on a 100 mm rod
    assert worst_branch < 1e-3


def test_motor_angle_is_the_lower_link_absolute_angle():
    oracle = ParallelogramOracle(OracleCfg(body=HAND_BODY))
    oracle.reset((0.5, -0.4))
    for _ in range(200):
        oracle.step((0.5, -0.3))
    hip, knee = oracle.data.qpos[[0, 1]]
    assert oracle.motor_pos[1] == pytest.approx(hip + knee, abs=1e-5)
