"""User errors of eval, export and sprint: one line, exit 2, and found before any simulation is built.

Every test here replaces :func:`linkage_lab.runtime.make_env` with one that fails the test: a
check that only happens once the env is built (15–45 s on a CPU) is a check that came too late.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from linkage_lab.cli.main import main
from linkage_lab.runtime import make_env as REAL_MAKE_ENV

pytestmark = pytest.mark.unit

LIMIT = "LinkageLab-Velocity-Flat-Limit"
MARVIN = "LinkageLab-Velocity-Flat-Marvin"
#: Actor sizes (observations, actions), counted by hand from the tasks' terms: base linear and
#: angular velocity, gravity and the velocity command (3 each), then joint positions, joint
#: velocities and the last action, one per joint (Limit 12 joints, Marvin 16).
LIMIT_SIZES = (4 * 3 + 3 * 12, 12)
MARVIN_SIZES = (4 * 3 + 3 * 16, 16)


@pytest.fixture(autouse=True)
def no_simulation(monkeypatch):
    """Fail the test if anything builds a simulation."""
    import linkage_lab.runtime

    def make_env(*args, **kwargs):
        raise AssertionError("the simulation was built before the user error was found")

    monkeypatch.setattr(linkage_lab.runtime, "make_env", make_env)


def one_error_line(capsys, *fragments: str) -> str:
    """The command's single error line (no traceback), checked to contain ``fragments``."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("linkage-lab ")]
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def onnx_file(path: Path, observations: int, actions: int, batch: int | str = "batch") -> Path:
    """A linear policy ``[batch, observations] -> [batch, actions]`` as an ONNX file."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.zeros((observations, actions), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["obs", "w"], ["actions"])],
        "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [batch, observations])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, [batch, actions])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, str(path))
    return path


def checkpoint_file(path: Path, observations: int, actions: int) -> Path:
    """An rsl-rl checkpoint of an MLP actor, alone in its folder (no ``run.json`` names its task)."""
    hidden = 8
    actor = {
        "mlp.0.weight": torch.zeros(hidden, observations),
        "mlp.0.bias": torch.zeros(hidden),
        "mlp.2.weight": torch.zeros(actions, hidden),
        "mlp.2.bias": torch.zeros(actions),
    }
    torch.save({"actor_state_dict": actor, "iter": 1}, path)
    return path


def user_folder(path: Path) -> Path:
    (path / "sub").mkdir(parents=True)
    (path / "notes.txt").write_text("mine")
    (path / "sub" / "data.csv").write_text("1,2")
    return path


def command_line(command: str, tmp_path: Path, out: Path) -> list[str]:
    """A valid ``command`` line writing to ``out``."""
    if command == "eval":
        return ["eval", "--task", LIMIT, "--onnx", str(onnx_file(tmp_path / "p.onnx", *LIMIT_SIZES)), "--out", str(out)]
    if command == "export":
        ckpt = checkpoint_file(tmp_path / "model_1.pt", *LIMIT_SIZES)
        return ["export", "--task", LIMIT, "--checkpoint", str(ckpt), "--out", str(out)]
    return ["sprint", "--out", str(out)]


# --- output folders (item 1) ---


@pytest.mark.parametrize("command", ["eval", "export", "sprint"])
def test_a_foreign_out_folder_is_refused_and_kept(capsys, tmp_path, command):
    folder = user_folder(tmp_path / "mine")
    for force in ([], ["--force"]):
        assert main(command_line(command, tmp_path, folder) + force) == 2
        one_error_line(capsys, str(folder), "not a linkage-lab output")
    assert (folder / "notes.txt").read_text() == "mine" and (folder / "sub" / "data.csv").read_text() == "1,2"


@pytest.mark.parametrize("command", ["eval", "export", "sprint"])
@pytest.mark.parametrize("where", ["file", "proc", "under_a_file"])
def test_out_on_a_file_or_unwritable_place_fails_first(capsys, tmp_path, command, where):
    (tmp_path / "a_file").write_text("x")
    out = {
        "file": tmp_path / "a_file",
        "proc": Path("/proc/linkage-lab-out"),
        "under_a_file": tmp_path / "a_file" / "o",
    }
    assert main(command_line(command, tmp_path, out[where])) == 2
    one_error_line(capsys, str(out[where]))
    assert (tmp_path / "a_file").read_text() == "x"


#: The metrics of a finished race, for tests that stand in for the race itself.
FINISHED_RACE = {
    "ended_reason": "finished",
    "time": 19.6,
    "distance_m": 10.0,
    "average_speed_mps": 0.51,
    "max_lateral_offset_m": 0.1,
    "fell": False,
    "duration_s": 19.6,
    "ankle_replay": {},
}


def test_a_previous_sprint_output_is_replaced_only_with_force(capsys, tmp_path, monkeypatch):
    from linkage_lab.outputs import MANIFEST_FILE, read_manifest, write_output
    from linkage_lab.sprint import runner

    out = tmp_path / "race"
    write_output(out, "sprint", lambda folder: (folder / "metrics.json").write_text("{}"))
    assert main(["sprint", "--out", str(out)]) == 2
    one_error_line(capsys, "holds a previous sprint output; pass --force")
    metrics = dict(FINISHED_RACE)
    record = runner.RaceRecord(metrics, [(0.0, 0.0), (10.0, 0.1)], {"policy": "scripted", "ankle": "box"})
    monkeypatch.setattr(runner, "run_race", lambda *args, **kwargs: record)
    assert main(["sprint", "--out", str(out), "--force"]) == 0
    assert json.loads((out / "metrics.json").read_text()) == metrics
    assert read_manifest(out)["files"] == ["metrics.json", "path.png", "race.json"]
    assert sorted(p.name for p in out.iterdir()) == sorted([MANIFEST_FILE, "metrics.json", "path.png", "race.json"])


def test_sprint_passes_env_overrides_to_the_race_and_refuses_malformed_ones(capsys, tmp_path, monkeypatch):
    from linkage_lab.sprint import runner

    seen = {}
    metrics = dict(FINISHED_RACE)

    def race(*args, **kwargs):
        seen.update(kwargs)
        return runner.RaceRecord(metrics, [(0.0, 0.0), (10.0, 0.0)], {"policy": "scripted", "ankle": "box"})

    monkeypatch.setattr(runner, "run_race", race)
    token = "env.actions.joint_pos.turn_per_yaw_rate_s=0.5"
    assert main(["sprint", "--out", str(tmp_path / "race"), token]) == 0
    assert list(seen["env_overrides"]) == [token]
    seen.clear()
    assert main(["sprint", "--out", str(tmp_path / "race2"), "turn_per_yaw_rate_s"]) == 2
    one_error_line(capsys, "malformed override", "turn_per_yaw_rate_s")
    assert seen == {} and not (tmp_path / "race2").exists()


def test_a_race_whose_folder_cannot_be_written_is_kept(capsys, tmp_path, monkeypatch):
    import shutil

    from linkage_lab import outputs
    from linkage_lab.sprint import runner

    metrics = {
        "ended_reason": "fell",
        "time": None,
        "distance_m": 3.2,
        "average_speed_mps": 0.3,
        "max_lateral_offset_m": 0.1,
        "fell": True,
        "duration_s": 10.5,
        "ankle_replay": {},
    }
    out = tmp_path / "race"

    def race_then_lose_the_folder(*args, **kwargs):
        user_folder(out)  # the folder was taken while the race ran
        return runner.RaceRecord(metrics, [(0.0, 0.0)], {"policy": "scripted", "ankle": "box"})

    monkeypatch.setattr(runner, "run_race", race_then_lose_the_folder)
    monkeypatch.setattr(outputs.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    assert main(["sprint", "--out", str(out)]) == 2
    line = one_error_line(capsys, f"cannot write sprint output to {out}", "it was written to")
    (fallback,) = (tmp_path / "tmp").iterdir()
    assert str(fallback) in line
    assert json.loads((fallback / "metrics.json").read_text()) == metrics
    assert (out / "notes.txt").read_text() == "mine"
    shutil.rmtree(fallback)


# --- policy files (item 7) ---


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: d / "missing.onnx", "does not exist"),
        (lambda d: (d / "junk.onnx", (d / "junk.onnx").write_bytes(b"not onnx"))[0], "cannot be loaded"),
        (lambda d: onnx_file(d / "p.onnx", MARVIN_SIZES[0], 10), "outputs 10 actions, the task takes 16"),
        (lambda d: onnx_file(d / "p.onnx", *LIMIT_SIZES), "expects 48 observations, the task's actor gets 60"),
        (lambda d: onnx_file(d / "p.onnx", MARVIN_SIZES[0], 10, batch=1), "outputs 10 actions"),
    ],
)
def test_onnx_is_checked_before_the_build(capsys, tmp_path, make, message):
    path = make(tmp_path)
    assert main(["eval", "--task", MARVIN, "--onnx", str(path), "--out", str(tmp_path / "o")]) == 2
    one_error_line(capsys, message)
    assert main(["sprint", "--onnx", str(path), "--out", str(tmp_path / "o")]) == 2
    one_error_line(capsys, message)


def test_a_fitting_onnx_passes_the_check(tmp_path):
    from linkage_lab.evaluation.policy_check import TaskSizes, check_onnx_file

    check_onnx_file(onnx_file(tmp_path / "p.onnx", *MARVIN_SIZES), TaskSizes(*MARVIN_SIZES))


def test_a_copied_checkpoint_of_another_task_is_checked_before_the_build(capsys, tmp_path):
    ckpt = checkpoint_file(tmp_path / "model_5.pt", *LIMIT_SIZES)
    message = "trained with 48 observations and 12 actions, LinkageLab-Velocity-Flat-Marvin has 60 observations"
    assert main(["eval", "--task", MARVIN, "--checkpoint", str(ckpt), "--out", str(tmp_path / "e")]) == 2
    one_error_line(capsys, message)
    assert main(["export", "--task", MARVIN, "--checkpoint", str(ckpt), "--out", str(tmp_path / "x")]) == 2
    one_error_line(capsys, message)
    assert main(["sprint", "--checkpoint", str(ckpt), "--out", str(tmp_path / "s")]) == 2
    one_error_line(capsys, "trained with 48 observations and 12 actions")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "checkpoint"], "--policy checkpoint needs --checkpoint"),
        (["--policy", "onnx"], "--policy onnx needs --onnx"),
        (["--policy", "scripted", "--checkpoint", "latest"], "takes no --checkpoint or --onnx"),
    ],
)
def test_sprint_policy_means_the_type_as_in_eval(capsys, tmp_path, args, message):
    assert main(["sprint", *args, "--out", str(tmp_path / "s")]) == 2
    one_error_line(capsys, message)
    with pytest.raises(SystemExit):  # a source where the type goes is a usage error, as in eval
        main(["sprint", "--policy", "latest", "--out", str(tmp_path / "t")])


def test_task_sizes_from_the_config():
    from linkage_lab.evaluation.policy_check import task_sizes
    from linkage_lab.runtime import resolve_configs

    for task, sizes in ((LIMIT, LIMIT_SIZES), (MARVIN, MARVIN_SIZES), ("LinkageLab-Sprint-Marvin", MARVIN_SIZES)):
        found = task_sizes(*resolve_configs(task, [], "cpu"))
        assert (found.observations, found.actions) == sizes, task


def test_task_sizes_keep_modifiers_and_history_and_give_up_on_unknown_terms():
    from isaaclab.managers import ObservationTermCfg
    from isaaclab.utils.modifiers import ModifierCfg

    from linkage_lab.evaluation.policy_check import task_sizes
    from linkage_lab.runtime import resolve_configs

    env_cfg, agent_cfg = resolve_configs(LIMIT, [], "cpu")
    policy = env_cfg.observations.policy
    # A modifier keeps a term's size (Isaac Lab sizes a term before its modifiers).
    policy.joint_pos.modifiers = [*(policy.joint_pos.modifiers or []), ModifierCfg(func=lambda x: x)]
    assert task_sizes(env_cfg, agent_cfg).observations == LIMIT_SIZES[0]
    # Three frames of joint velocities: 2 × 12 more.
    policy.joint_vel.history_length = 3
    assert task_sizes(env_cfg, agent_cfg).observations == LIMIT_SIZES[0] + 24
    policy.mystery = ObservationTermCfg(func=lambda env: None)
    assert task_sizes(env_cfg, agent_cfg) is None


# --- sprint --gait (item 7) ---


@pytest.mark.parametrize(
    "gait, fragments",
    [
        ('{"step_lenght_m": 0.1}', ["unknown gait parameter(s) 'step_lenght_m'", "valid: ", "step_length_m"]),
        ('{"step_length_m": -0.1}', ["step_length_m = -0.1 is outside [0, inf)"]),
        ('{"frequency_hz": 0}', ["frequency_hz = 0 is outside (0, inf)"]),
        ('{"double_support_margin": 1.2}', ["double_support_margin = 1.2 is outside [0, 1)"]),
        ('{"step_height_m": "high"}', ["step_height_m must be a finite number"]),
        ('{"hip_height_m": 0.9}', ["leaves the leg's reach"]),
        ("[0.1]", ["--gait must be a JSON object"]),
        ("{", ["--gait is not valid JSON"]),
    ],
)
def test_gait_keys_and_values_are_checked_before_the_race(capsys, tmp_path, gait, fragments):
    assert main(["sprint", "--gait", gait, "--out", str(tmp_path / "o")]) == 2
    one_error_line(capsys, *fragments)


# --- hydra overrides (item 7) ---


@pytest.mark.parametrize("token", ["envs.scene.num_envs=4", "num_envs=4", "+envs.scene.num_envs=4"])
def test_an_unknown_override_root_is_one_line(capsys, tmp_path, token):
    assert main(["eval", "--task", LIMIT, "--policy", "scripted", "--out", str(tmp_path / "o"), token]) == 2
    one_error_line(capsys, f"{token!r}: unknown key", "overrides start with env. or agent.")


def test_preset_selectors_still_pass():
    from linkage_lab.runtime import resolve_configs

    env_cfg, _ = resolve_configs(MARVIN, ["presets=box", "physics=newton_mjwarp", "env.scene.num_envs=3"], "cpu")
    assert env_cfg.scene.num_envs == 3


# --- errors inside the simulation context (item 7) ---


@pytest.fixture
def fake_env(monkeypatch):
    """The real ``make_env`` and Isaac Lab's ``launch_simulation`` around a stand-in env (no physics)."""
    import gymnasium as gym

    class Env:
        closed = False

        def close(self):
            Env.closed = True

    monkeypatch.setattr(gym, "make", lambda *args, **kwargs: Env())
    return Env


def test_a_user_error_in_the_simulation_prints_no_traceback(capsys, fake_env):
    from linkage_lab.evaluation.policies import PolicyLoadError

    with pytest.raises(PolicyLoadError, match="does not fit") as info:
        with REAL_MAKE_ENV(LIMIT, 2, "cpu"):
            raise PolicyLoadError("policy.onnx does not fit")
    assert fake_env.closed
    assert "Traceback" not in capsys.readouterr().err
    assert not isinstance(info.value.__context__, SystemExit)


def test_a_bug_in_the_simulation_keeps_its_type_and_traceback(fake_env):
    def buggy():
        return {}["missing"]

    with pytest.raises(KeyError) as info:
        with REAL_MAKE_ENV(LIMIT, 2, "cpu"):
            buggy()
    assert info.traceback[-1].name == "buggy"
    assert fake_env.closed


def test_user_errors_raised_below_a_command_are_one_line(capsys, monkeypatch):
    import linkage_lab.cli.ankle
    from linkage_lab.evaluation.policies import PolicyLoadError

    def fail(args):
        raise PolicyLoadError("checkpoint x.pt does not fit")

    monkeypatch.setattr(linkage_lab.cli.ankle, "run_report", fail)
    assert main(["ankle", "report"]) == 2
    one_error_line(capsys, "linkage-lab ankle: error: checkpoint x.pt does not fit")


# --- devices (item 7) ---


@pytest.mark.parametrize(
    "device, message",
    [("foo", "unknown device 'foo': use cpu, cuda or cuda:N"), ("cuda:7", "device 'cuda:7' is not available")],
)
def test_an_unusable_device_is_one_line_before_the_build(capsys, tmp_path, device, message):
    argv = ["eval", "--task", LIMIT, "--policy", "scripted", "--device", device, "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    one_error_line(capsys, message)
