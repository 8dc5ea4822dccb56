"""The evaluation loop and its report on a scripted fake env; checkpoint and CLI errors; staged folders."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

from linkage_lab.evaluation import robot_info
from linkage_lab.evaluation.evaluate import EvalRequest, default_max_steps, run_evaluation, write_report
from linkage_lab.evaluation.policies import PolicyLoadError, read_checkpoint, resolve_checkpoint
from linkage_lab.outputs import staged_directory

pytestmark = pytest.mark.unit

JOINTS = ["a", "b", "c"]
ANKLES = {"left": ("left_ankle_pitch", "left_ankle_roll"), "right": ("right_ankle_pitch", "right_ankle_roll")}
ANKLE_JOINTS = [j for pair in ANKLES.values() for j in pair]
DECIMATION = 4
#: Per-substep applied and commanded torques of joints a, b, c (N·m); the first substep after a new
#: target commands twice as much as the three after it (a PD's error is largest right after the step).
APPLIED = torch.tensor([[1.0, -2.0, 3.0], [1.0, 2.0, 0.0]])
COMMANDED = torch.tensor([[1.0, -2.0, 4.0]] * 2)
#: Ankle pitch torque (N·m) in the first substep (motors ≈ 101 N·m > 60 N·m peak) and after it.
ANKLE_FIRST, ANKLE_LATER = 200.0, 1.0


class FakeActuator:
    """An explicit actuator group: ``compute`` sets ``computed_effort`` and ``applied_effort``."""

    def __init__(self, joint_names, outputs):
        self.joint_names = joint_names
        self.outputs = outputs  # substep -> (computed, applied), each (num_envs, len(joint_names))
        self.substep = 0

    def compute(self, control_action, joint_pos, joint_vel):
        self.computed_effort, self.applied_effort = self.outputs(self.substep)
        return control_action


class FakeSim:
    """Counts physics steps."""

    def __init__(self):
        self.steps = 0

    def step(self, render=True):
        self.steps += 1


class FakeEnv:
    """Two envs: env 0 falls every 3 steps, env 1 times out every 5; reward 1 per step.

    Each control step runs Isaac Lab's loop: ``decimation`` times the actuators' ``compute`` and a
    physics step; after a reset the scene is written once more without a physics step.
    """

    num_envs = 2
    max_episode_length = 5

    def __init__(self):
        names = [*JOINTS, *ANKLE_JOINTS]
        data = SimpleNamespace(
            root_lin_vel_b=SimpleNamespace(torch=torch.tensor([[0.4, 0.0, 0.0]] * 2)),
            root_ang_vel_b=SimpleNamespace(torch=torch.tensor([[0.0, 0.0, 0.1]] * 2)),
            applied_torque=SimpleNamespace(torch=torch.zeros(2, len(names))),
            computed_torque=SimpleNamespace(torch=torch.zeros(2, len(names))),
            # Both envs hold the second joint 2 mrad off its upper end (on the stop); the others sit at 0.
            joint_pos=SimpleNamespace(torch=torch.zeros(2, len(names)).index_fill_(1, torch.tensor([1]), 0.998)),
            joint_pos_limits=SimpleNamespace(torch=torch.tensor([-1.0, 1.0]).repeat(2, len(names), 1)),
        )

        def body(substep):
            scale = 2.0 if substep == 0 else 1.0
            return scale * COMMANDED, scale * APPLIED

        def ankles(substep):
            torque = torch.zeros(2, 4)
            torque[:, [0, 2]] = ANKLE_FIRST if substep == 0 else ANKLE_LATER
            return torque, torque

        actuators = {"body": FakeActuator(JOINTS, body), "ankles": FakeActuator(ANKLE_JOINTS, ankles)}
        self.robot = SimpleNamespace(data=data, joint_names=names, actuators=actuators)
        commands = SimpleNamespace(
            active_terms=["base_velocity"], get_command=lambda name: torch.tensor([[0.5, 0.0, 0.1]] * 2)
        )
        self.sim = FakeSim()
        self.unwrapped = SimpleNamespace(
            device="cpu",
            step_dt=0.02,
            scene={"robot": self.robot},
            command_manager=commands,
            num_envs=2,
            sim=self.sim,
            cfg=SimpleNamespace(decimation=DECIMATION),
        )
        self.count = 0

    def get_observations(self):
        return {"policy": torch.zeros(2, 4)}

    def _write_data_to_sim(self, substep):
        data = self.robot.data
        for actuator in self.robot.actuators.values():
            columns = [self.robot.joint_names.index(j) for j in actuator.joint_names]
            actuator.substep = substep
            actuator.compute(None, data.joint_pos.torch[:, columns], torch.zeros(2, len(columns)))
            data.computed_torque.torch[:, columns] = actuator.computed_effort
            data.applied_torque.torch[:, columns] = actuator.applied_effort

    def step(self, actions):
        assert actions.shape == (2, 3)
        for substep in range(DECIMATION):
            self._write_data_to_sim(substep)
            self.sim.step(render=False)
        self.count += 1
        falls = torch.tensor([self.count % 3 == 0, False])
        timeouts = torch.tensor([False, self.count % 5 == 0])
        if (falls | timeouts).any():
            self._write_data_to_sim(-1)  # a scene write after the reset: no physics step integrates it
        return self.get_observations(), torch.ones(2), (falls | timeouts).long(), {"time_outs": timeouts}


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
    monkeypatch.setattr(robot_info, "linkage_ankles", lambda env: dict(ANKLES))
    monkeypatch.setattr(robot_info, "robot_name", lambda env: "marvin")
    groups = [{"joints": list(j), "transmission": f"marvin_ankle_{s}"} for s, j in ANKLES.items()]
    monkeypatch.setattr(robot_info, "linkage_groups", lambda env: groups)


def test_loop_stops_at_the_requested_episodes_with_known_statistics(fake_robot_info, tmp_path):
    agent_cfg = SimpleNamespace(obs_groups={"actor": ["policy"]})
    request = EvalRequest(task="Fake", episodes=3, num_envs=2, progress=False)
    env = FakeEnv()
    report, replay = run_evaluation(env, ZeroPolicy(), agent_cfg, request)
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

    # Every physics substep is a sample (6 steps × 4 substeps × 2 envs); the scene writes after the
    # resets are not, and the probe leaves the env's own methods behind.
    samples = 6 * DECIMATION * 2
    torques = report["joint_torques"]
    assert (torques["sampling"], torques["physics_steps"], torques["samples"]) == ("every physics substep", 24, 48)
    assert env.sim.steps == 24 and "step" not in vars(env.sim)
    assert not any("compute" in vars(a) for a in env.robot.actuators.values())
    # The first substep's doubled torque is the peak; the RMS mixes one doubled substep with three plain ones.
    rows = {row["name"]: row for row in torques["joints"]}
    assert rows["b"]["peak_nm"] == 4.0 and rows["c"]["peak_ratio"] == pytest.approx(1.5)
    assert rows["c"]["rms_nm"] == pytest.approx(((6**2 + 3 * 3**2) / 8) ** 0.5)
    assert rows["c"]["commanded_peak_nm"] == 8.0

    # Joint stops are sampled with the tracking samples: the second joint is on its stop throughout.
    stops = report["joint_stops"]
    assert stops["samples"] == tracking["samples"]
    shares = {row["name"]: row["share_on_stop"] for row in stops["joints"]}
    on_stop = JOINTS[1]
    assert shares[on_stop] == 1.0
    assert all(share == 0.0 for name, share in shares.items() if name != on_stop)
    assert stops["flagged"] == [on_stop]

    # The ankles: only the first substep of each control step is outside the motors' peak.
    ankle_replay = report["ankle_replay"]
    assert ankle_replay["sampling"] == "every physics substep"
    assert (ankle_replay["steps"], ankle_replay["physics_steps"]) == (6, 24)
    overall = ankle_replay["overall"]
    assert overall["samples"] == samples and overall["outside_samples"] == 6 * 2
    assert overall["fraction_outside"] == pytest.approx(1 / DECIMATION)
    assert overall["worst"]["substep"] == 0 and overall["worst_ratio"] > 1.0

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
    with pytest.raises(RuntimeError), staged_directory(target, "eval") as staging:
        (staging / "half.json").write_text("{")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
    with staged_directory(target, "eval") as staging:
        (staging / "a.txt").write_text("1")
    with staged_directory(target, "eval", force=True) as staging:
        (staging / "b.txt").write_text("2")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert sorted(p.name for p in target.iterdir()) == [".linkage-lab-output.json", "b.txt"]


def test_cli_rejects_missing_or_unknown_policy(capsys):
    from linkage_lab.cli.main import main

    assert main(["eval", "--task", "LinkageLab-Velocity-Flat-Limit"]) == 2
    assert "give a policy" in capsys.readouterr().err
    assert main(["eval", "--task", "LinkageLab-Velocity-Flat-Limit", "--policy", "nope"]) == 2
    assert "unknown policy type 'nope'; known: checkpoint, onnx" in capsys.readouterr().err
