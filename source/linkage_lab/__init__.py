"""Linkage Lab: Isaac Lab extension for legged robots driven through parallel linkages."""

from __future__ import annotations

__version__ = "0.1.0"
