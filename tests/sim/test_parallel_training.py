"""Training over worker processes: each worker is an ordinary env of its share; a dead worker is an error."""

from __future__ import annotations

import json

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "LinkageLab-Velocity-Flat-Limit"


def test_worker_zero_is_the_one_process_env_with_its_seed(build_env):
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    from linkage_lab.runtime import resolve_configs
    from linkage_lab.training.parallel import ParallelVecEnv, WorkerError

    env_cfg, agent_cfg = resolve_configs(TASK, [], "cpu")
    generator = torch.Generator().manual_seed(0)
    parallel = ParallelVecEnv(TASK, 4, 2, "cpu", [], 7, env_cfg, clip_actions=agent_cfg.clip_actions)
    try:
        assert (parallel.sizes, parallel.num_envs) == ([2, 2], 4)
        first_obs = parallel.get_observations()["policy"].clone()
        actions = [torch.randn(4, parallel.num_actions, generator=generator) for _ in range(20)]
        steps = [parallel.step(a) for a in actions]
        rows = [(obs["policy"].clone(), rewards.clone()) for obs, rewards, _, _ in steps]
        assert "time_outs" in steps[-1][3] and steps[-1][3]["time_outs"].shape == (4,)
        assert parallel.episode_length_buf.tolist() == [20] * 4
        parallel.episode_length_buf = torch.tensor([3, 4, 5, 6])
        assert parallel.episode_length_buf.tolist() == [3, 4, 5, 6]
        parallel._procs[1].kill()
        with pytest.raises(WorkerError, match="worker 1 died"):
            parallel.step(actions[0])
    finally:
        parallel.close()

    with build_env(TASK, num_envs=2, overrides=("env.seed=7",)) as (env, run_agent_cfg):
        vec = RslRlVecEnvWrapper(env, clip_actions=run_agent_cfg.clip_actions)
        assert torch.equal(vec.get_observations()["policy"], first_obs[:2])
        for step, a in enumerate(actions):
            obs, rewards, _, _ = vec.step(a[:2])
            assert torch.allclose(obs["policy"], rows[step][0][:2], atol=1e-6), f"observations differ at step {step}"
            assert torch.allclose(rewards, rows[step][1][:2], atol=1e-6), f"rewards differ at step {step}"


def test_two_worker_training_writes_a_checkpoint_and_records_its_workers(tmp_path):
    from linkage_lab.training import train

    result = train(TASK, ["agent.max_iterations=2"], device="cpu", num_envs=8, log_root=tmp_path, workers=2)
    assert result.checkpoint == result.log_dir / "model_1.pt"
    record = json.loads((result.log_dir / "training.json").read_text())
    assert (record["status"], record["num_envs"], record["workers"]) == ("finished", 8, 2)
