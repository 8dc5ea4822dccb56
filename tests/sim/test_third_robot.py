"""A third robot, added through the registry alone (``docs/guide/adding_a_robot.md``): a two-leg planar walker
with parallelogram knees, defined in ``tests/third_robot/`` (a config and one module). Its description is
generated, its task registered and stepped, a policy trained for an iteration and exported, and what it
lacks fails with a clear error."""

from __future__ import annotations

import json

import pytest
import torch

pytestmark = pytest.mark.sim


@pytest.fixture(scope="module")
def walker(tmp_path_factory):
    import sys
    from pathlib import Path

    folder = str(Path(__file__).resolve().parents[1] / "third_robot")
    sys.path.insert(0, folder)
    try:
        import walker_robot

        walker_robot.register(tmp_path_factory.mktemp("assets"))
        yield walker_robot
    finally:
        sys.path.remove(folder)


def test_description_urdf_and_usd_come_from_the_config(walker):
    from linkage_lab.robots.assets import asset_paths, build_robot, generate_urdf, is_current

    urdf = generate_urdf("walker")
    assert urdf.count('<joint name="') == 6 and 'type="revolute"' in urdf
    assert "generated from" in urdf and "walker.yaml" in urdf  # the header names the config it came from
    build_robot("walker")
    assert is_current("walker")
    assert asset_paths("walker")["dir"].parent == walker.SPEC.asset_dir  # not the project's assets/


def test_policy_metadata_and_registry_know_the_walker(walker):
    from linkage_lab.evaluation.robot_info import robot_kind
    from linkage_lab.robots.registry import MissingCapability, get_robot, robot_names

    assert "walker" in robot_names()
    assert robot_kind(["right_knee", "left_hip", "left_knee", "right_hip"]) == "walker"
    with pytest.raises(MissingCapability, match="walker.*scripted_gait"):
        get_robot("walker").require("scripted_gait")


def test_task_steps_trains_and_exports(walker, tmp_path):
    from linkage_lab.export.bundle import export_bundle
    from linkage_lab.robots.registry import MissingCapability
    from linkage_lab.runtime import make_env
    from linkage_lab.tasks.registry import project_task_ids
    from linkage_lab.training import train

    assert walker.TASK in project_task_ids()
    with make_env(walker.TASK, num_envs=2, device="cpu") as (env, _):
        robot = env.unwrapped.scene["robot"]
        assert list(robot.joint_names) == list(walker.JOINT_NAMES)
        env.reset()
        for _ in range(5):
            obs, reward, *_ = env.step(torch.zeros(2, len(walker.JOINT_NAMES)))
        assert torch.isfinite(obs["policy"]).all() and torch.isfinite(reward).all()
        # The knee motor sits at the hip: its motor angle is hip + knee (the parallelogram's J).
        actuator = robot.actuators["legs"]
        assert actuator.cfg.transmissions == ["parallelogram", "parallelogram"]

    overrides = ["env.scene.num_envs=4", "agent.max_iterations=1", "agent.num_steps_per_env=8"]
    result = train(walker.TASK, overrides, device="cpu", log_root=tmp_path / "logs", workers=1)
    # The walker has no robot-side deploy files: asking for them is a clear error, not a silent bundle.
    with pytest.raises(MissingCapability, match="walker.*--skip-deploy"):
        export_bundle(walker.TASK, result.checkpoint, tmp_path / "with_deploy", device="cpu")
    bundle = export_bundle(walker.TASK, result.checkpoint, tmp_path / "bundle", device="cpu", with_deploy=False)
    metadata = json.loads((bundle.out_dir / "metadata.json").read_text())
    assert metadata["robot"] == "walker"
    assert metadata["joint_names"] == list(walker.JOINT_NAMES)
    assert [g["transmission"] for g in metadata["linkages"]] == ["parallelogram", "parallelogram"]
    assert metadata["ankle_preset"] is None and metadata["joint_ids"] is None
