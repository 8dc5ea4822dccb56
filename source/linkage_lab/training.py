"""Training through Isaac Lab's rsl-rl entry point, with the device picked automatically."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from linkage_lab.paths import LOG_DIR


@dataclass(frozen=True)
class TrainResult:
    """Where a training run left its results."""

    log_dir: Path
    checkpoint: Path | None
    wall_time_s: float


def latest_run_dir(experiment_name: str, log_root: Path = LOG_DIR) -> Path | None:
    """The most recent run folder of an rsl-rl experiment (``logs/rsl_rl/<experiment>/<run>``)."""
    root = log_root / "rsl_rl" / experiment_name
    runs = [p for p in root.glob("*") if p.is_dir()] if root.is_dir() else []
    return max(runs, key=lambda p: p.stat().st_mtime) if runs else None


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The highest-iteration ``model_<it>.pt`` of a run folder."""
    models = list(run_dir.glob("model_*.pt"))

    def iteration(path: Path) -> int:
        suffix = path.stem.split("_", 1)[1]
        return int(suffix) if suffix.isdigit() else -1

    return max(models, key=iteration) if models else None


def train(
    task: str,
    overrides: list[str],
    device: str | None = None,
    num_envs: int | None = None,
    max_iterations: int | None = None,
    seed: int | None = None,
    log_root: Path = LOG_DIR,
) -> TrainResult:
    """Train ``task`` with rsl-rl PPO; env and agent on the same automatically picked device.

    Isaac Lab writes runs under the working directory's ``logs/``; the process changes into
    ``log_root``'s parent for the run, so logs land in ``<log_root>/rsl_rl/<experiment>/<run>/``
    (by default ``<repo>/logs/...``) wherever the command was started.
    """
    import os

    from isaaclab_rl.entrypoints.api import TrainingRequest
    from isaaclab_rl.entrypoints.api import train as isaaclab_train

    from linkage_lab.runtime import configure_cpu_threads, pick_device, resolve_configs

    device = pick_device(device)
    configure_cpu_threads(device)
    overrides = list(overrides)
    if not any(token.startswith("agent.device=") for token in overrides):
        overrides.append(f"agent.device={device}")
    # Resolve once up front: unknown task ids and bad overrides fail here with a clear message.
    _, agent_cfg = resolve_configs(task, overrides, device)
    request = TrainingRequest(
        backend="rsl_rl",
        task=task,
        num_envs=num_envs,
        seed=seed,
        max_iterations=max_iterations,
        device=device,
        hydra_args=tuple(overrides),
    )
    start = time.perf_counter()
    previous_cwd = Path.cwd()
    log_root = Path(log_root)
    if log_root.name != "logs":
        raise ValueError(f"log_root must be a folder named 'logs' (Isaac Lab's layout), got {log_root}")
    log_root.mkdir(parents=True, exist_ok=True)
    os.chdir(log_root.parent)
    try:
        status = isaaclab_train(request)
    finally:
        os.chdir(previous_cwd)
    if status != 0:
        raise RuntimeError(f"training exited with status {status}")
    run_dir = latest_run_dir(agent_cfg.experiment_name, log_root)
    if run_dir is None:
        raise RuntimeError(f"training finished but wrote no run folder under {log_root / 'rsl_rl'}")
    return TrainResult(run_dir, latest_checkpoint(run_dir), time.perf_counter() - start)
