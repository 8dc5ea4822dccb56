"""Lookup of the project's registered task ids, with errors that list them."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import gymnasium as gym

TASK_PREFIX = "LinkageLab-"


class UnknownTaskError(KeyError):
    """A task id that is not registered."""

    def __str__(self) -> str:
        return str(self.args[0])


def register_tasks() -> None:
    """Register every task id of the project: import each family's robot folders (``<family>/config/<robot>/``),
    which register theirs. Found, not listed; importing twice does nothing."""
    package = importlib.import_module(__name__.rpartition(".")[0])
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name):
        if info.ispkg:
            import_config_packages(f"{package.__name__}.{info.name}")


def project_task_ids() -> list[str]:
    """All registered task ids of this project, sorted."""
    register_tasks()
    return sorted(task_id for task_id in gym.registry if task_id.startswith(TASK_PREFIX))


def require_task(task_id: str) -> str:
    """Return ``task_id`` when registered, else raise an error listing the project's task ids."""
    ids = project_task_ids()
    if task_id not in gym.registry:
        raise UnknownTaskError(f"unknown task id {task_id!r}; Linkage Lab tasks are: {', '.join(ids)}")
    return task_id


def task_spec(task_id: str) -> Any:
    """The gymnasium registration (``EnvSpec``) of ``task_id``; raises :class:`UnknownTaskError` listing the ids."""
    return gym.spec(require_task(task_id))


def import_config_packages(package_name: str) -> list[Any]:
    """Import every subpackage of ``<package_name>.config`` (one per robot; each registers its task ids).

    Tasks are found, not listed: a robot's task folder registers itself when it is there.
    """
    package = importlib.import_module(f"{package_name}.config")
    return [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name)
        if info.ispkg
    ]
