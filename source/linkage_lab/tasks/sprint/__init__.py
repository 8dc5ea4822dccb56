"""The 10 m sprint (docs/design/gait.md §4): a straight track along +x, one 1 m lane per env.

Each robot folder under ``config/`` registers its sprint task ids and names them in ``SPRINT_TASKS``
(the preferred first, for ``--policy pretrained``) and ``DEFAULT_SPRINT_TASK`` (where scripted and
ONNX policies race).
"""

from __future__ import annotations

from linkage_lab.tasks.registry import import_config_packages


def sprint_tasks() -> tuple[str, ...]:
    """Every robot's sprint tasks, each robot's preferred first (registering them)."""
    return tuple(task for module in import_config_packages(__name__) for task in module.SPRINT_TASKS)


def default_sprint_tasks() -> tuple[str, ...]:
    """Where ``scripted``, ONNX files and ``latest`` race: one per robot that has a sprint."""
    return tuple(module.DEFAULT_SPRINT_TASK for module in import_config_packages(__name__))
