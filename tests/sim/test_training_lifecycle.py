"""The training lifecycle end to end: Ctrl-C saves and exits 130, --resume continues, bad requests stop early.

The Ctrl-C test runs ``linkage-lab train`` as a user does, in a subprocess, and sends it SIGINT once
it has logged an iteration. A tiny PPO (2 envs, 4 steps per env, one epoch of one mini-batch) keeps
the counts exact: every iteration adds ``4 * 2`` samples to the observation normalisers and one step
to Adam.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from linkage_lab.checkpoints import TRAINING_KEYS, load_checkpoint

pytestmark = pytest.mark.sim

TASK = "LinkageLab-Velocity-Flat-Limit"
ENVS, STEPS = 2, 4
TINY = [
    f"agent.num_steps_per_env={STEPS}",
    "agent.algorithm.num_learning_epochs=1",
    "agent.algorithm.num_mini_batches=1",
    "agent.save_interval=1000",
]


def _cli(log_dir: Path, *args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("linkage-lab")), "train", "--task", TASK, "--device", "cpu", *args]


def _env(log_dir: Path) -> dict[str, str]:
    # Verbose: the test reads rsl-rl's own per-iteration blocks, which go to logs/framework.log otherwise.
    return {
        **os.environ,
        "LINKAGE_LAB_LOG_DIR": str(log_dir),
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "1",
        "LINKAGE_LAB_VERBOSE": "1",
    }


def _adam_steps(state: dict) -> int:
    return int(next(iter(state["optimizer_state_dict"]["state"].values()))["step"])


def _normaliser_count(state: dict) -> int:
    return int(state["actor_state_dict"]["obs_normalizer.count"])


def _train_until(signum: int, logs: Path) -> tuple[int, str]:
    """Start a long training, send ``signum`` once it has logged iteration 1; its exit status and output."""
    cmd = _cli(logs, "--num-envs", str(ENVS), "--max-iterations", "500", *TINY)
    proc = subprocess.Popen(cmd, env=_env(logs), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    logged = threading.Event()

    def read() -> None:
        for line in proc.stdout:
            lines.append(line)
            if "Learning iteration 1/" in line:
                logged.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert logged.wait(600), "no iteration logged:\n" + "".join(lines[-60:])
        time.sleep(0.5)
        proc.send_signal(signum)
        try:
            rc = proc.wait(180)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)  # the CLI prints every thread's stack: where it is stuck
            time.sleep(3)
            pytest.fail(f"no exit within 180 s of signal {signum}; its output ends:\n" + "".join(lines[-150:]))
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(10)
    return rc, "".join(lines)


def test_sigterm_saves_and_exits_143(tmp_path):
    """What ``timeout``, ``docker stop`` and job schedulers send: handled as Ctrl-C, with its own status."""
    logs = tmp_path / "logs"
    rc, out = _train_until(signal.SIGTERM, logs)
    assert rc == 143, out[-4000:]
    assert "training interrupted (SIGTERM)" in out and "Traceback" not in out, out[-4000:]
    saved = re.search(r"saved iteration (\d+): (\S+)", out)
    assert saved, out[-4000:]
    (run_dir,) = (logs / "rsl_rl" / "limit_flat").iterdir()
    stopped = int(saved.group(1))
    assert Path(saved.group(2)) == run_dir / f"model_{stopped}.pt" and stopped >= 1
    assert load_checkpoint(run_dir / f"model_{stopped}.pt", require=TRAINING_KEYS)["iter"] == stopped
    record = json.loads((run_dir / "training.json").read_text())
    assert (record["status"], record["last_iteration"]) == ("interrupted", stopped)


def test_ctrl_c_saves_exits_130_and_resume_continues(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logs = tmp_path / "logs"
    rc, out = _train_until(signal.SIGINT, logs)
    assert rc == 130, out[-4000:]
    assert "training finished" not in out and "Traceback" not in out, out[-4000:]
    saved = re.search(r"saved iteration (\d+): (\S+)", out)
    assert saved, out[-4000:]
    stopped = int(saved.group(1))
    (run_dir,) = (logs / "rsl_rl" / "limit_flat").iterdir()
    assert Path(saved.group(2)) == run_dir / f"model_{stopped}.pt"
    assert f"--resume {run_dir.name}" in out
    logged_iterations = [int(i) for i in re.findall(r"Learning iteration (\d+)/", out)]
    assert stopped >= max(logged_iterations) - 1 >= 0 and stopped >= 1
    assert sorted(p.name for p in run_dir.glob("model_*.pt")) == sorted({"model_0.pt", f"model_{stopped}.pt"})
    state = load_checkpoint(run_dir / f"model_{stopped}.pt", require=TRAINING_KEYS)
    assert state["iter"] == stopped
    assert _adam_steps(state) == stopped + 1
    assert _normaliser_count(state) == (stopped + 1) * STEPS * ENVS
    record = json.loads((run_dir / "training.json").read_text())
    assert (record["status"], record["last_iteration"]) == ("interrupted", stopped)

    resumed = subprocess.run(
        _cli(logs, "--resume", "latest", "--max-iterations", "2"),
        env=_env(logs),
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = resumed.stdout + resumed.stderr
    assert resumed.returncode == 0, out[-4000:]
    assert f"continuing run {run_dir.name} from model_{stopped}.pt" in out
    assert [int(i) for i in re.findall(r"Learning iteration (\d+)/", out)] == [stopped + 1, stopped + 2]
    assert list((logs / "rsl_rl" / "limit_flat").iterdir()) == [run_dir]
    final = load_checkpoint(run_dir / f"model_{stopped + 2}.pt", require=TRAINING_KEYS)
    assert final["iter"] == stopped + 2
    # Restored, not restarted: a fresh optimiser and normaliser would count 2 iterations only.
    assert _adam_steps(final) == stopped + 3
    assert _normaliser_count(final) == (stopped + 3) * STEPS * ENVS
    record = json.loads((run_dir / "training.json").read_text())
    assert record["status"] == "finished" and [s["status"] for s in record["sessions"]] == ["interrupted", "finished"]
    assert record["num_envs"] == ENVS  # the run's own settings, re-applied on resume

    events = EventAccumulator(str(run_dir))
    events.Reload()
    steps = [event.step for event in events.Scalars("Loss/learning_rate")]
    assert len(steps) == len(set(steps)) and max(steps) == stopped + 2
    assert {stopped + 1, stopped + 2} | set(range(stopped)) <= set(steps)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["env.scene.num_envs=0"], "number of envs"),
        (["--num-envs", "0"], "number of envs"),
        (["agent.num_steps_per_env=0"], "agent.num_steps_per_env"),
        (["agent.max_iterations=-3"], "iterations"),
        (["agent.resume=true", "agent.load_run=2025-01-01_00-00-00"], "--resume"),
        (["--checkpoint", "model_3.pt"], "give --resume"),
        (["--resume", "latest"], "train first"),
    ],
)
def test_bad_requests_fail_in_one_line_before_building(tmp_path, args, message):
    logs = tmp_path / "logs"
    proc = subprocess.run(_cli(logs, *args), env=_env(logs), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("linkage-lab train: error:")]
    assert len(errors) == 1 and message in errors[0], proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "Number of environments" not in proc.stdout
    assert not (logs / "rsl_rl").exists() or not any((logs / "rsl_rl").rglob("run.json"))


def test_a_run_that_fails_leaves_no_run_folder(tmp_path):
    """A training that fails before its first checkpoint removes its folder: it must not look like a run."""
    from linkage_lab.evaluation.policies import PolicyLoadError, resolve_checkpoint
    from linkage_lab.training import train

    logs = tmp_path / "logs"
    with pytest.raises(Exception, match="NoSuchAlgorithm"):
        train(TASK, ["agent.algorithm.class_name=NoSuchAlgorithm", *TINY], "cpu", ENVS, 1, log_root=logs)
    experiment = logs / "rsl_rl" / "limit_flat"
    assert not experiment.exists() or list(experiment.iterdir()) == []
    with pytest.raises(PolicyLoadError, match="train first"):
        resolve_checkpoint("latest", TASK, "limit_flat", logs)
