"""The leg-odometry split by ticks down (linkage_lab_experiments.validation.estimator_touchdown)."""

from __future__ import annotations

import numpy as np
import pytest
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
    from linkage_lab_experiments.validation.estimator_touchdown import _recording, measure, plot

    bundle = tmp_path / "bundle"
    shutil.copytree(limit_bundle, bundle)
    write_estimator(bundle, limit_base_velocity_estimator(limit_config()), JOINT_NAMES)
    kwargs = {"sensor_noise": None, "io_options": {"base_velocity": "truth"}}
    plain = run_sim2sim(bundle, (0.0, 0.0), 0.4, **kwargs)
    ticks: list = []
    with _recording(ticks):
        recorded = run_sim2sim(bundle, (0.0, 0.0), 0.4, **kwargs)
    assert recorded["tracking"] == plain["tracking"]
    assert recorded["robot_side"]["base_velocity"] == plain["robot_side"]["base_velocity"]
    assert len(ticks) == plain["control_steps"]
    # Standing on four feet, every foot touches the floor, and the counted feet are the estimator's own.
    assert all(t["contact"].all() for t in ticks[5:])
    used = np.mean([t["counted"].sum() for t in ticks])
    assert used == pytest.approx(plain["robot_side"]["base_velocity"]["mean_feet_used"])
    document = measure(bundle, [0.0], 1.2)
    assert document["rows"][0]["falls"] == 0 and len(document["rows"][0]["touchdowns_per_s"]) == 4
    plot(document, tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 0
