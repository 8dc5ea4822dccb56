"""The estimator-latency study's parsing and summary (linkage_lab_experiments.validation.estimator_latency)."""

from __future__ import annotations

import argparse

import pytest

from linkage_lab_experiments.validation.estimator_latency import main, summarize, variant

pytestmark = pytest.mark.unit


def test_a_variant_names_its_estimator_changes():
    assert variant("settled=settle_updates:1") == ("settled", {"settle_updates": 1})
    assert variant("fast=settle_updates:5,foot_noise_mps:0.25,estimator_rate:sample") == (
        "fast",
        {"settle_updates": 5, "foot_noise_mps": 0.25, "estimator_rate": "sample"},
    )
    assert variant("half=settling_noise_scale:2.5") == ("half", {"settling_noise_scale": 2.5})
    assert variant("strict=gate_fallback:false") == ("strict", {"gate_fallback": False})
    assert variant("old=gate_fallback:True") == ("old", {"gate_fallback": True})
    bad = (
        "x=gate_fallback:0",
        "settle_updates:1",
        "=settle_updates:1",
        "x=",
        "x=settle_updates:-1",
        "x=settle_updates:a",
        "x=settling_noise_scale:0.5",
        "x=settling_noise_scale:inf",
        "x=foot_noise_mps:0",
        "x=estimator_rate:often",
        "x=gate_chi2:3",
        "x=settle_updates:1,settle_updates:2",
        "x=settle_updates",
    )
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match="NAME=KEY:VALUE"):
            variant(text)


def _row(name: str, rms: float, bias: float, falls: int = 0) -> dict:
    return {"variant": name, "lin_vel_xy_rms_mps": rms, "estimate_bias_x_mps": bias, "falls": falls}


def test_the_summary_counts_each_variants_runs_over_the_target():
    rows = [_row("a", 0.06, -0.02), _row("a", 0.10, 0.04, falls=1), _row("b", 0.07, 0.01), _row("b", 0.08, -0.03)]
    a, b = summarize(rows, 0.08)
    assert a == {
        "variant": "a",
        "runs": 2,
        "mean_rms_mps": pytest.approx(0.08),
        "worst_rms_mps": 0.10,
        "runs_over_target": 1,
        "mean_abs_bias_x_mps": pytest.approx(0.03),
        "falls": 1,
    }
    assert b["runs_over_target"] == 0  # 0.08 is on the target, not over it
    assert b["mean_abs_bias_x_mps"] == pytest.approx(0.02)


@pytest.mark.parametrize(
    "argv",
    [
        ["--bundle", "b", "--delays-ms", "-4"],
        ["--bundle", "b", "--duration", "0"],
        ["--bundle", "b", "--variant", "x=settling_noise_scale:0.5"],
        ["--bundle", "b", "--commands", "nan"],
    ],
)
def test_the_cli_refuses_bad_arguments_before_running_anything(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert "error" in capsys.readouterr().err


def test_airborne_feet_counts_the_counted_feet_the_model_has_in_the_air():
    """Two feet over three ticks, by hand: the rule counts four feet, one of them (foot 1 at tick 2) in the air,
    implying the base 0.9 m/s slower than it is; the forces' medians are over the feet in the air and on the ground."""
    import numpy as np

    from linkage_lab_experiments.validation.estimator_latency import airborne_feet

    def tick(counted, contact, force, implied_x, truth_x=0.3):
        implied = np.zeros((2, 3))
        implied[:, 0] = implied_x
        return {
            "counted": np.array(counted),
            "contact": np.array(contact),
            "ground_force_n": np.array(force, dtype=float),
            "implied_w": implied,
            "truth_w": np.array([truth_x, 0.0, 0.0]),
        }

    ticks = [
        tick([True, True], [True, True], [40.0, 35.0], [0.3, 0.32]),
        tick([True, False], [True, False], [60.0, 2.0], [0.28, 1.5]),
        tick([False, True], [True, False], [50.0, 45.0], [0.3, -0.6]),
    ]
    result = airborne_feet(ticks)
    assert result["counted_feet"] == 4
    assert result["counted_in_air_share"] == 0.25
    assert result["force_in_air_median_n"] == 23.5  # the feet in the air held 2 and 45 N
    assert result["force_on_ground_median_n"] == 45.0  # 40, 35, 60, 50
    assert result["counted_in_air_error_x_mps"] == pytest.approx(-0.9)
    none = airborne_feet([tick([False, False], [True, True], [np.nan, np.nan], [0.3, 0.3])])
    assert none["counted_in_air_share"] is None and none["force_on_ground_median_n"] is None
