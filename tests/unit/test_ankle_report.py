"""``linkage-lab ankle report``: JSON schema, text, errors and pictures (docs/design/ankle_linkage.md §7)."""

from __future__ import annotations

import json
import math

import matplotlib.figure  # noqa: F401  (imported at collection, not inside a timed test)
import numpy as np
import pytest

from linkage_lab.cli.main import main
from linkage_lab.evaluation import ankle_plots
from linkage_lab.kinematics import ankle_report
from linkage_lab.robots.ankles import load_ankle_geometry

pytestmark = pytest.mark.unit

CAPACITY_KEYS = {"pitch_peak", "pitch_rated", "roll_peak", "roll_rated"}


def _report_json(capsys, *args: str) -> dict:
    assert main(["ankle", "report", "--json", *args]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # exactly one JSON object on one line
    return json.loads(out)


def _is_number(value) -> bool:
    return isinstance(value, float | int) and not isinstance(value, bool) and math.isfinite(value)


def test_json_schema(capsys):
    report = _report_json(capsys)
    assert set(report) == {
        "preset",
        "motor",
        "rod_length_mm",
        "crank_swing_deg",
        "worst_transmission",
        "transmission_rule_ok",
        "neutral_jacobian",
        "neutral_ratio",
        "worst_axis_capacity_nm",
        "worst_pure_capacity_nm",
        "max_rod_force",
    }
    assert report["preset"] == "marvin"
    assert report["motor"] == {"name": "RS03", "peak_nm": 60.0, "rated_nm": 20.0}
    assert set(report["rod_length_mm"]) == {"a", "b"} and all(map(_is_number, report["rod_length_mm"].values()))
    assert set(report["crank_swing_deg"]) == {"min", "max"}
    worst = report["worst_transmission"]
    assert set(worst) == {"value", "motor", "pitch_deg", "roll_deg"} and worst["motor"] in ("a", "b")
    assert isinstance(report["transmission_rule_ok"], bool)
    jac = report["neutral_jacobian"]
    assert len(jac) == 2 and all(len(row) == 2 and all(map(_is_number, row)) for row in jac)
    assert set(report["neutral_ratio"]) == {"pitch", "roll"}
    for key in ("worst_axis_capacity_nm", "worst_pure_capacity_nm"):
        assert set(report[key]) == CAPACITY_KEYS and all(map(_is_number, report[key].values()))
    force = report["max_rod_force"]
    assert set(force) == {"value_n", "motor", "pitch_deg", "roll_deg", "demand_nm"} and force["motor"] in (
        "a",
        "b",
    )
    assert len(force["demand_nm"]) == 2


def test_json_values_against_hand_numbers(capsys):
    report = _report_json(capsys)
    # Rod lengths from §1 by hand: C(π) = M + (−0.06, 0, 0); L = ‖C − A0‖.
    assert report["rod_length_mm"]["a"] == pytest.approx(1000 * math.sqrt(0.01**2 + 0.001**2 + 0.09**2))
    assert report["rod_length_mm"]["b"] == pytest.approx(1000 * math.sqrt(0.04**2 + 0.001**2 + 0.19**2))
    # The spec's sanity J (2 decimals) and its ratios.
    assert sum(report["neutral_jacobian"], []) == pytest.approx([1.02, -0.67, 0.96, 0.67], abs=0.006)
    assert report["neutral_ratio"]["pitch"] == pytest.approx(0.99, abs=0.006)
    assert report["neutral_ratio"]["roll"] == pytest.approx(0.67, abs=0.006)
    assert report["transmission_rule_ok"] == (report["worst_transmission"]["value"] >= 0.5)
    swing = report["crank_swing_deg"]
    assert swing["min"] < 0 < swing["max"]
    for key in ("worst_axis_capacity_nm", "worst_pure_capacity_nm"):
        cap = report[key]
        assert cap["pitch_peak"] == pytest.approx(3 * cap["pitch_rated"])  # 60 / 20 N·m
        assert cap["roll_peak"] == pytest.approx(3 * cap["roll_rated"])
    # Worst-pose capacities sit below the box (2 T ratio), pure-axis below axis capacity.
    axis, pure = report["worst_axis_capacity_nm"], report["worst_pure_capacity_nm"]
    assert pure["pitch_peak"] <= axis["pitch_peak"] <= 2 * 60 * report["neutral_ratio"]["pitch"] + 1e-9
    assert pure["roll_peak"] <= axis["roll_peak"] <= 2 * 60 * report["neutral_ratio"]["roll"] + 1e-9
    force = report["max_rod_force"]
    assert [abs(v) for v in force["demand_nm"]] == [60.0, 30.0]
    for pose in (report["worst_transmission"], force):  # grid poses: whole degrees inside ±40° / ±20°
        assert abs(pose["pitch_deg"]) <= 40.0 + 1e-9 and abs(pose["roll_deg"]) <= 20.0 + 1e-9


def test_options_change_motor_and_demand(capsys):
    rs06 = _report_json(capsys, "--motor", "rs06")
    assert rs06["motor"] == {"name": "RS06", "peak_nm": 36.0, "rated_nm": 11.0}
    base = _report_json(capsys)
    assert rs06["worst_axis_capacity_nm"]["pitch_peak"] == pytest.approx(
        base["worst_axis_capacity_nm"]["pitch_peak"] * 36 / 60
    )
    doubled = _report_json(capsys, "--demand", "120", "60")
    assert doubled["max_rod_force"]["value_n"] == pytest.approx(2 * base["max_rod_force"]["value_n"])
    calf = _report_json(capsys, "--preset", "calf")
    assert calf["preset"] == "calf" and calf["neutral_jacobian"][0] == base["neutral_jacobian"][0]


def test_text_report_is_a_table(capsys):
    assert main(["ankle", "report", "--pose", "10", "-5"]) == 0
    out = capsys.readouterr().out
    for words in (
        "rod length a / b",
        "crank swing",
        "worst transmission",
        "J at neutral",
        "pure axis",
        "rod force",
    ):
        assert words in out
    assert "torque diamond at pitch +10.0°, roll -5.0°" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--preset", "wide"],
            "unknown ankle preset 'wide'; choices: marvin, narrow_rods, rods_close, calf, rs06",
        ),
        (["--motor", "rs99"], "unknown motor 'rs99'; choices: rs02, rs03, rs04, rs06"),
        (["--pose", "-85", "0"], "pitch -85.0° not in -40.0° … +40.0°"),
        (["--pose", "80", "0"], "--pose: pose outside the joint range of ankle preset marvin: pitch +80.0°"),
        (["--pose", "170", "0"], "pitch +170.0° not in -40.0° … +40.0°"),
        (["--pose", "0", "-20.5"], "roll -20.5° not in -20.0° … +20.0°"),
    ],
)
def test_user_errors_are_clear(capsys, args, message):
    assert main(["ankle", "report", *args]) == 2
    out, err = capsys.readouterr()
    assert message in err and "Traceback" not in err
    assert "torque diamond" not in out and "feasible" not in out


def test_out_of_range_study_pose_is_loud_and_not_feasible():
    geometry = load_ankle_geometry()
    with pytest.warns(ankle_report.PoseOutOfRangeWarning, match="pitch \\+80.0° not in"):
        diamond = ankle_report.diamond_at_pose(geometry, (80.0, 0.0), (1.0, 1.0))
    assert diamond["in_joint_range"] is False and diamond["demand_feasible"] is False
    text = "\n".join(ankle_report._format_diamond(diamond))
    assert "NOT feasible (pose outside the joint range)" in text


def test_range_limits_are_inside():
    geometry = load_ankle_geometry()
    diamond = ankle_report.diamond_at_pose(geometry, (-40.0, 20.0), (1.0, 1.0))
    assert diamond["in_joint_range"] is True and diamond["demand_feasible"] is True
    assert ankle_report.pose_range_error(geometry, (40.0, -20.0)) is None
    assert ankle_report.pose_range_error(geometry, (math.nan, 0.0)) is not None


def test_range_grid_includes_both_limits_at_most_one_degree_apart():
    geometry = load_ankle_geometry()
    grid = ankle_report.range_grid(*geometry.pitch_range_rad)
    assert grid[0] == pytest.approx(math.degrees(geometry.pitch_range_rad[0]))
    assert grid[-1] == pytest.approx(math.degrees(geometry.pitch_range_rad[1]))
    assert np.diff(grid).max() <= 1.0 + 1e-9


def test_plots_are_written(tmp_path):
    geometry = load_ankle_geometry()
    report = ankle_report.compute_report(geometry, step_deg=4.0)
    data = ankle_report.survey(geometry, step_deg=4.0)
    diamond = ankle_report.diamond_at_pose(geometry, (-40.0, 20.0), (60.0, 30.0))
    paths = [
        ankle_plots.plot_transmission_map(data, report, tmp_path / "transmission_map.png", dpi=30),
        ankle_plots.plot_torque_diamond(geometry, diamond, tmp_path / "torque_diamond.png", dpi=30),
    ]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["torque_diamond.png", "transmission_map.png"]
