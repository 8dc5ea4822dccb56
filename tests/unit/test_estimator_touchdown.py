"""The leg-odometry split by ticks down (linkage_lab_experiments.validation.estimator_touchdown)."""

from __future__ import annotations

import numpy as np
import pytest
from test_imu_average import _reading
from test_sim2sim_runner import limit_bundle  # noqa: F401 - the fixture: a Limit bundle, zero policy

pytestmark = pytest.mark.unit


def _tick(errors_x, counted, contact, truth_x=0.3):
    implied = np.zeros((len(errors_x), 3))
    implied[:, 0] = truth_x + np.asarray(errors_x)
    return {
        "implied_w": implied,
        "counted": np.asarray(counted, dtype=bool),
        "contact": np.asarray(contact, dtype=bool),
        "truth_w": np.array([truth_x, 0.0, 0.0]),
    }


def test_errors_are_grouped_by_ticks_down_and_the_touchdowns_counted():
    from linkage_lab_experiments.validation.estimator_touchdown import summarise

    # Foot 0 down two ticks, up two (a 12.5 Hz tap at 20 ms ticks): it skids 0.2 m/s on landing, then stands.
    # Foot 1 never touches; its implied velocity (a swinging foot) must not enter any group.
    ticks = []
    for _ in range(5):
        ticks += [_tick([0.2, -0.5], [1, 0], [1, 0]), _tick([0.0, -0.5], [1, 0], [1, 0])]
        ticks += [_tick([0.9, -0.5], [0, 0], [0, 0]), _tick([0.9, -0.5], [0, 0], [0, 0])]
    summary = summarise(ticks, 0.02)
    for name in ("stance_test", "model_contact"):
        first, second, third, more = summary["by_ticks_down"][name]
        assert first["mean_error_x_mps"] == pytest.approx(0.2) and first["share"] == pytest.approx(5 / 40)
        assert second["mean_error_x_mps"] == pytest.approx(0.0) and second["share"] == pytest.approx(5 / 40)
        assert third["mean_error_x_mps"] is None and more["share"] == 0.0
    assert summary["counted_error_x_mps"] == pytest.approx(0.1)
    # Five contacts of two ticks each in 20 ticks (0.4 s): 12.5 per second, 40 ms each.
    assert summary["touchdowns_per_s"] == pytest.approx([12.5, 0.0])
    assert summary["mean_contact_s"][0] == pytest.approx(0.04)


def test_recording_leaves_the_run_as_it_was(tmp_path, limit_bundle):  # noqa: F811
    import shutil

    from linkage_lab.deploy.base_velocity import write_estimator
    from linkage_lab.robots.limit.config import limit_config
    from linkage_lab.robots.limit.estimator import limit_base_velocity_estimator
    from linkage_lab.robots.limit.joints import JOINT_NAMES
    from linkage_lab.sim2sim.runner import run_sim2sim
    from linkage_lab_experiments.validation.estimator_touchdown import estimator_ticks, measure, plot

    bundle = tmp_path / "bundle"
    shutil.copytree(limit_bundle, bundle)
    write_estimator(bundle, limit_base_velocity_estimator(limit_config()), JOINT_NAMES)
    kwargs = {"sensor_noise": None, "io_options": {"base_velocity": "truth"}}
    plain = run_sim2sim(bundle, (0.0, 0.0), 0.4, **kwargs)
    ticks: list = []
    with estimator_ticks(ticks):
        recorded = run_sim2sim(bundle, (0.0, 0.0), 0.4, **kwargs)
    assert recorded["tracking"] == plain["tracking"]
    assert recorded["robot_side"]["base_velocity"] == plain["robot_side"]["base_velocity"]
    assert len(ticks) == plain["control_steps"]
    # Standing on four feet, every foot touches the floor and passes the contact rule (the feet the filter then
    # used, after its settling and gate, are a subset).
    assert all(t["contact"].all() and t["counted"].all() for t in ticks[5:])
    assert plain["robot_side"]["base_velocity"]["mean_feet_used"] <= np.mean([t["counted"].sum() for t in ticks])
    # Standing still, the upward forces the legs' torques imply carry the robot: at least its base (body and hip
    # motors), at most all of it (the legs' own weight partly reaches the floor without passing the joints).
    from linkage_lab.robots.limit.description import build_limit_model

    model = build_limit_model(limit_config())
    base_n = sum(solid.mass_kg for solid in model.links[0].solids) * 9.81
    held = np.array([t["ground_force_n"].sum() for t in ticks[10:]])
    assert np.all((held > base_n) & (held < model.total_mass() * 9.81)), (held, base_n)
    document = measure(bundle, [0.0], 1.2)
    assert document["rows"][0]["falls"] == 0 and len(document["rows"][0]["touchdowns_per_s"]) == 4
    plot(document, tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 0


def test_the_variants_run_each_remedy_on_and_off(tmp_path, limit_bundle):  # noqa: F811
    import json
    import shutil

    from linkage_lab.deploy.base_velocity import ESTIMATOR_FILE, write_estimator
    from linkage_lab.robots.limit.config import limit_config
    from linkage_lab.robots.limit.estimator import limit_base_velocity_estimator
    from linkage_lab.robots.limit.joints import JOINT_NAMES
    from linkage_lab.sim2sim import runner
    from linkage_lab.sim2sim.sensors import ImuAverage
    from linkage_lab_experiments.validation.estimator_touchdown import VARIANTS, _variant, compare, measure, plot

    bundle = tmp_path / "bundle"
    shutil.copytree(limit_bundle, bundle)
    write_estimator(bundle, limit_base_velocity_estimator(limit_config()), JOINT_NAMES)
    # A variant's bundle carries its settling; its runs read the IMU its way; the library is left as it was.
    with _variant(bundle, tmp_path, "v", 0, False) as copy:
        assert json.loads((copy / ESTIMATOR_FILE).read_text())["cfg"]["settle_updates"] == 0
        imu = runner.ImuAverage(10)
        imu.add(_reading([1.0, 0.0, 9.81]))
        np.testing.assert_allclose(imu.add(_reading([0.0, 0.0, 9.81])).accelerometer_b, [0.0, 0.0, 9.81])
    assert runner.ImuAverage is ImuAverage
    rows = compare(bundle, [0.0], 0.3, seeds=1)
    assert [(r["variant"], r["run"]) for r in rows] == [
        (name, run) for name, _, _ in VARIANTS for run in ("truth-fed, exact", "estimate-fed, noise")
    ]
    feet = {(r["settle_updates"], r["imu_period_mean"], r["run"]): r["mean_feet_used"] for r in rows}
    for (settle, mean, run), used in feet.items():
        if settle == 1:
            # Standing on exact sensors no foot lifts, so settling costs nothing after the first update; with the
            # sensors' noise the feet's readings come and go, and each return waits an update.
            at_once = feet[(0, mean, run)]
            assert used == pytest.approx(at_once) if run.endswith("exact") else used < at_once
    assert all(r["falls"] == 0 and np.isfinite(r["estimate_bias_x_mps"]) for r in rows)
    document = {**measure(bundle, [0.0], 1.2), "variants": rows}
    plot(document, tmp_path / "v.png")
    assert (tmp_path / "v.png").stat().st_size > 0
