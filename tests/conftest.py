"""Shared test setup: the CPU device and a repo-root working directory."""

from __future__ import annotations

import os

# Tests run on the CPU whatever the machine has, so results do not depend on a GPU.
os.environ.setdefault("LINKAGE_LAB_DEVICE", "cpu")
