"""The base-velocity estimator against independent oracles: a second FK, finite differences, a planted leg."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linkage_lab.deploy.base_velocity import (
    BaseVelocityEstimator,
    ChainJoint,
    EstimatorCfg,
    LegChain,
    leg_chains,
)
from linkage_lab.description.model import Joint, Link, RobotModel
from linkage_lab.robots.limit.config import limit_config
from linkage_lab.robots.limit.description import build_limit_model
from linkage_lab.robots.limit.estimator import limit_base_velocity_estimator, limit_feet
from linkage_lab.robots.marvin.description import build_marvin_model
from linkage_lab.robots.marvin.estimator import marvin_base_velocity_estimator, marvin_feet
from linkage_lab.robots.marvin.gait import marvin_config
from linkage_lab.statics.tree import KinematicTree

pytestmark = pytest.mark.unit

AT_REST_F = np.array([0.0, 0.0, 9.81])  # an accelerometer at rest reads +g up


def _robots():
    limit, marvin = limit_config(), marvin_config()
    limit_model, marvin_model = build_limit_model(limit), build_marvin_model(marvin)
    return [
        (limit_model, limit_feet(limit), limit_model.actuated_joint_names()),
        (marvin_model, marvin_feet(marvin), marvin_model.actuated_joint_names()),
    ]


@pytest.mark.parametrize("robot", [0, 1], ids=["limit", "marvin"])
def test_foot_point_matches_the_description_tree_fk(robot):
    model, feet, names = _robots()[robot]
    tree = KinematicTree(model)
    rng = np.random.default_rng(robot)
    q = rng.uniform(-0.5, 0.5, len(names))
    frames = tree.forward_kinematics(dict(zip(names, q, strict=True)))
    for chain in leg_chains(model, feet, names):
        link, sole = feet[chain.name]
        expected = frames[link].position + frames[link].rotation @ np.asarray(sole)
        point, _ = chain.foot_point(q, np.zeros(len(names)))
        np.testing.assert_allclose(point, expected, atol=1e-12)


@pytest.mark.parametrize("robot", [0, 1], ids=["limit", "marvin"])
def test_foot_velocity_is_the_derivative_of_its_position(robot):
    model, feet, names = _robots()[robot]
    rng = np.random.default_rng(10 + robot)
    q, qd = rng.uniform(-0.5, 0.5, len(names)), rng.uniform(-3.0, 3.0, len(names))
    eps = 1e-6
    for chain in leg_chains(model, feet, names):
        _, velocity = chain.foot_point(q, qd)
        ahead, _ = chain.foot_point(q + eps * qd, qd)
        behind, _ = chain.foot_point(q - eps * qd, qd)
        np.testing.assert_allclose(velocity, (ahead - behind) / (2 * eps), atol=1e-7)


def _planar_leg(thigh: float, shank: float) -> LegChain:
    """A hip and a knee about +y, the sole at the shank's end (a 2-link planar leg)."""
    return LegChain(
        "leg",
        (ChainJoint(0, (0.0, 0.0, 0.0)), ChainJoint(1, (0.0, 0.0, -thigh))),
        (0.0, 0.0, -shank),
    )


def _planar_ik(x: float, z: float, thigh: float, shank: float) -> np.ndarray:
    """Hip and knee angles (rad, about +y) that put the sole at (x, z) below the hip (law of cosines)."""
    distance = math.hypot(x, z)
    knee = -(math.pi - math.acos((thigh**2 + shank**2 - distance**2) / (2 * thigh * shank)))
    # About +y a positive angle swings the leg's -z towards -x; the foot's direction from the hip:
    direction = math.atan2(-x, -z)
    hip = direction - math.atan2(shank * math.sin(knee), thigh + shank * math.cos(knee))
    return np.array([hip, knee])


def test_a_planted_leg_under_a_moving_base_gives_the_base_speed():
    """The base glides at 0.3 m/s over a foot fixed on the ground: the filter converges to 0.3 m/s."""
    thigh, shank, dt, speed = 0.1, 0.085, 0.02, 0.3
    estimator = BaseVelocityEstimator([_planar_leg(thigh, shank)], EstimatorCfg())
    foot_x0 = 0.09
    v_b = np.zeros(3)
    for k in range(30):
        t = k * dt
        x = foot_x0 - speed * t
        q = _planar_ik(x, -0.15, thigh, shank)
        qd = (_planar_ik(x - speed * 1e-6, -0.15, thigh, shank) - _planar_ik(x + speed * 1e-6, -0.15, thigh, shank)) / (
            2e-6
        )
        v_b = estimator.update(dt, q, qd, np.zeros(3), AT_REST_F, np.eye(3))
    np.testing.assert_allclose(v_b, [speed, 0.0, 0.0], atol=1e-6)


TOE, HEEL = (0.04, 0.0, -0.01), (-0.02, 0.0, -0.01)


def _rolling_leg(corners: bool) -> LegChain:
    """The planar leg with an ankle about +y at the shank's end and a flat sole from heel to toe under it."""
    joints = (ChainJoint(0, (0.0, 0.0, 0.0)), ChainJoint(1, (0.0, 0.0, -0.1)), ChainJoint(2, (0.0, 0.0, -0.085)))
    return LegChain("leg", joints, (0.01, 0.0, -0.01), (TOE, HEEL) if corners else ())


def _rolling_pose(t: float, speed: float, pitch_rate: float) -> np.ndarray:
    """Hip, knee, ankle (rad) at time ``t`` for a base gliding at ``speed`` along x over a sole pivoting nose-down
    about its toe, which stays at (0.11, 0, -0.17) in the world (base level, hip at the base origin)."""
    pitch = 0.05 + pitch_rate * t  # > 0: the toe is the sole's lowest point
    c, s = math.cos(pitch), math.sin(pitch)
    toe_in_foot = np.array([c * TOE[0] + s * TOE[2], -s * TOE[0] + c * TOE[2]])  # R_y(pitch) · toe, (x, z)
    ankle = np.array([0.11 - speed * t, -0.17]) - toe_in_foot
    hip, knee = _planar_ik(ankle[0], ankle[1], 0.1, 0.085)
    return np.array([hip, knee, pitch - hip - knee])


def test_a_sole_rolling_over_its_toe_is_measured_at_the_toe():
    """The base glides at 0.3 m/s while the planted sole pivots about its toe at 2 rad/s (toe fixed on the ground):
    measured at the lowest corner, the filter gives the base's speed; at the sole's centre, which moves with the
    roll, it would not."""
    dt, speed, rate, h = 0.02, 0.3, 2.0, 1e-6
    estimates = {}
    for corners in (True, False):
        estimator = BaseVelocityEstimator([_rolling_leg(corners)], EstimatorCfg())
        for k in range(16):
            t = k * dt
            q = _rolling_pose(t, speed, rate)
            qd = (_rolling_pose(t + h, speed, rate) - _rolling_pose(t - h, speed, rate)) / (2 * h)
            estimates[corners] = estimator.update(dt, q, qd, np.zeros(3), AT_REST_F, np.eye(3))
    np.testing.assert_allclose(estimates[True], [speed, 0.0, 0.0], atol=1e-6)
    # The centre lies 0.03 m behind the toe along the sole: it moves at 2 rad/s × 0.03 m relative to the toe.
    assert abs(estimates[False][0] - speed) > 0.03


def test_the_lowest_corner_is_the_planted_point_and_its_velocity_the_derivative():
    chain = _rolling_leg(corners=True)
    rng = np.random.default_rng(4)
    for _ in range(10):
        q, qd = rng.uniform(-0.6, 0.6, 3), rng.uniform(-3.0, 3.0, 3)
        down = np.array([0.0, 0.0, -1.0])
        point, velocity = chain.foot_point(q, qd, down)
        # The oracle: each corner as a chain's sole point (whose FK and velocity the tests above check), the lowest
        # wins.
        corners = [LegChain("c", chain.joints, corner).foot_point(q, qd) for corner in (TOE, HEEL)]
        lowest = min(corners, key=lambda pv: pv[0][2])
        np.testing.assert_allclose(point, lowest[0], atol=1e-12)
        np.testing.assert_allclose(velocity, lowest[1], atol=1e-12)


def test_the_planar_ik_oracle_puts_the_foot_where_asked():
    chain = _planar_leg(0.1, 0.085)
    point, _ = chain.foot_point(_planar_ik(0.04, -0.15, 0.1, 0.085), np.zeros(2))
    np.testing.assert_allclose(point, [0.04, 0.0, -0.15], atol=1e-12)


def test_a_yawing_base_over_a_planted_foot_is_not_a_translation():
    """Turning in place about the base origin moves a planted foot by ω × p in the base frame; the leg's
    relative velocity then cancels ``ω × p`` and the estimate stays at zero."""
    chain = LegChain("point", (ChainJoint(-1, (0.2, 0.1, -0.15)),), (0.0, 0.0, 0.0))
    estimator = BaseVelocityEstimator([chain])
    v_b = estimator.update(0.02, np.zeros(0), np.zeros(0), np.array([0.0, 0.0, 0.0]), AT_REST_F, np.eye(3))
    np.testing.assert_allclose(v_b, 0.0, atol=1e-12)
    # A rigid foot (no joints) on a base turning at 1 rad/s: the foot would move with the base, so the
    # base's point at the origin must move at -ω × p: (0.1, -0.2, 0) for p = (0.2, 0.1, ·).
    estimator.reset(sigma_mps=10.0)
    v_b = estimator.update(0.02, np.zeros(0), np.zeros(0), np.array([0.0, 0.0, 1.0]), AT_REST_F, np.eye(3))
    np.testing.assert_allclose(v_b[:2], [0.1, -0.2], atol=1e-3)


def test_a_swinging_foot_is_gated_out():
    """Two low feet: one planted, one swinging at 1 m/s relative to the base: the planted foot wins."""
    planted = LegChain("planted", (ChainJoint(-1, (0.1, 0.0, -0.15)),), (0.0, 0.0, 0.0))
    swinging = LegChain("swinging", (ChainJoint(0, (-0.1, 0.0, -0.05)),), (0.0, 0.0, -0.1))
    estimator = BaseVelocityEstimator([planted, swinging])
    for _ in range(50):
        v_b = estimator.update(0.02, np.zeros(1), np.zeros(1), np.zeros(3), AT_REST_F, np.eye(3))
    # The swinging foot's joint turns at 10 rad/s about +y, 0.1 m above its sole: 1 m/s at the sole.
    for _ in range(10):
        v_b = estimator.update(0.02, np.zeros(1), np.array([10.0]), np.zeros(3), AT_REST_F, np.eye(3))
        assert estimator.state.feet_used == 1
    np.testing.assert_allclose(v_b, 0.0, atol=1e-9)


def _one_fixed_foot_estimator(gate_fallback: bool) -> BaseVelocityEstimator:
    """One foot fixed under the base (no joints): it always says the base is at rest."""
    foot = LegChain("foot", (ChainJoint(-1, (0.1, 0.0, -0.15)),), (0.0, 0.0, 0.0))
    return BaseVelocityEstimator([foot], EstimatorCfg(gate_fallback=gate_fallback))


def test_with_the_fallback_a_foot_failing_the_gate_is_used_anyway():
    """The estimate is sure (σ 0.01 m/s) of 1 m/s and the only foot says 0: the gate refuses it
    (``1 / (P + σ_f²) = 87 > 11.34``) and the fallback takes it in at once, with the Kalman gain ``P / (P + σ_f²)``."""
    estimator = _one_fixed_foot_estimator(gate_fallback=True)
    estimator.reset([1.0, 0.0, 0.0], sigma_mps=0.01)
    estimator.update(0.02, np.zeros(0), np.zeros(0), np.zeros(3), AT_REST_F, np.eye(3))
    assert estimator.state.feet_used == 1
    p = 0.01**2 + estimator.cfg.accel_noise_mps2**2 * 0.02
    assert estimator.state.velocity_w[0] == pytest.approx(1.0 - p / (p + estimator.cfg.foot_noise_mps**2))


def test_without_the_fallback_a_gated_foot_waits_until_the_covariance_admits_it():
    """The same, without the fallback: the foot is left out (the estimate keeps 1 m/s) while the gate refuses it,
    and taken in on the first step the gate admits it. The gate admits ``y = 1`` once
    ``1 / (P + σ_f²) <= χ²``, with ``P = 0.01² + k σ_a² Δt`` after ``k`` steps of prediction: by hand,
    ``k >= (1 / 11.34 - 0.08² - 0.01²) / (0.5² · 0.02) = 16.3``, so the 17th step."""
    estimator = _one_fixed_foot_estimator(gate_fallback=False)
    estimator.reset([1.0, 0.0, 0.0], sigma_mps=0.01)
    cfg = estimator.cfg
    first_admitted = math.ceil((1 / cfg.gate_chi2 - cfg.foot_noise_mps**2 - 0.01**2) / (cfg.accel_noise_mps2**2 * 0.02))
    assert first_admitted == 17
    for step in range(1, first_admitted):
        estimator.update(0.02, np.zeros(0), np.zeros(0), np.zeros(3), AT_REST_F, np.eye(3))
        assert estimator.state.feet_used == 0, step
        assert estimator.state.velocity_w[0] == pytest.approx(1.0)
    estimator.update(0.02, np.zeros(0), np.zeros(0), np.zeros(3), AT_REST_F, np.eye(3))
    assert estimator.state.feet_used == 1
    p = 0.01**2 + first_admitted * cfg.accel_noise_mps2**2 * 0.02
    assert estimator.state.velocity_w[0] == pytest.approx(1.0 - p / (p + cfg.foot_noise_mps**2))


def test_an_estimator_file_without_the_fallback_setting_keeps_the_fallback(tmp_path):
    """Bundles written before the setting existed run as they did."""
    import json

    from linkage_lab.deploy.base_velocity import load_estimator, write_estimator

    estimator = _one_fixed_foot_estimator(gate_fallback=False)
    path = write_estimator(tmp_path, estimator, [])
    assert load_estimator(path)[0].cfg.gate_fallback is False
    document = json.loads(path.read_text())
    del document["cfg"]["gate_fallback"]
    path.write_text(json.dumps(document))
    assert load_estimator(path)[0].cfg.gate_fallback is True


def test_a_non_finite_reading_is_refused_and_the_state_kept():
    estimator = BaseVelocityEstimator([_planar_leg(0.1, 0.085)])
    estimator.reset([0.2, 0.0, 0.0], sigma_mps=0.1)
    before = estimator.state.velocity_w.copy()
    with pytest.raises(ValueError, match="non-finite"):
        estimator.update(0.02, np.array([0.1, np.nan]), np.zeros(2), np.zeros(3), AT_REST_F, np.eye(3))
    np.testing.assert_array_equal(estimator.state.velocity_w, before)


def test_leg_chains_refuse_a_joint_outside_the_joint_vector_and_a_loose_foot():
    model = RobotModel(
        "toy",
        [Link("base"), Link("leg")],
        [Joint("hip", "revolute", "base", "leg", (0.0, 0.0, 0.0))],
    )
    with pytest.raises(ValueError, match="not in the joint vector"):
        leg_chains(model, {"foot": ("leg", (0.0, 0.0, -0.1))}, ["knee"])
    with pytest.raises(ValueError, match="not connected to the base"):
        leg_chains(model, {"foot": ("toe", (0.0, 0.0, 0.0))}, ["hip"])


def test_the_robots_estimators_stand_still_at_their_standing_pose():
    """Standing, joints still, IMU at rest: each robot's estimate is zero (every foot agrees)."""
    limit = limit_config()
    pose = limit.control.standing_pose_rad
    q = np.array([pose[j] for _ in range(4) for j in ("hip", "knee", "ankle")])
    estimator = limit_base_velocity_estimator(limit)
    v_b = estimator.update(0.02, q, np.zeros(12), np.zeros(3), AT_REST_F, np.eye(3))
    np.testing.assert_allclose(v_b, 0.0, atol=1e-12)
    assert estimator.state.feet_used == 4
    marvin = marvin_config()
    names = build_marvin_model(marvin).actuated_joint_names()
    estimator = marvin_base_velocity_estimator(marvin, names)
    v_b = estimator.update(0.02, np.zeros(len(names)), np.zeros(len(names)), np.zeros(3), AT_REST_F, np.eye(3))
    np.testing.assert_allclose(v_b, 0.0, atol=1e-12)
    assert estimator.state.feet_used == 2


def test_the_bundle_file_round_trips_the_estimator(tmp_path):
    """Written and read back, the estimator gives the same estimates on the same readings."""
    from linkage_lab.deploy.base_velocity import load_estimator, write_estimator
    from linkage_lab.robots.limit.joints import JOINT_NAMES

    original = limit_base_velocity_estimator(limit_config())
    path = write_estimator(tmp_path, original, JOINT_NAMES)
    loaded, order = load_estimator(path)
    assert order == list(JOINT_NAMES) and loaded.cfg == original.cfg and loaded.chains == original.chains
    assert all(len(chain.contact_points_m) == 4 for chain in loaded.chains)  # the Limit's sole corners
    rng = np.random.default_rng(3)
    for _ in range(20):
        q, qd = rng.uniform(-0.5, 0.5, 12), rng.uniform(-2, 2, 12)
        gyro, accel = rng.normal(0, 0.3, 3), AT_REST_F + rng.normal(0, 0.5, 3)
        expected = original.update(0.02, q, qd, gyro, accel, np.eye(3))
        np.testing.assert_allclose(loaded.update(0.02, q, qd, gyro, accel, np.eye(3)), expected, atol=1e-12)


def test_a_corrupt_estimator_file_is_a_clear_error(tmp_path):
    from linkage_lab.deploy.base_velocity import load_estimator

    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="cannot read the base-velocity estimator"):
        load_estimator(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="not a base-velocity estimator document"):
        load_estimator(tmp_path / "other.json")
    (tmp_path / "broken.json").write_text('{"format": "linkage_lab/base_velocity", "chains": []}')
    with pytest.raises(ValueError, match="malformed"):
        load_estimator(tmp_path / "broken.json")


def test_training_velocity_error_has_the_bias_and_noise_it_is_given():
    """Per env a uniform bias in ±bias for the whole episode, redrawn at its reset only; Gaussian noise per call."""
    import torch

    from linkage_lab.tasks.velocity.estimate import VelocityError

    torch.manual_seed(0)
    error = VelocityError(4000, (0.05, 0.02, 0.0), (0.06, 0.0, 0.1), "cpu")
    bias = error.bias.clone()
    assert torch.all(bias.abs() <= torch.tensor([0.05, 0.02, 0.0]))
    # Uniform on ±b: standard deviation b / √3.
    torch.testing.assert_close(bias.std(dim=0), torch.tensor([0.05, 0.02, 0.0]) / 3**0.5, atol=2e-3, rtol=0.0)
    truth = torch.full((4000, 3), 0.3)
    samples = torch.stack([error(truth) - truth - bias for _ in range(50)])
    torch.testing.assert_close(samples.std(dim=(0, 1)), torch.tensor([0.06, 0.0, 0.1]), atol=2e-3, rtol=0.0)
    error.reset([0, 1])
    assert not torch.equal(error.bias[:2], bias[:2]) and torch.equal(error.bias[2:], bias[2:])
    with pytest.raises(ValueError, match="one value per base axis"):
        VelocityError(2, (0.1, 0.1), (0.1, 0.1, 0.1), "cpu")
    with pytest.raises(ValueError, match="non-negative"):
        VelocityError(2, (0.1, -0.1, 0.1), (0.1, 0.1, 0.1), "cpu")


def _point_jacobian(chain: LegChain, q: np.ndarray, down: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """The planted point's Jacobian over every joint of ``q`` by central differences of its position (the oracle)."""
    still = np.zeros(len(q))
    return np.column_stack(
        [
            (chain.foot_point(q + h * e, still, down)[0] - chain.foot_point(q - h * e, still, down)[0]) / (2 * h)
            for e in np.eye(len(q))
        ]
    )


def test_the_ground_force_is_what_the_leg_torques_hold():
    """Torques ``τ = −Jᵀ F`` from a known force through a finite-difference Jacobian: the force comes back (the
    planar leg holds no force along its joints' common axis, so F has none)."""
    chain = _rolling_leg(corners=True)
    rng = np.random.default_rng(5)
    down = np.array([0.0, 0.0, -1.0])
    for _ in range(5):
        q = _rolling_pose(0.0, 0.3, 2.0) + rng.uniform(-0.1, 0.1, 3)
        force = np.array([rng.uniform(-20, 20), 0.0, rng.uniform(10, 60)])
        jacobian = _point_jacobian(chain, q, down)
        np.testing.assert_allclose(chain.ground_force(q, -jacobian.T @ force, down), force, atol=1e-5)


def test_a_low_foot_without_load_is_not_planted_when_torques_are_given():
    """Two feet at the same height, one loaded (its leg holds 40 N up), one swinging at about 1 m/s with no torque: with
    the stance force set, only the loaded foot is measured; without torques both are candidates."""
    loaded = _rolling_leg(corners=False)
    swinging = LegChain(
        "swing", tuple(ChainJoint(j.index + 3, j.origin_m, j.axis) for j in loaded.joints), (0.01, 0.0, -0.01)
    )
    q = np.tile(_rolling_pose(0.0, 0.3, 0.0), 2)
    qd = np.zeros(6)
    qd[3] = 5.0  # the swinging hip
    down = np.array([0.0, 0.0, -1.0])
    jacobian = _point_jacobian(loaded, q, down)[:, :3]
    torque = np.zeros(6)
    torque[:3] = -jacobian.T @ np.array([0.0, 0.0, 40.0])
    cfg = EstimatorCfg(stance_force_n=15.0)
    estimator = BaseVelocityEstimator([loaded, swinging], cfg)
    with_load = estimator._foot_measurements(q, qd, np.zeros(3), np.eye(3), torque)[0]
    height_only = estimator._foot_measurements(q, qd, np.zeros(3), np.eye(3))[0]
    assert len(with_load) == 1 and len(height_only) == 2
    np.testing.assert_allclose(with_load[0], 0.0, atol=1e-12)  # the loaded foot is still: the base is still


def _limit_standing_torques(estimator: BaseVelocityEstimator, q: np.ndarray, up_n: float) -> np.ndarray:
    """The joint torques with which each of the Limit's legs holds ``up_n`` newtons up at its planted point
    (``τ = −Jᵀ F`` through the finite-difference Jacobian, the legs' own weight left out)."""
    down = np.array([0.0, 0.0, -1.0])
    torque = np.zeros(len(q))
    for chain in estimator.chains:
        torque -= _point_jacobian(chain, q, down).T @ np.array([0.0, 0.0, up_n])
    return torque


def test_the_limits_stance_test_is_its_weight_shared_as_it_trots_and_as_it_stands():
    """The Limit's stance thresholds are shares of its weight (9.58 kg from its description: 0.4 and 0.15 of
    94.0 N), and a static stand, each foot holding a quarter of the weight (23.5 N, under the 37.6 N a trotting
    foot holds), keeps all four feet; the same legs holding 15 N each between them (a flight phase's swing) keep
    none."""
    from linkage_lab.robots.limit.estimator import limit_estimator_cfg

    limit = limit_config()
    weight_n = 9.58 * 9.81
    assert build_limit_model(limit).total_mass() == pytest.approx(9.58)
    cfg = limit_estimator_cfg(limit)
    assert cfg.stance_force_n == pytest.approx(0.4 * weight_n, abs=0.05)
    assert cfg.standing_force_n == pytest.approx(0.15 * weight_n, abs=0.05)
    pose = limit.control.standing_pose_rad
    q = np.array([pose[j] for _ in range(4) for j in ("hip", "knee", "ankle")])
    estimator = limit_base_velocity_estimator(limit)
    standing = _limit_standing_torques(estimator, q, weight_n / 4)
    assert len(estimator._foot_measurements(q, np.zeros(12), np.zeros(3), np.eye(3), standing)[0]) == 4
    trotting = standing.copy()
    trotting[3:9] = 0.0  # fr and rl unloaded; fl and rr hold 23.5 N each, under the stance force
    assert len(estimator._foot_measurements(q, np.zeros(12), np.zeros(3), np.eye(3), trotting * 2)[0]) == 2
    swinging = _limit_standing_torques(estimator, q, 15.0)
    swinging[3:9] = 0.0  # two legs at 15 N: 30 N between them, under one trotting foot's 37.6 N
    assert not estimator._foot_measurements(q, np.zeros(12), np.zeros(3), np.eye(3), swinging)[0]
    # The stance test alone (no standing share) would leave a static stand to the accelerometer.
    alone = BaseVelocityEstimator(estimator.chains, EstimatorCfg(stance_force_n=cfg.stance_force_n))
    assert not alone._foot_measurements(q, np.zeros(12), np.zeros(3), np.eye(3), standing)[0]


def _two_feet() -> list[LegChain]:
    """Two one-joint legs (hip about y at the base's origin, sole 0.2 m below): a hip rate ``q̇`` moves the sole by
    ``y × (0, 0, −0.2) q̇ = (−0.2 q̇, 0, 0)`` relative to the base, so a planted sole implies a base velocity of
    ``+0.2 q̇`` along x; a hip at 0.6 rad lifts its sole 35 mm, out of the 15 mm contact band."""
    return [LegChain(name, (ChainJoint(k, (0.0, 0.0, 0.0)),), (0.0, 0.0, -0.2)) for k, name in enumerate("ab")]


def test_a_landing_foot_counts_only_once_it_has_settled():
    """With ``settle_updates=1`` a foot's first update on the ground is left out (a landing skid does not reach the
    estimate) and a foot that lifts starts again; with 0 the same skid moves the estimate."""
    still, lifted = np.zeros(2), np.array([0.0, 0.6])
    skid = np.array([0.0, 0.5])  # foot b lands with its hip still turning: it implies +0.1 m/s, the base is still
    # The first update after a reset takes both feet (the estimate knows nothing yet); from then on a foot settles.
    steps = [(still, np.zeros(2), 2), (still, np.zeros(2), 2), (lifted, np.zeros(2), 1), (still, skid, 1)]
    settled = BaseVelocityEstimator(_two_feet(), EstimatorCfg(use_accelerometer=False, settle_updates=1))
    for q, qd, used in steps:
        v_b = settled.update(0.02, q, qd, np.zeros(3), AT_REST_F, np.eye(3))
        assert settled.state.feet_used == used
    np.testing.assert_allclose(v_b, 0.0, atol=1e-12)
    assert list(settled.state.planted_updates) == [4, 1]
    # The next update foot b is still down: it counts (and, still now, agrees).
    settled.update(0.02, still, np.zeros(2), np.zeros(3), AT_REST_F, np.eye(3))
    assert settled.state.feet_used == 2
    at_once = BaseVelocityEstimator(_two_feet(), EstimatorCfg(use_accelerometer=False))
    for q, qd, _ in steps:
        v_b = at_once.update(0.02, q, qd, np.zeros(3), AT_REST_F, np.eye(3))
    assert at_once.state.feet_used == 2 and v_b[0] > 0.01  # the skid pulled the estimate forward
    # A reset forgets the feet and the first measurement: both count at once again, then settle after a lift.
    settled.reset()
    settled.update(0.02, still, np.zeros(2), np.zeros(3), AT_REST_F, np.eye(3))
    assert settled.state.feet_used == 2 and settled.state.measured
    settled.update(0.02, lifted, np.zeros(2), np.zeros(3), AT_REST_F, np.eye(3))
    settled.update(0.02, still, np.zeros(2), np.zeros(3), AT_REST_F, np.eye(3))
    assert settled.state.feet_used == 1
    for bad in (-1, 0.5):
        with pytest.raises(ValueError, match="settle_updates"):
            BaseVelocityEstimator(_two_feet(), EstimatorCfg(settle_updates=bad))


def test_a_settling_foot_counts_with_its_noise_scaled():
    """With ``settling_noise_scale`` s a landing foot's measurement is fused with its noise s times larger: on the x
    axis (the covariance stays isotropic) the update is the scalar Kalman filter's, foot a (settled, σ) then foot b
    (landing with a skid that implies +0.1 m/s, σ s). s = 1 is settle_updates 0; no scale leaves it out."""
    still, lifted, skid = np.zeros(2), np.array([0.0, 0.6]), np.array([0.0, 0.5])
    dt, scale = 0.02, 3.0

    def run(cfg: EstimatorCfg) -> tuple[float, float]:
        estimator = BaseVelocityEstimator(_two_feet(), cfg)
        for q in (still, still, lifted):
            estimator.update(dt, q, np.zeros(2), np.zeros(3), AT_REST_F, np.eye(3))
        prior = float(estimator.state.covariance[0, 0]) + cfg.accel_noise_mps2**2 * dt
        v_b = estimator.update(dt, still, skid, np.zeros(3), AT_REST_F, np.eye(3))
        assert estimator.state.feet_used == (1 if cfg.settling_noise_scale is None and cfg.settle_updates else 2)
        return float(v_b[0]), prior

    base = {"use_accelerometer": False, "settle_updates": 1}
    v, p = run(EstimatorCfg(**base, settling_noise_scale=scale))
    sigma2 = EstimatorCfg().foot_noise_mps ** 2
    p_after_a = p - p * p / (p + sigma2)  # foot a implies 0 and the estimate is 0: only P shrinks
    expected = p_after_a / (p_after_a + sigma2 * scale**2) * 0.1
    assert v == pytest.approx(expected, rel=1e-9)
    assert 0.0 < expected < 0.1 * p_after_a / (p_after_a + sigma2)  # less than the same skid at full weight
    v_full, _ = run(EstimatorCfg(**base, settling_noise_scale=1.0))
    v_at_once, _ = run(EstimatorCfg(use_accelerometer=False))
    assert v_full == pytest.approx(v_at_once, rel=1e-12)
    v_left_out, _ = run(EstimatorCfg(**base))
    assert v_left_out == pytest.approx(0.0, abs=1e-12)
    for bad in (0.5, math.inf, math.nan):
        with pytest.raises(ValueError, match="settling_noise_scale"):
            BaseVelocityEstimator(_two_feet(), EstimatorCfg(settling_noise_scale=bad))
