"""Training: PPO runs of project tasks with rsl-rl, their run folders, checkpoints and resumption.

:func:`train` starts or continues a run; :mod:`~linkage_lab.runs` names, orders and cleans
run folders; :mod:`~linkage_lab.checkpoints` reads checkpoints as data only and writes them
atomically; :mod:`~linkage_lab.training.loop` saves on Ctrl-C; :mod:`~linkage_lab.training.resume`
resolves ``--resume``.
"""

from __future__ import annotations

from linkage_lab.checkpoints import CheckpointError, load_checkpoint
from linkage_lab.runs import RunBusyError, latest_checkpoint, latest_run_dir
from linkage_lab.training.resume import RESUME_SOURCES, ResumeError, ResumePoint, resolve_resume
from linkage_lab.training.trainer import TrainingConfigError, TrainingInterrupted, TrainResult, train

__all__ = [
    "RESUME_SOURCES",
    "CheckpointError",
    "ResumeError",
    "ResumePoint",
    "RunBusyError",
    "TrainResult",
    "TrainingConfigError",
    "TrainingInterrupted",
    "latest_checkpoint",
    "latest_run_dir",
    "load_checkpoint",
    "resolve_resume",
    "train",
]
