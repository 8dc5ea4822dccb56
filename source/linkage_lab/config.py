"""Loading the robot configs under ``configs/robots`` (the one source of truth per robot)."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from linkage_lab.paths import ROBOT_CONFIG_DIR


class ConfigError(ValueError):
    """A robot config is missing, unreadable or lacks a required field."""


def available_robots() -> list[str]:
    """Names of the robot configs shipped under ``configs/robots``."""
    return sorted(p.stem for p in ROBOT_CONFIG_DIR.glob("*.yaml"))


@functools.lru_cache(maxsize=16)
def _load_cached(path: Path) -> dict[str, Any]:
    import yaml  # here, not at import: the torch-free robot-side code imports the configs' types

    if not path.is_file():
        raise ConfigError(f"robot config not found: {path} (available: {', '.join(available_robots())})")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"robot config {path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"robot config {path} must hold a mapping at top level")
    return data


def load_config_file(path: Path) -> dict[str, Any]:
    """Return a fresh copy of the robot config at ``path`` as nested dicts (parsed once, then cached).

    Raises:
        ConfigError: The file is missing or not a YAML mapping.
    """
    return copy.deepcopy(_load_cached(Path(path).resolve()))


def robot_config_path(name: str) -> Path:
    """The config file of robot ``name``: its registered ``RobotSpec.config_path``, else
    ``configs/robots/<name>.yaml``."""
    from linkage_lab.robots.registry import UnknownRobot, get_robot

    try:
        return get_robot(name).config_path
    except UnknownRobot:
        return ROBOT_CONFIG_DIR / f"{name}.yaml"


def load_robot_config(name: str) -> dict[str, Any]:
    """Return a fresh copy of robot ``name``'s config (see :func:`robot_config_path`) as nested dicts.

    Args:
        name: Robot name, a registered robot's or one of ``configs/robots``.

    Returns:
        The parsed config. The caller may mutate it: every call returns a deep copy.

    Raises:
        ConfigError: The file is missing or not a YAML mapping.
    """
    return load_config_file(robot_config_path(name))


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Return ``base`` with ``override`` merged in recursively (neither input is modified)."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
