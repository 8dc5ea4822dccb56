"""Run folders of an rsl-rl experiment: naming, ordering, the run record, and cleanup of failed runs.

A run lives in ``<log_root>/rsl_rl/<experiment>/<run>/``, named by its start time as Isaac Lab does
(``%Y-%m-%d_%H-%M-%S`` with an optional ``_<run_name>`` suffix). Runs are ordered by that name, never
by the folder's modification time (reading or evaluating a run touches it). ``training.json`` in the
folder records how the run was started and how each session of it ended.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import re
import shutil
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from linkage_lab.io import write_json_atomic
from linkage_lab.paths import LOG_DIR

#: Isaac Lab's run folder timestamp.
RUN_TIME_FORMAT = "%Y-%m-%d_%H-%M-%S"
_RUN_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2})(?:_.+)?$")
_CHECKPOINT_RE = re.compile(r"^model_(\d+)\.pt$")
#: The project's record of a run (see :func:`write_record`).
RECORD_FILE = "training.json"
_LOCK_FILE = ".training.lock"


class RunBusyError(RuntimeError):
    """Another process is training the run."""


def experiment_dir(experiment_name: str, log_root: Path = LOG_DIR) -> Path:
    """The folder holding an experiment's runs: ``<log_root>/rsl_rl/<experiment>``."""
    return Path(log_root) / "rsl_rl" / experiment_name


def run_started_at(run_dir: Path) -> datetime | None:
    """The start time a run folder's name records, or ``None`` for a name not in Isaac Lab's format."""
    match = _RUN_NAME_RE.match(Path(run_dir).name)
    if match is None:
        return None
    try:
        return datetime.strptime(match.group(1), RUN_TIME_FORMAT)
    except ValueError:
        return None


def _run_order(run_dir: Path) -> tuple[int, datetime, str]:
    """Sort key: timestamped runs by their time; others before them, by name."""
    started = run_started_at(run_dir)
    return (0, datetime.min, run_dir.name) if started is None else (1, started, run_dir.name)


def checkpoint_iteration(path: Path) -> int | None:
    """The iteration in a checkpoint's name (``model_<it>.pt``), or ``None`` for another name."""
    match = _CHECKPOINT_RE.match(Path(path).name)
    return int(match.group(1)) if match else None


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The highest-iteration ``model_<it>.pt`` of a run folder, or ``None`` when it holds none."""
    models = [p for p in Path(run_dir).glob("model_*.pt") if p.is_file() and checkpoint_iteration(p) is not None]
    return max(models, key=checkpoint_iteration) if models else None


def list_runs(experiment_name: str, log_root: Path = LOG_DIR) -> list[Path]:
    """The run folders of an experiment, oldest first by the time in their names."""
    root = experiment_dir(experiment_name, log_root)
    runs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")] if root.is_dir() else []
    return sorted(runs, key=_run_order)


def latest_run_dir(experiment_name: str, log_root: Path = LOG_DIR) -> Path | None:
    """The newest run of an experiment that holds a checkpoint (by the time in its folder name).

    A run that stopped before its first checkpoint is skipped: there is nothing in it to load.
    """
    for run_dir in reversed(list_runs(experiment_name, log_root)):
        if latest_checkpoint(run_dir) is not None:
            return run_dir
    return None


def create_run_dir(experiment_name: str, log_root: Path = LOG_DIR, suffix: str | None = None) -> Path:
    """Create a new run folder named by the current time; never one another process already made.

    Two trainings started in the same second would otherwise share a folder (Isaac Lab's names have a
    one-second resolution): the folder is created exclusively and, when taken, the next second's
    name is tried.

    Args:
        experiment_name: The experiment (``agent.experiment_name``).
        log_root: The ``logs`` folder.
        suffix: Appended as ``_<suffix>`` (``agent.run_name``); ``None`` or empty for none.
    """
    root = experiment_dir(experiment_name, log_root)
    root.mkdir(parents=True, exist_ok=True)
    for _ in range(30):
        name = datetime.now().strftime(RUN_TIME_FORMAT) + (f"_{suffix}" if suffix else "")
        run_dir = root / name
        try:
            run_dir.mkdir()
        except FileExistsError:
            time.sleep(1.0 - (time.time() % 1.0) + 0.01)
            continue
        return run_dir
    raise RuntimeError(f"could not create a new run folder under {root}: every name was taken")


@contextlib.contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run for this process while it trains in it (released when the process ends, too).

    Raises:
        RunBusyError: Another process is training in the run.
    """
    handle = (Path(run_dir) / _LOCK_FILE).open("a")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunBusyError(f"run {run_dir} is being trained by another process") from None
        yield
    finally:
        handle.close()


def read_record(run_dir: Path) -> dict[str, Any]:
    """The run's ``training.json`` (empty for runs without one, e.g. made by ``isaaclab train``)."""
    try:
        record = json.loads((Path(run_dir) / RECORD_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def write_record(run_dir: Path, record: dict[str, Any]) -> Path:
    """Write the run's ``training.json`` atomically.

    Keys the project writes: ``task``, ``experiment``, ``overrides`` (the hydra overrides in force),
    ``num_envs``, ``seed``, ``device``, ``planned_iterations`` (the run's total: iterations
    ``0 … planned - 1``), ``status`` (``running``, ``finished``, ``interrupted``, ``failed``),
    ``last_iteration`` and ``checkpoint`` (the newest saved), ``resumed_from`` (the checkpoint a new
    run started from) and ``sessions`` (one entry per start or resume).
    """
    return write_json_atomic(Path(run_dir) / RECORD_FILE, record)


def discard_run(run_dir: Path) -> bool:
    """Remove a run folder this process created if it holds no checkpoint; returns whether it did.

    A run that ended before its first checkpoint holds only what the run itself wrote (its configs,
    manifest, record, an empty TensorBoard file); left behind it would look like a run.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir() or latest_checkpoint(run_dir) is not None:
        return False
    shutil.rmtree(run_dir, ignore_errors=True)
    return not run_dir.exists()
