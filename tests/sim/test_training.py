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
