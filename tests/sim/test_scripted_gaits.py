"""The scripted gaits run through the same tasks, evaluation and sprint as a learned policy."""

from __future__ import annotations

import json

import pytest
import torch

pytestmark = pytest.mark.sim

SPRINT_FIELDS = {
    "success",
    "time",
    "distance_m",
    "average_speed_mps",
    "max_lateral_offset_m",
    "fell",
    "ended_reason",
    "duration_s",
}


def test_scripted_marvin_stays_up_for_3_s_of_stepping(build_env):
    from linkage_lab.gait.biped import BipedGait, marvin_sprint_gait_cfg
    from linkage_lab.gait.policy import ScriptedPolicy

    # The diamond (the task's default ankle model) here; the race below runs the box.
    with build_env("LinkageLab-Sprint-Marvin", num_envs=1, overrides=("presets=diamond",)) as (env, _):
        obs, _ = env.reset()
        policy = ScriptedPolicy(env, BipedGait(marvin_sprint_gait_cfg()), start_delay_s=0.5)
        unwrapped = env.unwrapped
        robot = unwrapped.scene["robot"]
        start_x = float(robot.data.root_pos_w.torch[0, 0])
        for step in range(int(round(3.5 / unwrapped.step_dt))):
            obs, _, terminated, truncated, _ = env.step(policy(obs["policy"]))
            assert not (terminated.any() or truncated.any()), f"stopped at {step * unwrapped.step_dt:.2f} s"
        assert float(robot.data.root_pos_w.torch[0, 0]) - start_x > 0.3, "the gait did not move the robot forward"


def test_scripted_limit_trot_through_eval(tmp_path):
    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate

    overrides = (
        "env.commands.base_velocity.ranges.lin_vel_x=[0.4,0.4]",
        "env.commands.base_velocity.ranges.ang_vel_z=[0.0,0.0]",
        "env.commands.base_velocity.rel_standing_envs=0.0",
        "env.events.push_robot=null",
    )
    request = EvalRequest(
        task="LinkageLab-Velocity-Flat-Limit",
        policy="scripted",
        episodes=1,
        num_envs=2,
        max_steps=300,
        out_dir=tmp_path / "eval",
        overrides=overrides,
        device="cpu",
        progress=False,
    )
    out_dir, report = evaluate(request)
    saved = json.loads((out_dir / "eval.json").read_text())
    assert saved["falls"] == 0
    assert saved["tracking"]["mean_forward_speed_mps"] >= 0.2
    assert saved["ankle_replay"] is None  # the Limit has no linkage ankle


def test_scripted_marvin_finishes_the_sprint_with_box_ankles(tmp_path):
    """The sprint goal: finished, no fall, in its lane, within 25 s (0.4 m/s), and the race files."""
    from linkage_lab.sprint.runner import run_race, write_race

    record = run_race("scripted", "box", device="cpu", progress=False)
    files = write_race(record, tmp_path / "race")
    metrics = json.loads(files["metrics.json"].read_text())
    assert set(metrics) == SPRINT_FIELDS | {"ankle_replay"}
    assert metrics["ended_reason"] == "finished", metrics
    assert metrics["success"] and not metrics["fell"]
    assert metrics["time"] == metrics["duration_s"] <= 25.0
    assert metrics["distance_m"] == pytest.approx(10.0)
    assert metrics["average_speed_mps"] == pytest.approx(metrics["distance_m"] / metrics["duration_s"])
    assert metrics["max_lateral_offset_m"] < 0.5
    path = torch.tensor(record.path_xy)
    assert torch.isfinite(path).all() and (path[:, 1].abs() < 0.5).all()
    replay = metrics["ankle_replay"]["overall"]
    assert replay["samples"] == round(metrics["duration_s"] / record.info["control_period_s"])
    assert 0.0 <= replay["fraction_outside"] <= 1.0
    assert files["path.png"].stat().st_size > 1000
