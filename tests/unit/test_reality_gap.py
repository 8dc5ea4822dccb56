"""The reality-gap sweep's pieces: physics stress on the closed chain, the estimator in sim2sim, the document."""

from __future__ import annotations

import json
import shutil

import mujoco
import numpy as np
import pytest
from test_sim2sim_runner import limit_bundle  # noqa: F401 (a fixture)

from linkage_lab.robots.registry import get_robot
from linkage_lab.sim2sim.reality_gap import format_reality_gap, run_reality_gap, write_reality_gap
from linkage_lab.sim2sim.runner import run_sim2sim
from linkage_lab.sim2sim.stress import STRESS_SET, PhysicsStress, StressCondition

pytestmark = pytest.mark.unit


def test_a_stress_scales_the_motor_rotors_and_sets_the_floor_friction():
    chain = get_robot("limit").closed_chain()
    nominal = chain.compile()
    stressed = chain.compile()
    dofs = chain.bind(stressed).motor_dof
    PhysicsStress(armature_scale=1.2, ground_friction=0.5, contact_solref=(0.01, 1.375)).apply(stressed, dofs)
    np.testing.assert_allclose(stressed.dof_armature[dofs], 1.2 * nominal.dof_armature[dofs])
    others = np.setdiff1d(np.arange(nominal.nv), dofs)
    np.testing.assert_array_equal(stressed.dof_armature[others], nominal.dof_armature[others])
    assert np.all(stressed.geom_friction[:, 0] == 0.5)
    assert np.all(nominal.geom_solref == [0.02, 1.0]) and np.all(stressed.geom_solref == [0.01, 1.375])
    np.testing.assert_array_equal(stressed.eq_solref, nominal.eq_solref)  # the loop closures keep theirs


def test_motor_strength_scales_the_torque_after_the_limits():
    """A motor 20 % weak applies 0.8 × what its driver clamps to: 0.8 × 3 N·m below the limit, 0.8 × the peak above."""
    chain = get_robot("limit").closed_chain()
    model = chain.compile()
    data = mujoco.MjData(model)
    peaks = np.array([m.peak_torque_nm for m in chain.motors])
    demand = np.where(np.arange(len(peaks)) % 2 == 0, 3.0, 1e3)
    applied = chain.apply_motor_torque(data, demand, strength=0.8)
    np.testing.assert_allclose(applied, 0.8 * np.minimum(demand, peaks))
    np.testing.assert_allclose(data.ctrl[chain.bind(model).actuators], applied)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_a_stress_refuses_non_positive_or_non_finite_values(bad):
    with pytest.raises(ValueError, match="positive finite"):
        PhysicsStress(motor_strength=bad)
    with pytest.raises(ValueError, match="positive finite"):
        PhysicsStress(ground_friction=bad)
    with pytest.raises(ValueError, match="positive finite"):
        PhysicsStress(contact_solref=(bad, 1.0))


def test_the_stress_set_covers_the_hardware_gaps():
    names = [c.name for c in STRESS_SET]
    assert len(set(names)) == len(names)
    delays = {c.name: sum(c.delays_s) for c in STRESS_SET}
    assert delays["delay_20ms"] == pytest.approx(0.02) and delays["delay_40ms"] == pytest.approx(0.04)
    strengths = sorted(c.physics.motor_strength for c in STRESS_SET)
    assert strengths[0] == 0.8 and strengths[-1] == 1.2
    assert 0.5 in {c.physics.ground_friction for c in STRESS_SET}


def test_sim2sim_gives_the_policy_the_estimate_and_reports_its_error(limit_bundle):  # noqa: F811
    """Standing still (zero policy), the estimator's error against the truth is small; truth mode reports it too.
    With exact sensors the estimator measures all four feet, each holding its share of the weight (the standing rule
    of its stance test); with the sensors' noise, the attitude's tilts move feet in and out of its height band."""
    estimate = run_sim2sim(limit_bundle, (0.0, 0.0), 1.0)
    velocity = estimate["robot_side"]["base_velocity"]
    assert velocity["mode"] == "estimate" and velocity["ticks"] == 50
    assert max(abs(v) for v in velocity["estimate_rms_mps"].values()) < 0.05
    exact = run_sim2sim(limit_bundle, (0.0, 0.0), 1.0, sensor_noise=None)["robot_side"]["base_velocity"]
    assert max(abs(v) for v in exact["estimate_rms_mps"].values()) < 0.05
    assert exact["mean_feet_used"] >= 3.9  # every tick but the first, which has no torque reading yet
    truth = run_sim2sim(limit_bundle, (0.0, 0.0), 1.0, io_options={"base_velocity": "truth"})
    assert truth["robot_side"]["base_velocity"]["mode"] == "truth"
    assert estimate["physics_stress"] == {
        "motor_strength": 1.0,
        "armature_scale": 1.0,
        "ground_friction": None,
        "contact_solref": None,
    }


def test_an_unknown_velocity_mode_is_refused(limit_bundle):  # noqa: F811
    from linkage_lab.sim2sim.bundle import BundleError

    with pytest.raises(BundleError, match="unknown base_velocity 'odometry'"):
        run_sim2sim(limit_bundle, (0.0, 0.0), 0.1, io_options={"base_velocity": "odometry"})


def test_the_reality_gap_document_table_and_plot(limit_bundle, tmp_path):  # noqa: F811
    """Two conditions, one short run per command: one row per condition and command, judged by the closed-chain
    targets; a weak, slow, slippery robot standing on a zero policy still does not fall in 1 s."""
    conditions = (
        StressCondition("nominal", "nominal"),
        StressCondition("weak", "weak", (0.02, 0.02), PhysicsStress(0.8, 1.2, 0.5)),
    )
    bundle = tmp_path / "bundle"
    shutil.copytree(limit_bundle, bundle)
    metadata = json.loads((bundle / "metadata.json").read_text())
    (bundle / "metadata.json").write_text(json.dumps({**metadata, "task": "LinkageLab-Velocity-Flat-Limit"}))
    rows = []
    document = run_reality_gap(
        bundle, conditions, episodes=1, duration_s=1.0, on_row=lambda name, row: rows.append(name)
    )
    cases = 6  # the Limit's acceptance cases (the bundle names its task)
    assert len(document["rows"]) == 2 * cases and rows == ["nominal"] * cases + ["weak"] * cases
    assert document["targets"]["lin_vel_rms_mps"] == 0.08  # the closed-chain marks, not Isaac Lab's 0.06
    assert document["summary"]["runs"] == 2 * cases and document["summary"]["falls"] == 0
    # A zero policy does not turn: every turning row misses its yaw target, so the verdict is a miss.
    turning = [row for row in document["rows"] if row["command"]["ang_vel_z_radps"] != 0.0]
    assert turning and all("yaw_rate_rms_radps" in row["failed_checks"] for row in turning)
    assert document["summary"]["passed"] is False
    assert document["sensor_noise"]["gyro_noise_radps"] == get_robot("limit").config().sensors.gyro_noise_radps
    out = tmp_path / "out"
    path = write_reality_gap(out, document)
    table = (out / "reality_gap.md").read_text()
    assert path.is_file() and (out / "reality_gap.png").stat().st_size > 0
    assert table.count("\n| weak |") == cases and "miss: yaw_rate_rms_radps" in table
    assert format_reality_gap(document) == table
