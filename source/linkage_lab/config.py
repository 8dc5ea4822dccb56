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


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Return ``base`` with ``override`` merged in recursively (neither input is modified)."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
