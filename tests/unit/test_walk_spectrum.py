"""The lin-vel error split (linkage_lab_experiments.analysis.walk_spectrum) against signals with known parts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linkage_lab_experiments.analysis.walk_spectrum import decompose_walk, main

pytestmark = pytest.mark.unit

DT = 0.02


def _two_envs() -> np.ndarray:
    """(T, 2, 2): env 0 walks 0.34 m/s swinging 0.1 at 4 Hz; env 1 0.22 m/s swinging 0.05 at 15 Hz, sideways 0.02
    at 8 Hz."""
    t = np.arange(600) * DT
    vx = np.stack([0.34 + 0.1 * np.sin(2 * math.pi * 4.0 * t), 0.22 + 0.05 * np.sin(2 * math.pi * 15.0 * t)], 1)
    vy = np.stack([np.zeros_like(t), 0.02 * np.sin(2 * math.pi * 8.0 * t)], 1)
    return np.stack([vx, vy], 2)


def test_rms_error_splits_into_bias_offsets_and_swing_per_axis():
    row = decompose_walk(0.3, _two_envs(), DT, settle_steps=100)
    x, y = row["axes"]["x"], row["axes"]["y"]
    # Errors' env means: 0.3 - 0.34 = -0.04 and 0.3 - 0.22 = +0.08; their mean +0.02, spread ±0.06.
    assert x["bias_mps"] == pytest.approx(0.02, abs=1e-9)
    assert x["offsets_mps"] == pytest.approx(0.06, abs=1e-9)
    assert x["swing_mps"] == pytest.approx(math.sqrt((0.1**2 / 2 + 0.05**2 / 2) / 2), rel=1e-6)
    assert x["swing_by_band_mps"][1] == pytest.approx(0.1 / 2, rel=1e-6)  # 4 Hz, one env of two
    assert x["swing_by_band_mps"][3] == pytest.approx(0.05 / 2, rel=1e-6)  # 15 Hz
    assert x["swing_by_band_mps"][0] == pytest.approx(0.0, abs=1e-9)
    assert y["bias_mps"] == pytest.approx(0.0, abs=1e-9)
    assert y["offsets_mps"] == pytest.approx(0.0, abs=1e-9)
    assert y["swing_by_band_mps"][2] == pytest.approx(0.02 / 2, rel=1e-6)  # 8 Hz
    # By hand: mean over envs of (offset² + amplitude²/2) per axis, the axes added.
    by_hand = math.sqrt(((0.04**2 + 0.1**2 / 2) + (0.08**2 + 0.05**2 / 2 + 0.02**2 / 2)) / 2)
    assert row["rms_error_mps"] == pytest.approx(by_hand, rel=1e-6)
    assert row["mean_forward_speed_mps"] == pytest.approx(0.28, abs=1e-9)


def test_the_parts_hold_the_whole_error_for_any_signal():
    rng = np.random.default_rng(7)
    velocity = rng.normal([0.3, 0.0], [0.08, 0.03], size=(501, 5, 2)) + rng.normal(0.0, 0.04, size=(1, 5, 2))
    row = decompose_walk(0.25, velocity, DT, settle_steps=20)
    parts = sum(
        part["bias_mps"] ** 2 + part["offsets_mps"] ** 2 + sum(b**2 for b in part["swing_by_band_mps"])
        for part in row["axes"].values()
    )
    assert row["rms_error_mps"] ** 2 == pytest.approx(parts, rel=1e-9)


def test_bad_shapes_and_too_short_a_steady_part_are_errors():
    with pytest.raises(ValueError, match="planar"):
        decompose_walk(0.3, np.zeros((100, 2)), DT, settle_steps=5)
    with pytest.raises(ValueError, match="too few"):
        decompose_walk(0.3, np.zeros((10, 2, 2)), DT, settle_steps=5)


@pytest.mark.parametrize("argv", [["--duration-s", "2", "--settle-s", "2"], ["--settle-s", "-1"], ["--speed", "nan"]])
def test_the_cli_refuses_bad_windows_before_building_anything(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert "error" in capsys.readouterr().err
