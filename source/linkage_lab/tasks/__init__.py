"""Linkage Lab's Isaac Lab tasks; importing this package registers every task id with gymnasium."""

from __future__ import annotations

from linkage_lab.tasks import sprint, velocity  # noqa: F401  (registers LinkageLab-*)
from linkage_lab.tasks.registry import TASK_PREFIX, project_task_ids, require_task  # noqa: F401
