"""The estimator comparison (linkage_lab_experiments.validation.estimator_sensors): its centre-only bundle and rows."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_sim2sim_runner import limit_bundle  # noqa: F401 - the fixture: a Limit bundle, zero policy

from linkage_lab.deploy.base_velocity import ESTIMATOR_FILE, load_estimator
from linkage_lab.robots.limit.joints import JOINT_NAMES

pytestmark = pytest.mark.unit


def test_the_centre_bundle_measures_every_foot_at_its_sole_point(tmp_path, limit_bundle):  # noqa: F811
    from linkage_lab.deploy.base_velocity import write_estimator
    from linkage_lab.robots.limit.config import limit_config
    from linkage_lab.robots.limit.estimator import limit_base_velocity_estimator
    from linkage_lab_experiments.validation.estimator_sensors import _centre_only, _height_band

    bundle = tmp_path / "bundle"
    bundle.mkdir()
    write_estimator(bundle, limit_base_velocity_estimator(limit_config()), JOINT_NAMES)
    corners, _ = load_estimator(bundle / ESTIMATOR_FILE)
    centre, _ = load_estimator(_centre_only(bundle, tmp_path) / ESTIMATOR_FILE)
    assert all(len(c.contact_points_m) == 4 for c in corners.chains)
    assert all(c.contact_points_m == () for c in centre.chains)
    assert [(c.joints, c.sole_point_m) for c in centre.chains] == [(c.joints, c.sole_point_m) for c in corners.chains]
    # A sole pitched nose-down: the corner estimator measures the toe, the centre one the plate's centre.
    q = np.tile([0.6, -1.2, 0.9], 4)  # the ankle 0.3 rad past flat
    down = np.array([0.0, 0.0, -1.0])
    toe, _ = corners.chains[0].foot_point(q, np.zeros(12), down)
    middle, _ = centre.chains[0].foot_point(q, np.zeros(12), down)
    assert toe[2] < middle[2] - 0.005
    assert json.loads((bundle / ESTIMATOR_FILE).read_text())["chains"][0]["contact_points_m"]  # the original kept
    # Both comparison estimators count a foot by its height alone; the bundle's own keeps its stance test.
    assert corners.cfg.stance_force_n > 0 and centre.cfg.stance_force_n == centre.cfg.standing_force_n == 0.0
    band, _ = load_estimator(_height_band(bundle, tmp_path) / ESTIMATOR_FILE)
    assert band.chains == corners.chains and band.cfg.stance_force_n == band.cfg.standing_force_n == 0.0


def test_the_runs_report_the_estimates_error_and_draw_a_picture(tmp_path, limit_bundle):  # noqa: F811
    import shutil

    from linkage_lab.deploy.base_velocity import write_estimator
    from linkage_lab.robots.limit.config import limit_config
    from linkage_lab.robots.limit.estimator import limit_base_velocity_estimator
    from linkage_lab_experiments.validation.estimator_sensors import measure, plot

    bundle = tmp_path / "bundle"
    shutil.copytree(limit_bundle, bundle)
    write_estimator(bundle, limit_base_velocity_estimator(limit_config()), JOINT_NAMES)
    document = measure(bundle, [0.0], 0.2, stance_force_n=15.0)
    assert [(r["foot"], r["sensors"]) for r in document["rows"]] == [
        ("corners, stance test", "exact"),
        ("corners, stance test", "robot noise"),
        ("corners, height band", "exact"),
        ("corners, height band", "robot noise"),
        ("centre, height band", "exact"),
        ("centre, height band", "robot noise"),
        ("corners, stance 15 N", "exact"),
        ("corners, stance 15 N", "robot noise"),
    ]
    assert all(np.isfinite(r["estimate_bias_x_mps"]) and r["falls"] == 0 for r in document["rows"])
    plot(document, tmp_path / "e.png")
    assert (tmp_path / "e.png").stat().st_size > 0
