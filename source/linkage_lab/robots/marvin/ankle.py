"""Marvin's RSU ankles: the two sides' transmissions, the eval's replay through the real linkage."""

from __future__ import annotations

from typing import Any

from linkage_lab.robots.marvin.joints import SIDES

ROBOT = "marvin"


def ankle_transmission(side: str, preset: str | None = None) -> Any:
    """The ``side`` ankle's transmission in geometry ``preset`` (``None``: Marvin's own)."""
    from linkage_lab.robots.ankles import rsu_ankle_transmission

    return rsu_ankle_transmission(side=side, preset=preset, robot=ROBOT)


def transmission_name(side: str, preset: str | None = None) -> str:
    """The registered name of an ankle transmission, e.g. ``marvin_ankle_left:narrow_rods``."""
    if side not in SIDES:
        raise ValueError(f"unknown side {side!r}; sides are {', '.join(SIDES)}")
    return f"{ROBOT}_ankle_{side}" + (f":{preset}" if preset else "")
