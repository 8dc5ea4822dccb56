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
