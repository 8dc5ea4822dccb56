"""Where the project's configs and generated assets live."""

from __future__ import annotations

import os
from pathlib import Path

#: Repository root: ``source/linkage_lab/`` is two levels below it. ``LINKAGE_LAB_ROOT`` overrides it
#: for installs that keep configs and assets elsewhere.
REPO_ROOT = Path(os.environ.get("LINKAGE_LAB_ROOT", Path(__file__).resolve().parents[2]))
CONFIG_DIR = REPO_ROOT / "configs"
ROBOT_CONFIG_DIR = CONFIG_DIR / "robots"
ASSET_DIR = REPO_ROOT / "assets"
#: Training runs (``<LOG_DIR>/rsl_rl/<experiment>/<run>``); ``LINKAGE_LAB_LOG_DIR`` puts them elsewhere.
LOG_DIR = Path(os.environ.get("LINKAGE_LAB_LOG_DIR", REPO_ROOT / "logs"))


def repo_relative(path: str | Path) -> str:
    """``path`` relative to :data:`REPO_ROOT` (POSIX separators) when it lies inside it, else as given: how a record
    or a message names a file of the project (a config, a shipped policy, a run under ``logs/``)."""
    resolved, root = Path(path).resolve(), REPO_ROOT.resolve()
    return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else str(path)
