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
    from linkage_lab.gait.biped import BipedGait
    from linkage_lab.gait.policy import ScriptedPolicy
    from linkage_lab.robots.marvin.gait import marvin_sprint_gait_cfg

    # The diamond (the task's default ankle model) here; the races below run both models.
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


class _VelocityRecorder:
    """Passes an env through and keeps, after every step, the command, base velocity and dones."""

    def __init__(self, env):
        self._env = env
        self.rows: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []

    def __getattr__(self, name):
        return getattr(self._env, name)

    def step(self, actions):
        obs, reward, dones, extras = self._env.step(actions)
        unwrapped = self._env.unwrapped
        command = unwrapped.command_manager.get_command("base_velocity").clone()
        velocity = unwrapped.scene["robot"].data.root_lin_vel_b.torch.clone()
        self.rows.append((command, velocity, dones.clone().to(torch.bool)))
        return obs, reward, dones, extras


def test_scripted_limit_trot_through_eval(tmp_path, monkeypatch):
    from linkage_lab.evaluation import evaluate as evaluate_module
    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate

    recorders = []

    def recorded_run(env, *args):
        recorders.append(_VelocityRecorder(env))
        return run_evaluation(recorders[-1], *args)

    run_evaluation = evaluate_module.run_evaluation
    monkeypatch.setattr(evaluate_module, "run_evaluation", recorded_run)
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
    assert saved["falls"] == 0 and saved["steps"] == 300
    assert saved["ankle_replay"] is None  # the Limit has no linkage ankle
    tracking = saved["tracking"]
    # The tracking numbers recomputed from the recorded velocities (episode-ending steps left out).
    command, velocity, dones = (torch.stack(column).double() for column in zip(*recorders[0].rows, strict=True))
    keep = ~dones.bool()
    error = (command[..., :2] - velocity[..., :2]).norm(dim=-1)[keep]
    assert tracking["samples"] == int(keep.sum()) == 600
    assert tracking["lin_vel_xy_rms_mps"] == pytest.approx(float(error.pow(2).mean().sqrt()), rel=1e-9)
    assert tracking["mean_forward_speed_mps"] == pytest.approx(float(velocity[..., 0][keep].mean()), rel=1e-9)
    # The trot (measured: 0.31 m/s, RMS error 0.19 m/s, yaw-rate RMS 0.09 rad/s) moves forward
    # at most as fast as commanded, and tracks it neither exactly nor wildly.
    assert tracking["mean_commanded_forward_speed_mps"] == pytest.approx(0.4)
    assert 0.2 <= tracking["mean_forward_speed_mps"] <= 0.45
    assert 0.05 < tracking["lin_vel_xy_rms_mps"] < 0.3
    assert tracking["yaw_rate_rms_radps"] < 0.3
    # Footfalls: each foot lands about once per trot cycle (limit_trot_cfg: 2.5 Hz), diagonal pairs together. (With
    # every contact at friction 1.0, before the floor's draw took effect, the front-left foot bounced at touchdown and
    # landed 4.45 times a second; on the drawn floors 2.83.)
    from linkage_lab.robots.limit.gait import limit_trot_cfg

    footfalls = saved["footfalls"]
    assert [f["body"] for f in footfalls["feet"]] == ["fl_foot", "fr_foot", "rl_foot", "rr_foot"]
    frequency = limit_trot_cfg().frequency_hz
    for foot in footfalls["feet"]:
        assert 0.3 < foot["duty_factor"] < 0.95, foot
        assert 0.6 * frequency <= foot["touchdowns_per_s"] <= 1.4 * frequency, foot
    pairs = footfalls["touchdown_pairs"]
    assert pairs["simultaneous"] > pairs["repeated"]


@pytest.mark.parametrize("ankle", ["box", "diamond"])
def test_scripted_marvin_finishes_the_sprint(tmp_path, ankle):
    """The sprint goal: finished, no fall, in its lane, within 25 s (0.4 m/s), and the race files."""
    from linkage_lab.sprint.runner import run_race, write_race

    record = run_race("scripted", ankle, device="cpu", progress=False)
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
    ankle_replay = metrics["ankle_replay"]
    replay = ankle_replay["overall"]
    # Every physics substep of every control step is replayed (one env).
    steps = round(metrics["duration_s"] / record.info["control_period_s"])
    assert ankle_replay["sampling"] == "every physics substep" and ankle_replay["steps"] == steps
    assert replay["samples"] == ankle_replay["physics_steps"] == steps * ankle_replay["physics_steps_per_control_step"]
    # The scripted gait stays inside the real motors' feasible set at every substep (measured with
    # both ankle models: worst max|τ_m| / T_peak = 0.85, in the first substep of the race), while
    # the ankles do carry the robot (a quarter of the samples above the motors' rated torque).
    assert replay["outside_samples"] == 0 and replay["fraction_outside"] == 0.0
    assert 0.5 < replay["worst_ratio"] < 1.0
    assert 0.1 < replay["fraction_above_rated"] < 0.5
    assert files["path.png"].stat().st_size > 1000
