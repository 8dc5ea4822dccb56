"""The 10 m sprint (gait.md §4): a straight track along +x, one 1 m lane per env."""

from __future__ import annotations

from linkage_lab.tasks.sprint.config import marvin  # noqa: F401
