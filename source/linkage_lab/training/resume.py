"""What ``train --resume`` continues from: a checkpoint, and the run folder to continue in (if any).

``--resume`` takes a run of the task's experiment (its folder name, or ``latest``), a run folder's
path, a checkpoint file, or a name in :data:`RESUME_SOURCES`. Training continues *in the same run*
(same folder, iteration count and TensorBoard curves) when the checkpoint is the newest of a run of
this experiment. Otherwise — an older checkpoint of a run, or a checkpoint from elsewhere (a copied
or shipped policy to fine-tune) — it continues from the checkpoint in a *new* run, so no existing
checkpoint is ever overwritten.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from linkage_lab.paths import LOG_DIR
from linkage_lab.pretrained import NoPretrainedPolicy, pretrained_checkpoint
from linkage_lab.runs import experiment_dir, latest_checkpoint, latest_run_dir


class ResumeError(ValueError):
    """``--resume`` names nothing to continue from."""


@dataclass(frozen=True)
class ResumePoint:
    """Where training continues from.

    Attributes:
        checkpoint: The checkpoint file to load.
        run_dir: The run folder to continue in; ``None``: start a new run from the checkpoint.
        note: One line for the console on what happens (which run, or why a new one).
    """

    checkpoint: Path
    run_dir: Path | None
    note: str


#: ``source(task, experiment_name, log_root) -> Path``: a run folder or a checkpoint file for a
#: ``--resume NAME``. A checkpoint outside the experiment's runs starts a new run (fine-tuning).
ResumeSource = Callable[[str, str, Path], Path]


def _latest(task: str, experiment_name: str, log_root: Path) -> Path:
    run_dir = latest_run_dir(experiment_name, log_root)
    if run_dir is None:
        raise ResumeError(
            f"no run of experiment {experiment_name!r} under {experiment_dir(experiment_name, log_root)} "
            f"holds a checkpoint; train first: linkage-lab train --task {task}"
        )
    return run_dir


def _pretrained(task: str, experiment_name: str, log_root: Path) -> Path:
    """The policy shipped for ``task``: fine-tuning it starts a new run."""

    try:
        return pretrained_checkpoint(task)
    except NoPretrainedPolicy as exc:
        raise ResumeError(str(exc)) from exc


#: Named ``--resume`` sources; adding one is one entry here.
RESUME_SOURCES: dict[str, ResumeSource] = {"latest": _latest, "pretrained": _pretrained}


def resolve_resume(
    spec: str | Path,
    task: str,
    experiment_name: str,
    log_root: Path = LOG_DIR,
    checkpoint: str | None = None,
) -> ResumePoint:
    """Resolve ``--resume SPEC [--checkpoint NAME]``.

    Args:
        spec: A name in :data:`RESUME_SOURCES`, a run folder name of the experiment, a run folder's
            path, or a checkpoint file's path.
        task: The task id (for messages and sources).
        experiment_name: The task's experiment (``agent.experiment_name``).
        log_root: The ``logs`` folder.
        checkpoint: A checkpoint file name inside the run (``model_<it>.pt``); default: its newest.

    Raises:
        ResumeError: Nothing there, or no checkpoint in the run.
    """
    root = experiment_dir(experiment_name, log_root)
    spec = str(spec)
    if spec in RESUME_SOURCES:
        path = Path(RESUME_SOURCES[spec](task, experiment_name, Path(log_root)))
    elif "/" not in spec and (root / spec).is_dir():
        path = root / spec
    else:
        path = Path(spec).expanduser()
    if path.is_dir():
        if checkpoint is not None:
            if Path(checkpoint).name != checkpoint:
                raise ResumeError(f"--checkpoint takes a file name inside the run folder, got {checkpoint!r}")
            target = path / checkpoint
            if not target.is_file():
                held = sorted(p.name for p in path.glob("model_*.pt"))
                raise ResumeError(f"run {path} has no {checkpoint}; it holds {', '.join(held) or 'no checkpoint'}")
        else:
            target = latest_checkpoint(path)
            if target is None:
                raise ResumeError(f"run {path} holds no model_<iteration>.pt checkpoint to resume from")
    elif path.is_file():
        if checkpoint is not None:
            raise ResumeError(f"--resume {spec} is already a checkpoint file; --checkpoint selects one inside a run")
        target = path
    else:
        known = ", ".join(sorted(RESUME_SOURCES))
        raise ResumeError(
            f"--resume {spec}: no run {spec!r} under {root} and no such file or folder "
            f"(give a run name, a run folder, a checkpoint file, or one of: {known})"
        )
    run_dir = target.parent
    in_experiment = run_dir.parent.resolve() == root.resolve()
    newest = latest_checkpoint(run_dir) if in_experiment else None
    if in_experiment and newest is not None and newest.resolve() == target.resolve():
        return ResumePoint(target, run_dir, f"continuing run {run_dir.name} from {target.name}")
    if in_experiment:
        note = (
            f"{target.name} is not the newest checkpoint of run {run_dir.name} ({newest.name if newest else '-'}): "
            "continuing from it in a new run, the old run stays as it is"
        )
    else:
        note = f"{target} is not in a run of experiment {experiment_name!r}: continuing from it in a new run"
    return ResumePoint(target, None, note)
