"""Named transmissions an actuator config can refer to by string (hydra-friendly).

The table holds the generic transmissions; a robot's own (``RobotSpec.transmissions``, e.g. an ankle
linkage) join it when the robot is registered (:func:`register_transmissions`, called by the robot
registry), so this module knows no robot. It imports no torch until a transmission is built: the
registry, which the torch-free robot-side code uses, imports it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from linkage_lab.kinematics.transmission import JointDomain, Transmission


def _identity(preset: str | None = None) -> Transmission:
    from linkage_lab.kinematics.transmission import IdentityTransmission

    return IdentityTransmission(2)


def _parallelogram(preset: str | None = None) -> Transmission:
    from linkage_lab.kinematics.transmission import parallelogram_leg

    return parallelogram_leg()


#: The generic transmissions by name → factory ``(preset=None) -> Transmission``.
GENERIC_TRANSMISSIONS: dict[str, Callable[..., Transmission]] = {
    "identity": _identity,
    "parallelogram": _parallelogram,
}
_TABLE: dict[str, Callable[..., Transmission]] = dict(GENERIC_TRANSMISSIONS)
_LOCK = threading.Lock()


def register_transmissions(factories: Mapping[str, Callable[..., Any]], owner: str, replace: bool = False) -> None:
    """Add named transmission factories ``(preset=None) -> Transmission`` (a robot's) to the table.

    Raises:
        ValueError: A name is a generic transmission's, or (unless ``replace``) another factory's already.
    """
    with _LOCK:
        for name, factory in factories.items():
            taken = not replace and _TABLE.get(name, factory) is not factory
            if name in GENERIC_TRANSMISSIONS or taken:
                raise ValueError(f"{owner} registers transmission {name!r}, which is already taken")
        _TABLE.update(factories)


def known_transmissions() -> dict[str, Callable[..., Transmission]]:
    """The generic transmissions and every registered robot's, by name."""
    return dict(_TABLE)


def make_transmission(name: str) -> Transmission:
    """Build a transmission from its name, e.g. ``"parallelogram"`` or ``"<robot>_ankle_left:<preset>"``.

    A robot's transmission is known once the robot is registered (importing its package registers it).

    Raises:
        KeyError: Unknown name (the message lists the known ones).
    """
    base, _, preset = name.partition(":")
    if base not in _TABLE:
        raise KeyError(f"unknown transmission {name!r}; known: {', '.join(sorted(_TABLE))}")
    return _TABLE[base](preset or None)


def joint_domain(name: str) -> JointDomain | None:
    """The :class:`JointDomain` of a named transmission, ``None`` where it is defined everywhere.

    A pose-dependent transmission tells its domain through a ``joint_domain()`` method.
    """
    transmission = make_transmission(name)
    domain = getattr(transmission, "joint_domain", None)
    return None if domain is None else domain()
