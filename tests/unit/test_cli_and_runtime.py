"""Device selection, task lookup and the CLI's error messages."""

from __future__ import annotations

import subprocess
import sys

import pytest

from linkage_lab.cli.main import main
from linkage_lab.runtime import OverrideError, pick_device, validate_overrides

pytestmark = pytest.mark.unit


def test_pick_device_honours_request_and_env(monkeypatch):
    assert pick_device("cuda:1") == "cuda:1"
    monkeypatch.setenv("LINKAGE_LAB_DEVICE", "cpu")
    assert pick_device() == "cpu"


def test_pick_device_falls_back_to_cpu_without_cuda(monkeypatch):
    import torch

    monkeypatch.delenv("LINKAGE_LAB_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device() == "cpu"


def test_pick_device_prefers_a_working_gpu(monkeypatch):
    import torch

    monkeypatch.delenv("LINKAGE_LAB_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    real_zeros = torch.zeros
    monkeypatch.setattr(torch, "zeros", lambda *a, **k: real_zeros(1))
    assert pick_device() == "cuda:0"


@pytest.mark.parametrize(
    "token", ["env.scene.num_envs=32", "agent.max_iterations=5", "physics=newton_mjwarp", "+a.b=1"]
)
def test_valid_overrides(token):
    assert validate_overrides([token]) == [token]


@pytest.mark.parametrize("token", ["bogus", "=3", "--num_envs", "env.scene.num_envs"])
def test_malformed_overrides(token):
    with pytest.raises(OverrideError, match="malformed override"):
        validate_overrides([token])


def test_unknown_task_lists_project_tasks(capsys):
    assert main(["train", "--task", "LinkageLab-Nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown task id 'LinkageLab-Nope'" in err
    assert "LinkageLab-Velocity-Flat-Limit" in err


def test_unknown_override_key_is_a_clear_error(capsys):
    assert main(["bench", "env", "--task", "LinkageLab-Velocity-Flat-Limit", "bogus"]) == 2
    assert "malformed override" in capsys.readouterr().err


def test_unknown_override_path_is_rejected():
    from linkage_lab.runtime import resolve_configs

    with pytest.raises(OverrideError, match="has no field 'no_such_field'"):
        resolve_configs("LinkageLab-Velocity-Flat-Limit", ["env.scene.no_such_field=3"], "cpu")


def test_overrides_reach_env_and_agent_configs():
    from linkage_lab.runtime import resolve_configs

    env_cfg, agent_cfg = resolve_configs(
        "LinkageLab-Velocity-Flat-Limit",
        ["env.scene.num_envs=7", "agent.max_iterations=3", "env.rewards.dof_torques_l2.weight=-1e-5"],
        "cpu",
    )
    assert env_cfg.scene.num_envs == 7
    assert agent_cfg.max_iterations == 3
    assert env_cfg.rewards.dof_torques_l2.weight == -1e-5  # exponent without a dot: a float, as hydra reads it
    assert env_cfg.sim.device == "cpu" and agent_cfg.device == "cpu"


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for command in ("demo", "assets", "train", "bench"):
        assert command in out


def test_unknown_robot_for_assets(capsys):
    assert main(["assets", "build", "r2d2"]) == 2
    assert "unknown robot" in capsys.readouterr().err


def test_entry_point_registers_tasks():
    from importlib.metadata import entry_points

    import gymnasium as gym

    (entry,) = [ep for ep in entry_points(group="isaaclab.tasks") if ep.name == "linkage_lab"]
    assert entry.value == "linkage_lab.tasks.registered"
    entry.load()  # what Isaac Lab does with it: every task id is registered
    assert {"LinkageLab-Velocity-Flat-Limit", "LinkageLab-Velocity-Flat-Marvin-Residual"} <= set(gym.registry)


@pytest.mark.parametrize(
    "token, message",
    [
        ("env.scene.num_envs=abc", "expects int"),
        ("agent.max_iterations=1.5", "expects int"),
        ("env.rewards.dof_torques_l2.weight=1e-5x", "expects float"),
        ("physics=nonexistent", "Unknown preset"),
        ("agent.no_such=1", "has no field"),
    ],
)
def test_bad_override_values_are_rejected(token, message):
    from linkage_lab.runtime import resolve_configs

    with pytest.raises(OverrideError, match=message):
        resolve_configs("LinkageLab-Velocity-Flat-Limit", [token], "cpu")


def test_a_function_field_takes_module_colon_name():
    from isaaclab_tasks.core.velocity import mdp

    from linkage_lab.runtime import resolve_configs

    token = "env.rewards.feet_air_time.func=isaaclab_tasks.core.velocity.mdp:feet_air_time_positive_biped"
    env_cfg, _ = resolve_configs("LinkageLab-Velocity-Flat-Limit", [token], "cpu")
    assert env_cfg.rewards.feet_air_time.func is mdp.feet_air_time_positive_biped
    default_cfg, _ = resolve_configs("LinkageLab-Velocity-Flat-Limit", [], "cpu")
    assert default_cfg.rewards.feet_air_time.func is not mdp.feet_air_time_positive_biped


@pytest.mark.parametrize(
    "value, message",
    [
        ("feet_air_time_positive_biped", "give it as module:name"),
        ("no_such_module_here:f", "cannot import module 'no_such_module_here'"),
        ("math:no_such_function", "module 'math' has no 'no_such_function'"),
        ("math:pi", "math:pi is a float, not a function"),
    ],
)
def test_a_function_field_refuses_what_is_not_an_importable_function(value, message):
    from linkage_lab.runtime import resolve_configs

    with pytest.raises(OverrideError, match=message):
        resolve_configs("LinkageLab-Velocity-Flat-Limit", [f"env.rewards.feet_air_time.func={value}"], "cpu")


def test_sigusr1_prints_every_threads_stack_and_the_command_goes_on():
    code = (
        "import os, signal, time\n"
        "from linkage_lab.cli.main import enable_stack_dumps\n"
        "enable_stack_dumps()\n"
        "def waiting_here():\n"
        "    os.kill(os.getpid(), signal.SIGUSR1)\n"
        "    time.sleep(0.2)\n"
        "waiting_here()\n"
        "print('carried on')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "carried on"
    assert "waiting_here" in done.stderr and "Current thread" in done.stderr


def test_the_demo_presets_overrides_resolve_on_its_task():
    """Every override of the embedded demo preset applies to its task; the logging-only symmetry config is dropped."""
    from linkage_lab.cli.demo import load_preset
    from linkage_lab.runtime import resolve_configs

    preset = load_preset("demo")
    default_env, default_agent = resolve_configs(preset["task"], [], "cpu")
    env_cfg, agent_cfg = resolve_configs(preset["task"], preset["overrides"], "cpu")
    assert default_agent.algorithm.symmetry_cfg is not None
    assert agent_cfg.algorithm.symmetry_cfg is None
    assert agent_cfg.max_iterations == 300 and agent_cfg.max_iterations != default_agent.max_iterations
    assert env_cfg.scene.num_envs == default_env.scene.num_envs
    # The demo trains at 5 ms (its 15 minutes), every setting derived from the step moved with it.
    assert (default_env.sim.dt, default_env.decimation) == (0.0025, 8)
    assert (env_cfg.sim.dt, env_cfg.decimation, env_cfg.scene.contact_forces.update_period) == (0.005, 4, 0.005)
    assert tuple(env_cfg.actions.joint_pos.target_delay_range_steps) == (0, 4)
    assert env_cfg.scene.robot.actuators["legs"].physics_dt_s == 0.005
