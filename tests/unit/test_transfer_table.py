"""The transfer table's config and its Markdown/PNG from a report (the runs themselves are a command)."""

from __future__ import annotations

import pytest

from linkage_lab.config import ConfigError
from linkage_lab.sim2sim.transfer import DEFAULT_CONFIG, load_rows, markdown_table, plot

pytestmark = pytest.mark.unit


def _case(command, isaac_rms, sim_rms, saturated):
    return {
        "command": list(command),
        "isaac_lab": {
            "mean_forward_speed_mps": command[0],
            "lin_vel_xy_rms_mps": isaac_rms,
            "yaw_rate_rms_radps": 0.05,
            "falls": 0,
            "episodes": 8,
        },
        "sim2sim": {
            "mean_forward_speed_mps": 0.9 * command[0],
            "lin_vel_xy_rms_mps": sim_rms,
            "yaw_rate_rms_radps": 0.02,
            "falls": 1,
            "simulated_s": 20.0,
            "mean_saturated_fraction": saturated / 4,
            "worst_saturated_motor": "rr_ankle",
            "worst_saturated_fraction": saturated,
            "peak_torque_ratio": 1.0,
        },
    }


def test_shipped_config_names_every_linkage_model():
    rows = load_rows(DEFAULT_CONFIG)
    overrides = {override for row in rows for override in row.overrides}
    assert {"presets=kin_only", "presets=s3n_full", "presets=box"} <= overrides
    assert sum(row.checkpoint == "pretrained" for row in rows) == 2


def test_bad_config_is_a_clear_error(tmp_path):
    path = tmp_path / "transfer.yaml"
    path.write_text("rows:\n  - name: a\n")
    with pytest.raises(ConfigError, match=r"rows\[0\] needs name, task and checkpoint"):
        load_rows(path)
    path.write_text("rows: []\n")
    with pytest.raises(ConfigError, match="lists no rows"):
        load_rows(path)


def test_table_and_plot_from_a_report(tmp_path):
    doc = {
        "rows": [
            {"name": "a", "status": "ok", "cases": [_case((0.3, 0.0), 0.058, 0.046, 0.97)]},
            {"name": "b", "status": "not trained", "note": "later", "cases": []},
        ]
    }
    table = markdown_table(doc)
    assert "| a | +0.3, +0.0 | 0.300 → 0.270 | 0.058 → 0.046 |" in table
    assert "0/8 → 1/1" in table and "24.2% / 97% (rr_ankle)" in table
    assert "| b | – | not trained: later |" in table
    path = plot(doc, tmp_path / "transfer.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
