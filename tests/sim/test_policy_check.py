"""The pre-build policy check against the built env: the config's sizes are the env's, and a policy
the check could not size fails cleanly once the env is built, before any step."""

from __future__ import annotations

import pytest

from linkage_lab.tasks.registry import project_task_ids

pytestmark = pytest.mark.sim


def onnx_file(path, observations: int, actions: int):
    """A linear policy ``[batch, observations] -> [batch, actions]`` as an ONNX file."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.zeros((observations, actions), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["obs", "w"], ["actions"])],
        "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", observations])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, ["batch", actions])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize("task", project_task_ids())
def test_task_sizes_from_the_config_are_the_envs(task, build_env):
    from linkage_lab.evaluation.policies import actor_groups
    from linkage_lab.evaluation.policy_check import task_sizes
    from linkage_lab.runtime import resolve_configs

    sizes = task_sizes(*resolve_configs(task, [], "cpu"))
    assert sizes is not None, f"{task} has terms the config check cannot size: give them an observation_size"
    with build_env(task, num_envs=1) as (env, agent_cfg):
        dims = env.unwrapped.observation_manager.group_obs_dim
        observations = sum(dims[group][0] for group in actor_groups(agent_cfg))
        assert (sizes.observations, sizes.actions) == (observations, env.unwrapped.action_manager.total_action_dim)


def test_an_unsized_onnx_fails_after_the_build_in_one_line(tmp_path, capsys, monkeypatch):
    """With the pre-build check blind, a 60→10 ONNX on Marvin stops before the first step (no
    Isaac Lab "Invalid action shape"), as one line without a traceback."""
    import linkage_lab.evaluation.policy_check as policy_check
    from linkage_lab.cli.main import main

    monkeypatch.setattr(policy_check, "task_sizes", lambda env_cfg, agent_cfg: None)
    policy = onnx_file(tmp_path / "p.onnx", 60, 10)
    argv = ["eval", "--task", "LinkageLab-Velocity-Flat-Marvin", "--onnx", str(policy), "--num-envs", "1"]
    assert main([*argv, "--no-progress", "--out", str(tmp_path / "eval")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Invalid action shape" not in err
    assert "outputs 10 actions, the task takes 16" in err
    assert not (tmp_path / "eval").exists()
