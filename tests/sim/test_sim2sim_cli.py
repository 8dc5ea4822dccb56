"""``linkage-lab sim2sim`` end to end: the shipped Limit policy exported, then 2 s on the closed chain via the CLI."""

from __future__ import annotations

import json
import math

import pytest

from linkage_lab.cli.main import main

pytestmark = pytest.mark.sim

LIMIT = "LinkageLab-Velocity-Flat-Limit"
#: Keys of the report (``sim2sim.json``) other tools read.
REPORT_KEYS = (
    "robot",
    "task",
    "policy",
    "simulator",
    "command",
    "simulated_s",
    "ended_reason",
    "episodes",
    "falls",
    "fall_rate",
    "fall_rule",
    "tracking",
    "footfalls",
    "motor_torques",
    "robot_side",
    "sprint",
)


def _finite_numbers(value) -> list[float]:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _finite_numbers(v)]
    return [x for v in value for x in _finite_numbers(v)]


def test_sim2sim_cli_runs_the_shipped_limit_bundle(tmp_path, capsys):
    assert main(["export", "--task", LIMIT, "--checkpoint", "pretrained", "--out", str(tmp_path / "bundle")]) == 0
    capsys.readouterr()
    out = tmp_path / "out"
    args = ["sim2sim", "--bundle", str(tmp_path / "bundle"), "--duration", "2", "--command", "0.3,0", "--json"]
    assert main([*args, "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert json.loads((out / "sim2sim.json").read_text()) == report
    assert set(REPORT_KEYS) <= set(report)
    assert report["robot"] == "limit" and report["policy"]["type"] == "bundle"
    assert report["simulated_s"] == pytest.approx(2.0) and report["control_steps"] == 100
    assert report["falls"] == 0
    tracking = report["tracking"]
    for key in ("lin_vel_xy_rms_mps", "yaw_rate_rms_radps", "mean_forward_speed_mps"):
        assert math.isfinite(tracking[key])
    motors = report["motor_torques"]["motors"]
    assert len(motors) == 12
    for motor in motors:
        for key in ("peak_nm", "rms_nm", "limit_nm", "peak_ratio", "saturated_fraction", "saturated_s"):
            assert math.isfinite(motor[key])
    assert all(math.isfinite(x) for x in _finite_numbers(report))
    # A second run into the same folder needs --force.
    assert main([*args, "--out", str(out)]) == 2
