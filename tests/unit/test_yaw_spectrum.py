"""The yaw-rate error split (linkage_lab_experiments.turn.yaw_spectrum) against signals with known parts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linkage_lab_experiments.turn.yaw_spectrum import BANDS_HZ, band_label, decompose, swing_bands, yaw_rate_reader

pytestmark = pytest.mark.unit

DT = 0.02


def test_a_sine_lands_in_its_band_with_amplitude_over_root_two():
    t = np.arange(1000) * DT
    bands = swing_bands(0.3 + 0.2 * np.sin(2 * math.pi * 8.0 * t), DT)
    assert bands[2] == pytest.approx(0.2 / math.sqrt(2), rel=1e-9)  # 8 Hz: the 6-12 Hz band
    assert bands[0] == pytest.approx(0.0, abs=1e-9)
    assert bands[1] == pytest.approx(0.0, abs=1e-9)
    assert bands[3] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("n", [999, 1000])
def test_bands_hold_the_whole_variance(n):
    rng = np.random.default_rng(3)
    x = rng.normal(0.25, 0.1, n)
    assert sum(b**2 for b in swing_bands(x, DT)) == pytest.approx(x.var(), rel=1e-9)


def test_rms_error_splits_into_bias_and_swing():
    t = np.arange(600) * DT
    envs = np.stack([0.26 + 0.1 * np.sin(2 * math.pi * 4.0 * t), 0.22 + 0.05 * np.sin(2 * math.pi * 15.0 * t)], 1)
    row = decompose(0.3, envs, DT, settle_steps=100)
    assert row["bias_radps"] == pytest.approx(0.3 - 0.24, abs=1e-9)
    # Per env: error² = (c - mean)² + var; pooled over equal-length envs.
    expected = math.sqrt((0.04**2 + 0.1**2 / 2 + 0.08**2 + 0.05**2 / 2) / 2)
    assert row["rms_error_radps"] == pytest.approx(expected, rel=1e-6)
    assert row["swing_radps"] == pytest.approx(math.sqrt((0.1**2 / 2 + 0.05**2 / 2) / 2), rel=1e-6)
    by_band = row["swing_by_band_radps"]
    assert len(by_band) == len(BANDS_HZ)
    assert by_band[1] == pytest.approx(0.1 / math.sqrt(2) / math.sqrt(2), rel=1e-6)  # 4 Hz, one env of two
    assert by_band[3] == pytest.approx(0.05 / math.sqrt(2) / math.sqrt(2), rel=1e-6)  # 15 Hz


def test_too_short_a_steady_part_is_an_error():
    with pytest.raises(ValueError, match="too few"):
        decompose(0.3, np.zeros((10, 2)), DT, settle_steps=5)


def test_the_turn_study_refuses_bad_pairs_and_durations_before_building_anything(capsys):
    from linkage_lab_experiments.turn.limit import _pair, main

    assert _pair("0.2,-0.2") == (0.2, -0.2)
    for text in ("0.2", "0.2,x", "0.2,0.1,0.3", "nan,0.1"):
        with pytest.raises(ValueError, match="VL,VR"):
            _pair(text)
    for argv in (["--pairs", "0.2,x"], ["--duration", "3"], ["--duration", "inf"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
    assert "--duration must be" in capsys.readouterr().err


def test_the_turn_study_plots_each_pairs_swing_by_band(tmp_path):
    from linkage_lab_experiments.turn.limit import _band_names, plot_rows

    names = _band_names(BANDS_HZ)
    assert names == ["0-3 Hz", "3-6 Hz", "6-12 Hz", ">12 Hz"]
    assert band_label(12.0, None) == ">12 Hz"  # the spectrum's JSON writes an open band's edge as null
    rows = [
        {
            "v_left_mps": v,
            "v_right_mps": -v,
            "yaw_rate_radps": -v,
            "yaw_swing_radps": 0.1,
            "yaw_swing_bands_radps": dict(zip(names, (0.05, 0.05, 0.05, 0.05), strict=True)),
        }
        for v in (0.1, 0.2)
    ]
    path = plot_rows(rows, tmp_path / "turn.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


class _Rates:
    """An articulation's data as the reader sees it: angular velocities behind a ``.torch`` view."""

    def __init__(self, base, world):
        self.root_ang_vel_b = type("View", (), {"torch": np.asarray(base, dtype=float)})()
        self.root_ang_vel_w = type("View", (), {"torch": np.asarray(world, dtype=float)})()


def test_the_reader_takes_the_z_of_the_frame_asked_for():
    data = _Rates(base=[[0.1, 0.2, 0.3], [0.0, 0.0, -0.3]], world=[[9.0, 9.0, 0.31], [9.0, 9.0, -0.29]])
    assert yaw_rate_reader("base")(data).tolist() == [0.3, -0.3]
    assert yaw_rate_reader("world")(data).tolist() == [0.31, -0.29]


def test_an_unknown_frame_is_refused():
    with pytest.raises(ValueError, match="frame must be one of"):
        yaw_rate_reader("heading")
