"""Velocity-tracking tasks on flat ground; each robot folder registers its task ids."""

from __future__ import annotations

from linkage_lab.tasks.velocity.config import limit, marvin  # noqa: F401
