"""A 2-iteration PPO run per velocity task writes a checkpoint (CPU, a handful of envs)."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("task", ["LinkageLab-Velocity-Flat-Limit", "LinkageLab-Velocity-Flat-Marvin"])
def test_two_iteration_ppo_writes_a_checkpoint(task, tmp_path):
    from linkage_lab.training import train

    result = train(task, ["env.scene.num_envs=8", "agent.max_iterations=2"], device="cpu", log_root=tmp_path / "logs")
    assert result.checkpoint is not None and result.checkpoint.is_file()
    assert result.checkpoint.name == "model_1.pt"
    state = torch.load(result.checkpoint, map_location="cpu", weights_only=False)
    assert state.get("iter") == 1
    assert (result.log_dir / "params" / "env.yaml").is_file()


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
