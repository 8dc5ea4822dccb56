"""The evaluation loop and its report on a scripted fake env; checkpoint and CLI errors; staged folders."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

from linkage_lab.evaluation import evaluate as evaluate_module
from linkage_lab.evaluation import robot_info
from linkage_lab.evaluation.evaluate import EvalRequest, default_max_steps, run_evaluation, write_report
from linkage_lab.evaluation.policies import PolicyLoadError, read_checkpoint, resolve_checkpoint
from linkage_lab.evaluation.replay import marvin_ankle_replay
from linkage_lab.export.staging import staged_directory

pytestmark = pytest.mark.unit

JOINTS = ["a", "b", "c"]


class FakeEnv:
    """Two envs: env 0 falls every 3 steps, env 1 times out every 5; reward 1 per step."""

    num_envs = 2
    max_episode_length = 5

    def __init__(self):
        data = SimpleNamespace(
            root_lin_vel_b=SimpleNamespace(torch=torch.tensor([[0.4, 0.0, 0.0]] * 2)),
            root_ang_vel_b=SimpleNamespace(torch=torch.tensor([[0.0, 0.0, 0.1]] * 2)),
            applied_torque=SimpleNamespace(torch=torch.tensor([[1.0, -2.0, 3.0], [1.0, 2.0, 0.0]])),
            computed_torque=SimpleNamespace(torch=torch.tensor([[1.0, -2.0, 4.0]] * 2)),
        )
        robot = SimpleNamespace(data=data, joint_names=JOINTS)
        commands = SimpleNamespace(
            active_terms=["base_velocity"], get_command=lambda name: torch.tensor([[0.5, 0.0, 0.1]] * 2)
        )
        self.unwrapped = SimpleNamespace(
            device="cpu", step_dt=0.02, scene={"robot": robot}, command_manager=commands, num_envs=2
        )
        self.count = 0

    def get_observations(self):
        return {"policy": torch.zeros(2, 4)}

    def step(self, actions):
        assert actions.shape == (2, 3)
        self.count += 1
        falls = torch.tensor([self.count % 3 == 0, False])
        timeouts = torch.tensor([False, self.count % 5 == 0])
        return self.get_observations(), torch.ones(2), (falls | timeouts).long(), {"time_outs": timeouts}


class FakeProbe:
    """Both ankles command (30, 0) N·m at neutral every step."""

    names = ["left", "right"]

    def latest(self):
        return torch.tensor([[30.0, 0.0]]).expand(2, 2, 2).clone(), torch.zeros(2, 2, 2)

    def close(self):
        self.closed = True


class ZeroPolicy:
    description = {"type": "zero"}

    def __call__(self, obs):
        assert obs.shape == (2, 4)
        return torch.zeros(2, 3)

    def reset(self, dones):
        pass


@pytest.fixture
def fake_robot_info(monkeypatch):
    monkeypatch.setattr(robot_info, "policy_joint_names", lambda env: list(JOINTS))
    limits = {n: robot_info.JointLimit(4.0, "test") for n in JOINTS}
    monkeypatch.setattr(robot_info, "joint_effort_limits", lambda env, names: limits)
    probe = FakeProbe()
    monkeypatch.setattr(evaluate_module, "_ankle_replay", lambda env: (probe, marvin_ankle_replay()))
    return probe


def test_loop_stops_at_the_requested_episodes_with_known_statistics(fake_robot_info, tmp_path):
    agent_cfg = SimpleNamespace(obs_groups={"actor": ["policy"]})
    request = EvalRequest(task="Fake", episodes=3, num_envs=2, progress=False)
    report, replay = run_evaluation(FakeEnv(), ZeroPolicy(), agent_cfg, request)
    # Episodes end at steps 3 (env 0 falls), 5 (env 1 times out) and 6 (env 0 falls again).
    assert (report["steps"], report["episodes"], report["stopped_by"]) == (6, 3, "episodes")
    assert report["max_steps"] == default_max_steps(3, 2, 5) == 11
    assert report["return"]["mean"] == pytest.approx(11 / 3)
    assert (report["falls"], report["timeouts"], report["fall_rate"]) == (2, 1, pytest.approx(2 / 3))
    assert report["episode_length"]["mean_s"] == pytest.approx(11 / 3 * 0.02)
    tracking = report["tracking"]
    assert tracking["samples"] == 12 - 3  # the three env-steps that ended an episode are left out
    assert tracking["lin_vel_xy_rms_mps"] == pytest.approx(0.1)
    assert tracking["yaw_rate_rms_radps"] == pytest.approx(0.0, abs=1e-7)
    assert tracking["mean_forward_speed_mps"] == pytest.approx(0.4)
    rows = {row["name"]: row for row in report["joint_torques"]["joints"]}
    assert rows["b"]["peak_nm"] == 2.0 and rows["c"]["peak_ratio"] == pytest.approx(0.75)
    assert rows["c"]["rms_nm"] == pytest.approx((9 / 2) ** 0.5) and rows["c"]["commanded_peak_nm"] == 4.0
    assert report["ankle_replay"]["overall"]["samples"] == 12 and fake_robot_info.closed
    assert report["ankle_replay"]["ankles"]["left"]["worst_ratio"] > 0

    written = write_report(tmp_path, {"task": "Fake", **report}, replay)
    assert sorted(p.name for p in written) == ["ankle_motor_torque.png", "ankle_poses.png", "eval.json"]
    saved = json.loads((tmp_path / "eval.json").read_text())
    assert saved["plots"] == ["ankle_motor_torque.png", "ankle_poses.png"] and saved["task"] == "Fake"


def test_loop_stops_at_the_step_cap(fake_robot_info):
    agent_cfg = SimpleNamespace(obs_groups={"actor": ["policy"]})
    request = EvalRequest(task="Fake", episodes=3, num_envs=2, max_steps=4, progress=False)
    report, _ = run_evaluation(FakeEnv(), ZeroPolicy(), agent_cfg, request)
    assert (report["steps"], report["episodes"], report["stopped_by"]) == (4, 1, "step_cap")


def test_checkpoint_errors_name_the_problem(tmp_path):
    with pytest.raises(PolicyLoadError, match="does not exist"):
        read_checkpoint(tmp_path / "model_1.pt")
    garbage = tmp_path / "model_2.pt"
    garbage.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(PolicyLoadError, match="not a readable PyTorch checkpoint"):
        read_checkpoint(garbage)
    other = tmp_path / "model_3.pt"
    torch.save({"model": 1}, other)
    with pytest.raises(PolicyLoadError, match="not an rsl-rl checkpoint"):
        read_checkpoint(other)
    torch.save({"actor_state_dict": {}}, other)
    (tmp_path / "run.json").write_text(json.dumps({"task": "LinkageLab-Other"}))
    with pytest.raises(PolicyLoadError, match="trained on task LinkageLab-Other, not LinkageLab-This"):
        read_checkpoint(other, "LinkageLab-This")
    assert read_checkpoint(other, "LinkageLab-Other") == {"actor_state_dict": {}}


def test_checkpoint_resolution(tmp_path):
    with pytest.raises(PolicyLoadError, match="train first"):
        resolve_checkpoint("latest", "T", "exp", log_root=tmp_path / "logs")
    run = tmp_path / "logs" / "rsl_rl" / "exp" / "run_a"
    run.mkdir(parents=True)
    with pytest.raises(PolicyLoadError, match="holds no model"):
        resolve_checkpoint("latest", "T", "exp", log_root=tmp_path / "logs")
    for it in (2, 10):
        (run / f"model_{it}.pt").write_bytes(b"")
    assert resolve_checkpoint("latest", "T", "exp", log_root=tmp_path / "logs").name == "model_10.pt"
    assert resolve_checkpoint(run / "model_2.pt", "T", "exp").name == "model_2.pt"


def test_staged_directory_is_all_or_nothing(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(RuntimeError), staged_directory(target) as staging:
        (staging / "half.json").write_text("{")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
    with staged_directory(target) as staging:
        (staging / "a.txt").write_text("1")
    with staged_directory(target) as staging:
        (staging / "b.txt").write_text("2")
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and [p.name for p in target.iterdir()] == ["b.txt"]


def test_cli_rejects_missing_or_unknown_policy(capsys):
    from linkage_lab.cli.main import main

    assert main(["eval", "--task", "LinkageLab-Velocity-Flat-Limit"]) == 2
    assert "give a policy" in capsys.readouterr().err
    assert main(["eval", "--task", "LinkageLab-Velocity-Flat-Limit", "--policy", "nope"]) == 2
    assert "unknown policy type 'nope'; known: checkpoint, onnx" in capsys.readouterr().err
