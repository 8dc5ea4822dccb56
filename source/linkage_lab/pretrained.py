"""Policies shipped with the project: one trained checkpoint per task under ``policies/<task>/``.

Each folder holds ``model.pt`` (the rsl-rl checkpoint: actor, critic, observation normalisers and
optimiser state, so it can be fine-tuned with ``train --resume pretrained``), ``train.json`` (how it
was trained: command, commit, wall time, iterations, env-steps/s) and the ``eval.json`` /
``sweep.json`` it was accepted on. ``--checkpoint pretrained`` names it in every command.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from linkage_lab.io import write_bytes_atomic, write_json_atomic
from linkage_lab.paths import REPO_ROOT

#: Where shipped policies live, one folder per task id.
PRETRAINED_DIR = REPO_ROOT / "policies"
PRETRAINED = "pretrained"
MODEL_FILE = "model.pt"
TRAIN_INFO_FILE = "train.json"


class NoPretrainedPolicy(LookupError):
    """No policy is shipped for the task."""


def shipped_tasks(root: Path | None = None) -> list[str]:
    """Task ids that have a shipped policy, sorted."""
    root = Path(root or PRETRAINED_DIR)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / MODEL_FILE).is_file())


def pretrained_dir(task: str, root: Path | None = None) -> Path:
    """The shipped policy folder of ``task``.

    Raises:
        NoPretrainedPolicy: Nothing is shipped for ``task`` (the message lists what is).
    """
    root = Path(root or PRETRAINED_DIR)
    folder = root / task
    if not (folder / MODEL_FILE).is_file():
        shipped = shipped_tasks(root)
        raise NoPretrainedPolicy(
            f"no pretrained policy is shipped for {task}; shipped: {', '.join(shipped) or 'none'} (under {root})"
        )
    return folder


def pretrained_checkpoint(task: str, root: Path | None = None) -> Path:
    """The shipped ``model.pt`` of ``task`` (see :func:`pretrained_dir`)."""
    return pretrained_dir(task, root) / MODEL_FILE


def train_info(task: str, root: Path | None = None) -> dict[str, Any]:
    """The shipped policy's ``train.json`` (empty when missing)."""
    path = pretrained_dir(task, root) / TRAIN_INFO_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


#: The policy a ship replaced, inside the new policy's folder: ``policies/<task>/previous/``.
PREVIOUS_DIR = "previous"


def stage_policy(task: str, checkpoint: Path, info: dict[str, Any], root: Path | None = None) -> Path:
    """A new hidden folder beside ``policies/<task>/`` holding ``model.pt`` (a copy of ``checkpoint``) and
    ``train.json``; the evaluation files are added there too, then :func:`install_policy` swaps it in.

    Nothing under ``policies/<task>/`` changes until then, so a refused or failed ship leaves the
    shipped policy as it was (remove the folder with :func:`discard_staged`).
    """
    import tempfile

    root = Path(root or PRETRAINED_DIR)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{task}.", suffix=".staging", dir=root))
    try:
        write_bytes_atomic(staging / MODEL_FILE, Path(checkpoint).read_bytes())
        write_json_atomic(staging / TRAIN_INFO_FILE, info)
    except BaseException:
        discard_staged(staging)
        raise
    return staging


def install_policy(staging: Path, task: str, root: Path | None = None) -> Path:
    """Make the staged folder ``policies/<task>/``; the policy it replaces moves whole to its ``previous/``.

    Only one previous policy is kept (the one before it is dropped). Readers see the old folder or the
    new one, never a mixture: the old folder is renamed aside, the staged one renamed into place, then
    the old one moved into it.

    Returns:
        The policy folder.
    """
    import tempfile

    root = Path(root or PRETRAINED_DIR)
    final = root / task
    staging.chmod(0o755)
    if not final.exists():
        staging.rename(final)
        return final
    aside = Path(tempfile.mkdtemp(prefix=f".{task}.", suffix=".old", dir=root))
    aside.rmdir()
    final.rename(aside)
    staging.rename(final)
    shutil.rmtree(aside / PREVIOUS_DIR, ignore_errors=True)
    aside.rename(final / PREVIOUS_DIR)
    return final


def discard_staged(staging: Path) -> None:
    """Remove a staged policy folder that will not be shipped."""
    shutil.rmtree(staging, ignore_errors=True)


def copy_file(source: Path, folder: Path) -> Path:
    """Copy one result file (``eval.json``, ``sweep.json``, a plot) into a shipped policy's folder."""
    target = Path(folder) / Path(source).name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target
