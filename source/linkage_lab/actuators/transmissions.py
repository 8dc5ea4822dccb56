"""Named transmissions an actuator config can refer to by string (hydra-friendly)."""

from __future__ import annotations

from collections.abc import Callable

from linkage_lab.kinematics.transmission import IdentityTransmission, Transmission, parallelogram_leg


def _marvin_ankle(side: str, preset: str = "marvin") -> Transmission:
    from linkage_lab.kinematics.ankle_transmission import marvin_ankle

    return marvin_ankle(side=side, preset=preset)


#: Transmission names → factories. ``marvin_ankle_<side>[:<preset>]`` selects a geometry preset.
TRANSMISSIONS: dict[str, Callable[..., Transmission]] = {
    "identity": lambda: IdentityTransmission(2),
    "parallelogram": parallelogram_leg,
    "marvin_ankle_left": lambda preset="marvin": _marvin_ankle("left", preset),
    "marvin_ankle_right": lambda preset="marvin": _marvin_ankle("right", preset),
}


def make_transmission(name: str) -> Transmission:
    """Build a transmission from its name, e.g. ``"parallelogram"`` or ``"marvin_ankle_left:calf"``.

    Raises:
        KeyError: Unknown name (the message lists the known ones).
    """
    base, _, preset = name.partition(":")
    if base not in TRANSMISSIONS:
        raise KeyError(f"unknown transmission {name!r}; known: {', '.join(sorted(TRANSMISSIONS))}")
    return TRANSMISSIONS[base](preset) if preset else TRANSMISSIONS[base]()
