"""The CPU graph replay of the physics step keeps the physics: a 5 s trot with and without it."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "LinkageLab-Velocity-Flat-Limit"
#: The replay launches the same kernels on the same buffers: agreement is expected to the bit; this
#: leaves room only for float32 rounding, far below anything a policy or a metric could see.
TOLERANCE = 1e-6


def _trot_rollout(build_env, graph: bool) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """Base positions and applied joint torques of 2 trotting envs for 5 s (pushes on), and whether a graph ran."""
    from linkage_lab.gait.policy import ScriptedPolicy
    from linkage_lab.physics.cpu_graph import NewtonCpuGraphMJWarpManager
    from linkage_lab.robots.registry import get_robot

    overrides = ("env.seed=11", f"env.sim.physics.use_cuda_graph={str(graph).lower()}")
    with build_env(TASK, num_envs=2, overrides=overrides) as (env, _):
        obs, _ = env.reset()
        unwrapped = env.unwrapped
        joint_names = list(unwrapped.action_manager.get_term("joint_pos")._joint_names)
        gait = get_robot("limit").require("scripted_gait")(joint_names)
        policy = ScriptedPolicy(env, gait, forward_speed_mps=0.3, start_delay_s=0.3)
        robot = unwrapped.scene["robot"]
        path, torques = [], []
        for _ in range(int(round(5.0 / unwrapped.step_dt))):
            obs, *_ = env.step(policy(obs["policy"]))
            path.append(robot.data.root_pos_w.torch.clone())
            torques.append(robot.data.applied_torque.torch.clone())
        replayed = NewtonCpuGraphMJWarpManager._cpu_graph is not None
    return torch.stack(path), torch.stack(torques), replayed


def test_graph_replay_matches_eager_physics(build_env):
    eager_path, eager_torque, eager_replayed = _trot_rollout(build_env, graph=False)
    graph_path, graph_torque, graph_replayed = _trot_rollout(build_env, graph=True)
    assert graph_replayed and not eager_replayed, "the two rollouts did not take the two paths"
    travelled = float((eager_path[-1, :, :2] - eager_path[0, :, :2]).norm(dim=-1).min())
    assert travelled > 0.5, f"the trot moved only {travelled:.2f} m: not a walking comparison"
    assert float((graph_path - eager_path).abs().max()) <= TOLERANCE
    assert float((graph_torque - eager_torque).abs().max()) <= TOLERANCE * float(eager_torque.abs().max())
