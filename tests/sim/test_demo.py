"""The demo's pipeline end to end on a tiny preset: train, evaluate with video, export, a shipped policy."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

pytestmark = pytest.mark.sim


def test_demo_pipeline_on_a_tiny_preset(tmp_path):
    preset = {
        "task": "LinkageLab-Velocity-Flat-Limit",
        "overrides": ["env.scene.num_envs=4", "agent.max_iterations=2", "agent.num_steps_per_env=8"],
        "eval": {"command_mps": 0.3, "tolerance_mps": 0.05, "episodes": 2, "num_envs": 2, "max_steps": 30},
        "shipped": [{"task": "LinkageLab-Velocity-Flat-Limit", "command_mps": 0.3}],
        "out_dir": str(tmp_path / "demo"),
    }
    preset_file = tmp_path / "tiny.yaml"
    preset_file.write_text(yaml.safe_dump(preset))
    env = {**os.environ, "LINKAGE_LAB_LOG_DIR": str(tmp_path / "logs"), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "linkage_lab.cli.main", "demo", "--preset", str(preset_file)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    # Two iterations of training do not make a walking Limit: the demo finishes, says so and exits 3.
    assert done.returncode == 3, done.stderr[-3000:]
    out = done.stdout
    assert "demo finished" in out
    assert "(trained here): does NOT walk as commanded" in out and "verdict: missed" in out
    # Two policies evaluated, each with its own eval.json; the videos are there unless no OpenGL exists.
    assert (tmp_path / "demo" / "trained" / "eval.json").is_file()
    assert (tmp_path / "demo" / "LinkageLab-Velocity-Flat-Limit" / "eval.json").is_file()
    if "video: not written" not in out:
        assert (tmp_path / "demo" / "trained.mp4").stat().st_size > 0
    runs = list((tmp_path / "logs" / "rsl_rl" / "limit_flat").iterdir())
    assert len(runs) == 1 and (runs[0] / "export" / "policy.onnx").is_file()
    assert "(shipped)" in out and "(trained here)" in out
