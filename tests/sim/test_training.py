"""A 2-iteration PPO run per velocity task writes a checkpoint (CPU, a handful of envs)."""

from __future__ import annotations

import json
import os

import pytest

from linkage_lab.checkpoints import TRAINING_KEYS, load_checkpoint

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("task", ["LinkageLab-Velocity-Flat-Limit", "LinkageLab-Velocity-Flat-Marvin"])
def test_two_iteration_ppo_writes_a_checkpoint(task, tmp_path):
    from linkage_lab.runtime import resolve_configs
    from linkage_lab.training import train

    logs = tmp_path / "logs"
    experiment = resolve_configs(task)[1].experiment_name
    # Another run of the experiment, written to after this one starts (a training running beside it):
    # the result must still name the run this call made.
    other = logs / "rsl_rl" / experiment / "2099-12-31_23-59-59"
    other.mkdir(parents=True)
    (other / "model_5.pt").write_bytes(b"")
    os.utime(other, (4e9, 4e9))

    result = train(task, ["env.scene.num_envs=8", "agent.max_iterations=2"], device="cpu", log_root=logs)
    assert result.log_dir is not None and result.log_dir != other and result.log_dir.parent == other.parent
    assert result.checkpoint == result.log_dir / "model_1.pt"
    state = load_checkpoint(result.checkpoint, require=TRAINING_KEYS)
    assert state.get("iter") == 1
    assert (result.first_iteration, result.last_iteration, result.interrupted) == (0, 1, False)
    assert (result.log_dir / "params" / "env.yaml").is_file()
    assert json.loads((result.log_dir / "run.json").read_text())["task"] == task
    record = json.loads((result.log_dir / "training.json").read_text())
    assert (record["status"], record["planned_iterations"], record["num_envs"]) == ("finished", 2, 8)


def test_isaaclab_cli_finds_and_trains_the_task(tmp_path):
    """``isaaclab train`` discovers the task through the ``isaaclab.tasks`` entry point."""
    import subprocess
    import sys
    from pathlib import Path

    isaaclab = Path(sys.executable).with_name("isaaclab")
    cmd = [str(isaaclab), "train", "--rl_library", "rsl_rl", "--task", "LinkageLab-Velocity-Flat-Limit"]
    cmd += ["--device", "cpu", "agent.device=cpu", "env.scene.num_envs=4", "agent.max_iterations=1"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert list((tmp_path / "logs" / "rsl_rl" / "limit_flat").glob("*/model_0.pt"))
