"""Checkpoints and runs: data-only loading, run ordering, Ctrl-C saves and resumption (a toy env, no sim).

The learning tests drive rsl-rl's real ``OnPolicyRunner`` (PPO, observation normalisers, Adam) on a
two-env toy problem, so the checkpoints are what ``runner.save`` writes in a real training.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import time
from pathlib import Path

import pytest
import torch

from linkage_lab.checkpoints import TRAINING_KEYS, CheckpointError, load_checkpoint, restore_runner
from linkage_lab.evaluation import policies
from linkage_lab.evaluation.policies import PolicyLoadError, read_checkpoint, resolve_checkpoint
from linkage_lab.runs import RunBusyError, create_run_dir, discard_run, latest_run_dir, list_runs, run_lock
from linkage_lab.training.loop import run_learning
from linkage_lab.training.resume import RESUME_SOURCES, ResumeError, ResumePoint, resolve_resume
from linkage_lab.training.trainer import (
    TrainingConfigError,
    _session_iterations,
    merge_overrides,
    reject_ignored_keys,
    validate_sizes,
)

pytestmark = pytest.mark.unit

NUM_ENVS, STEPS, EPOCHS, MINI_BATCHES = 2, 4, 2, 2


class ToyEnv:
    """rsl-rl ``VecEnv``: reward for actions near the observation, episodes of 6 steps.

    ``interrupt_at_step`` sends this process ``presses`` SIGINTs at the start of that (1-based) env
    step; ``completed`` counts the steps that ran to their end.
    """

    num_envs, num_actions, max_episode_length, device, cfg = NUM_ENVS, 2, 6, "cpu", {}

    def __init__(self, interrupt_at_step: int | None = None, presses: int = 1):
        self.episode_length_buf = torch.zeros(NUM_ENVS, dtype=torch.long)
        self.obs = torch.linspace(-1.0, 1.0, NUM_ENVS * 3).reshape(NUM_ENVS, 3)
        self.steps = 0
        self.completed = 0
        self.interrupt_at_step = interrupt_at_step
        self.presses = presses

    def get_observations(self):
        from tensordict import TensorDict

        return TensorDict({"policy": self.obs.clone()}, batch_size=[NUM_ENVS])

    def step(self, actions: torch.Tensor):
        self.steps += 1
        if self.steps == self.interrupt_at_step:
            for _ in range(self.presses):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.01)  # the handler runs between bytecodes: let each press be handled
        reward = -((actions - self.obs[:, :2]) ** 2).sum(dim=1)
        self.obs = torch.roll(self.obs, 1, dims=1) + 0.1
        self.episode_length_buf += 1
        dones = self.episode_length_buf >= self.max_episode_length
        self.episode_length_buf[dones] = 0
        extras = {"time_outs": dones.clone(), "log": {}}
        self.completed += 1
        return self.get_observations(), reward, dones.long(), extras


def runner_cfg(save_interval: int = 100) -> dict:
    """An rsl-rl 5 ``OnPolicyRunner`` config as Isaac Lab hands it over (tiny networks, normalisers on)."""
    gaussian = {"class_name": "GaussianDistribution", "init_std": 1.0, "std_type": "scalar"}
    return {
        "num_steps_per_env": STEPS,
        "save_interval": save_interval,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "logger": "tensorboard",
        "run_name": "",
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": EPOCHS,
            "num_mini_batches": MINI_BATCHES,
            "learning_rate": 1e-3,
            "schedule": "adaptive",
        },
        "actor": {
            "class_name": "MLPModel",
            "hidden_dims": [8],
            "obs_normalization": True,
            "distribution_cfg": gaussian,
        },
        "critic": {"class_name": "MLPModel", "hidden_dims": [8], "obs_normalization": True},
    }


def make_runner(run_dir: Path | None, env: ToyEnv | None = None):
    from rsl_rl.runners import OnPolicyRunner

    torch.manual_seed(0)
    return OnPolicyRunner(env or ToyEnv(), runner_cfg(), log_dir=None if run_dir is None else str(run_dir))


def adam_steps(state: dict) -> int:
    """Optimiser steps Adam counted (the same for every parameter)."""
    return int(next(iter(state["optimizer_state_dict"]["state"].values()))["step"])


def normaliser_count(state: dict) -> int:
    return int(state["actor_state_dict"]["obs_normalizer.count"])


def assert_same_tensors(a, b) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            assert_same_tensors(a[key], b[key])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same_tensors(x, y)
    elif isinstance(a, torch.Tensor):
        assert torch.equal(a, b)
    else:
        assert a == b


# --- data-only loading ---------------------------------------------------------------------------------


class _WritesMarker:
    """Unpickling this calls ``open(marker, "w")``: a stand-in for any code a crafted file could run."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@pytest.mark.parametrize("container", ["torch_zip", "plain_pickle"])
def test_crafted_checkpoint_is_refused_without_running_its_code(tmp_path, container):
    marker = tmp_path / "pwned"
    crafted = tmp_path / "model_1.pt"
    payload = {"actor_state_dict": {}, "iter": 1, "infos": _WritesMarker(marker)}
    if container == "torch_zip":
        torch.save(payload, crafted)
    else:
        crafted.write_bytes(pickle.dumps(payload, protocol=2))
    with pytest.raises(CheckpointError, match="could run arbitrary code"):
        load_checkpoint(crafted)
    with pytest.raises(PolicyLoadError, match="could run arbitrary code"):
        read_checkpoint(crafted)
    assert not marker.exists()
    # The payload is live: a full unpickle, what rsl-rl's runner.load does, runs it (torch then
    # rejects the plain pickle's missing magic number, too late).
    with contextlib.suppress(RuntimeError):
        torch.load(crafted, weights_only=False)
    assert marker.exists()


def test_load_runner_reads_the_file_once_and_as_data_only(tmp_path, monkeypatch):
    """Evaluation's runner loading never hands the file to rsl-rl's full-unpickling ``runner.load``."""
    trained = make_runner(tmp_path / "run")
    run_learning(trained, tmp_path / "run", 1)
    calls = []
    real_load = torch.load

    def spy(*args, **kwargs):
        calls.append(kwargs.get("weights_only"))
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    fresh = make_runner(None)
    monkeypatch.setattr(policies, "build_runner", lambda env, agent_cfg: fresh)
    runner = policies.load_runner(tmp_path / "run" / "model_0.pt", None, None)
    assert calls == [True]
    assert runner.current_learning_iteration == 0
    assert_same_tensors(runner.alg.save(), trained.alg.save())

    marker = tmp_path / "pwned"
    torch.save({"actor_state_dict": {}, "x": _WritesMarker(marker)}, tmp_path / "model_9.pt")
    with pytest.raises(PolicyLoadError, match="could run arbitrary code"):
        policies.load_runner(tmp_path / "model_9.pt", None, None)
    assert not marker.exists()


def test_rsl_rl_checkpoint_loads_as_data_and_restores_every_state(tmp_path):
    """What ``OnPolicyRunner.save`` writes (optimiser, normalisers, ``infos=None``) passes the data-only load."""
    from rsl_rl.runners import OnPolicyRunner

    trained = make_runner(tmp_path / "run")
    run_learning(trained, tmp_path / "run", 2)
    native = tmp_path / "native.pt"
    OnPolicyRunner.save(trained, str(native))  # rsl-rl's own writer, not the project's
    state = load_checkpoint(native, require=TRAINING_KEYS)
    assert state["iter"] == 1 and state["infos"] is None
    assert adam_steps(state) == 2 * EPOCHS * MINI_BATCHES
    assert normaliser_count(state) == 2 * STEPS * NUM_ENVS

    fresh = make_runner(None)
    assert not torch.equal(
        fresh.alg.get_policy().state_dict()["mlp.0.weight"], state["actor_state_dict"]["mlp.0.weight"]
    )
    assert restore_runner(fresh, state) == 1
    assert fresh.current_learning_iteration == 1
    assert_same_tensors(fresh.alg.save(), trained.alg.save())
    assert fresh.alg.learning_rate == state["optimizer_state_dict"]["param_groups"][0]["lr"]


def test_checkpoint_that_cannot_be_trained_on_or_does_not_fit(tmp_path):
    torch.save({"actor_state_dict": {}}, tmp_path / "policy_only.pt")
    with pytest.raises(CheckpointError, match="lacks critic_state_dict, optimizer_state_dict, iter"):
        load_checkpoint(tmp_path / "policy_only.pt", require=TRAINING_KEYS)
    state = make_runner(None).alg.save()
    state["actor_state_dict"]["mlp.0.weight"] = torch.zeros(8, 5)  # trained on 5 observations, not 3
    state["iter"] = 3
    with pytest.raises(CheckpointError, match="does not fit"):
        restore_runner(make_runner(None), state)


# --- Ctrl-C and resumption -----------------------------------------------------------------------------


def test_ctrl_c_saves_the_last_finished_iteration(tmp_path):
    run_dir = tmp_path / "run"
    # Iterations take STEPS env steps each: step 2 * STEPS + 2 is inside iteration 2's rollout.
    runner = make_runner(run_dir, ToyEnv(interrupt_at_step=2 * STEPS + 2))
    # What the process had before (the default handler, or SIG_IGN under nohup and some CI runners).
    handler_before = signal.getsignal(signal.SIGINT)
    outcome = run_learning(runner, run_dir, 100)
    assert outcome.interrupted and (outcome.first_iteration, outcome.last_iteration) == (0, 1)
    assert outcome.checkpoint == run_dir / "model_1.pt"
    assert sorted(p.name for p in run_dir.glob("model_*.pt")) == ["model_0.pt", "model_1.pt"]
    saved = load_checkpoint(outcome.checkpoint, require=TRAINING_KEYS)
    assert saved["iter"] == 1
    assert adam_steps(saved) == 2 * EPOCHS * MINI_BATCHES  # two finished updates, no more, no less
    assert_same_tensors(saved["actor_state_dict"], runner.alg.save()["actor_state_dict"])
    assert signal.getsignal(signal.SIGINT) is handler_before


def test_ctrl_c_waits_for_the_env_step_and_a_second_one_does_not(tmp_path):
    """One Ctrl-C lets the env step in progress end (no simulator left half stepped); two stop inside it."""
    env = ToyEnv(interrupt_at_step=2 * STEPS + 2)
    outcome = run_learning(make_runner(tmp_path / "once", env), tmp_path / "once", 100)
    assert outcome.interrupted and outcome.last_iteration == 1
    assert env.steps == env.completed == 2 * STEPS + 2

    env = ToyEnv(interrupt_at_step=2 * STEPS + 2, presses=2)
    outcome = run_learning(make_runner(tmp_path / "twice", env), tmp_path / "twice", 100)
    assert outcome.interrupted and outcome.last_iteration == 1
    assert (env.steps, env.completed) == (2 * STEPS + 2, 2 * STEPS + 1)
    assert adam_steps(load_checkpoint(outcome.checkpoint)) == 2 * EPOCHS * MINI_BATCHES


def test_ctrl_c_during_the_update_waits_for_it(tmp_path):
    """A Ctrl-C while the policy is updated lets that update finish; its iteration is the one saved."""
    run_dir = tmp_path / "run"
    runner = make_runner(run_dir)
    update = runner.alg.update
    calls = 0

    def update_interrupted_in_iteration_1():
        nonlocal calls
        calls += 1
        if calls == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return update()

    runner.alg.update = update_interrupted_in_iteration_1
    outcome = run_learning(runner, run_dir, 100)
    assert outcome.interrupted and outcome.last_iteration == 1 and calls == 2
    assert adam_steps(load_checkpoint(outcome.checkpoint)) == 2 * EPOCHS * MINI_BATCHES


def test_ctrl_c_before_the_first_iteration_leaves_no_run(tmp_path):
    run_dir = tmp_path / "logs" / "rsl_rl" / "exp" / "2030-01-01_00-00-00"
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text("{}")
    outcome = run_learning(make_runner(run_dir, ToyEnv(interrupt_at_step=2)), run_dir, 100)
    assert outcome.interrupted and outcome.last_iteration is None and outcome.checkpoint is None
    assert discard_run(run_dir) and not run_dir.exists()


def test_resume_continues_iterations_optimiser_normaliser_and_tensorboard(tmp_path):
    """Stop at iteration 1, resume for 2 more: the counts are those of 4 iterations in one go."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = tmp_path / "run"
    outcome = run_learning(make_runner(run_dir, ToyEnv(interrupt_at_step=2 * STEPS + 1)), run_dir, 100)
    assert outcome.last_iteration == 1
    saved = load_checkpoint(outcome.checkpoint, require=TRAINING_KEYS)

    resumed = make_runner(run_dir)
    restore_runner(resumed, saved)
    assert_same_tensors(resumed.alg.optimizer.state_dict(), saved["optimizer_state_dict"])
    assert_same_tensors(resumed.alg.save()["actor_state_dict"], saved["actor_state_dict"])
    assert resumed.logger.tot_timesteps == saved["infos"]["tot_timesteps"] == 2 * STEPS * NUM_ENVS
    resumed.current_learning_iteration = saved["iter"] + 1
    second = run_learning(resumed, run_dir, 2)
    assert (second.first_iteration, second.last_iteration, second.interrupted) == (2, 3, False)
    final = load_checkpoint(run_dir / "model_3.pt", require=TRAINING_KEYS)
    assert final["iter"] == 3
    assert adam_steps(final) == 4 * EPOCHS * MINI_BATCHES  # 2 without the restored optimiser
    assert normaliser_count(final) == 4 * STEPS * NUM_ENVS  # 2 * ... without the restored normaliser

    events = EventAccumulator(str(run_dir))
    events.Reload()
    steps = sorted(event.step for event in events.Scalars("Loss/learning_rate"))
    assert steps == [0, 1, 2, 3]


# --- run folders ---------------------------------------------------------------------------------------


def _run(root: Path, name: str, checkpoints: tuple[int, ...] = ()) -> Path:
    run_dir = root / "logs" / "rsl_rl" / "exp" / name
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text('{"task": "T"}')
    for it in checkpoints:
        (run_dir / f"model_{it}.pt").write_bytes(b"")
    return run_dir


def test_latest_is_the_newest_run_by_name_that_holds_a_checkpoint(tmp_path):
    logs = tmp_path / "logs"
    old = _run(tmp_path, "2025-01-02_10-00-00", (0, 50))
    new = _run(tmp_path, "2025-03-01_09-00-00_tuned", (0,))
    _run(tmp_path, "2025-04-01_00-00-00")  # a run that failed before its first checkpoint
    _run(tmp_path, "scratch", (3,))  # not Isaac Lab's name: older than every timestamped run
    os.utime(old, (2e9, 2e9))  # evaluating the old run touched it: the newest mtime
    assert latest_run_dir("exp", logs) == new
    assert resolve_checkpoint("latest", "T", "exp", logs) == new / "model_0.pt"
    assert [p.name for p in list_runs("exp", logs)][0] == "scratch"


def test_new_run_folders_never_collide(tmp_path):
    first = create_run_dir("exp", tmp_path / "logs")
    second = create_run_dir("exp", tmp_path / "logs")
    assert first != second and first.is_dir() and second.is_dir()
    assert create_run_dir("exp", tmp_path / "logs", "tuned").name.endswith("_tuned")


def test_a_run_in_training_cannot_be_resumed_beside_it(tmp_path):
    run_dir = create_run_dir("exp", tmp_path / "logs")
    with run_lock(run_dir):
        with pytest.raises(RunBusyError, match="being trained by another process"), run_lock(run_dir):
            pass
    with run_lock(run_dir):  # released when the training ends
        pass


def test_resume_resolution(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    run = _run(tmp_path, "2025-01-02_10-00-00", (0, 50, 99))
    empty = _run(tmp_path, "2025-05-01_00-00-00")

    point = resolve_resume("latest", "T", "exp", logs)
    assert (point.checkpoint, point.run_dir) == (run / "model_99.pt", run)
    assert resolve_resume(run.name, "T", "exp", logs).run_dir == run
    assert resolve_resume(str(run / "model_99.pt"), "T", "exp", logs).run_dir == run
    older = resolve_resume(run.name, "T", "exp", logs, checkpoint="model_50.pt")
    assert older.checkpoint == run / "model_50.pt" and older.run_dir is None and "new run" in older.note

    shipped = tmp_path / "policies" / "T" / "model.pt"
    shipped.parent.mkdir(parents=True)
    shipped.write_bytes(b"")
    monkeypatch.setitem(RESUME_SOURCES, "pretrained", lambda task, experiment, root: shipped)
    fine_tune = resolve_resume("pretrained", "T", "exp", logs)
    assert fine_tune.checkpoint == shipped and fine_tune.run_dir is None

    with pytest.raises(ResumeError, match="holds no model"):
        resolve_resume(empty.name, "T", "exp", logs)
    with pytest.raises(ResumeError, match="has no model_7.pt; it holds model_0.pt, model_50.pt, model_99.pt"):
        resolve_resume(run.name, "T", "exp", logs, checkpoint="model_7.pt")
    with pytest.raises(ResumeError, match="already a checkpoint file"):
        resolve_resume(str(shipped), "T", "exp", logs, checkpoint="model_0.pt")
    with pytest.raises(ResumeError, match="no run 'nope'.*latest, pretrained"):
        resolve_resume("nope", "T", "exp", logs)
    with pytest.raises(ResumeError, match="train first"):
        resolve_resume("latest", "T", "other_exp", logs)


# --- request checks ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "token", ["agent.resume=true", "agent.load_run=2025-01-02_10-00-00", "agent.load_checkpoint=x"]
)
def test_isaac_lab_resume_keys_are_refused(token):
    with pytest.raises(TrainingConfigError, match="--resume"):
        reject_ignored_keys(["env.scene.num_envs=4", token])


def test_sizes_are_checked_before_building():
    from types import SimpleNamespace

    def cfg(**changes):
        algorithm = SimpleNamespace(num_learning_epochs=5, num_mini_batches=4)
        return SimpleNamespace(**{"num_steps_per_env": 24, "save_interval": 50, "algorithm": algorithm, **changes})

    validate_sizes(4, cfg(), 10)
    for args, match in [
        ((0, cfg(), 10), "number of envs"),
        ((4, cfg(), -5), "iterations"),
        ((4, cfg(num_steps_per_env=0), 10), "num_steps_per_env"),
        ((4, cfg(save_interval=0), 10), "save_interval"),
        ((1, cfg(num_steps_per_env=2), 10), "cannot be split into agent.algorithm.num_mini_batches=4"),
    ]:
        with pytest.raises(TrainingConfigError, match=match):
            validate_sizes(*args)


def test_resumed_overrides_keep_the_runs_and_take_the_commands():
    merged = merge_overrides(["env.scene.num_envs=64", "presets=box"], ["env.scene.num_envs=8", "agent.seed=3"])
    assert merged == ["env.scene.num_envs=8", "presets=box", "agent.seed=3"]


def test_iterations_of_a_session():
    """A resumed run finishes its plan; --max-iterations means that many more; a new run its config's."""
    from types import SimpleNamespace

    cfg = SimpleNamespace(max_iterations=500)
    run = ResumePoint(Path("run/model_199.pt"), Path("run"), "")
    elsewhere = ResumePoint(Path("policies/T/model.pt"), None, "")
    record = {"planned_iterations": 300}
    assert _session_iterations(None, {}, cfg, [], None, 0) == 500
    assert _session_iterations(None, {}, cfg, [], 7, 0) == 7
    assert _session_iterations(run, record, cfg, [], None, 200) == 100
    assert _session_iterations(run, record, cfg, [], 50, 200) == 50
    assert _session_iterations(run, record, cfg, ["agent.max_iterations=500"], None, 200) == 500
    assert _session_iterations(elsewhere, {}, cfg, [], None, 200) == 500
    with pytest.raises(TrainingConfigError, match="already finished its 300 planned iterations"):
        _session_iterations(run, record, cfg, [], None, 300)
