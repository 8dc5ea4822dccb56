"""Importing this module registers every Linkage Lab task id with gymnasium (Isaac Lab's ``isaaclab.tasks`` entry
point names it)."""

from __future__ import annotations

from linkage_lab.tasks.registry import register_tasks

register_tasks()
