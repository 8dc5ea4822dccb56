"""Velocity-tracking tasks on flat ground; each robot folder under ``config/`` registers its task ids."""

from __future__ import annotations

from linkage_lab.tasks.registry import import_config_packages

CONFIG_PACKAGES = import_config_packages(__name__)
