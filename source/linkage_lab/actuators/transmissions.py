"""Named transmissions an actuator config can refer to by string (hydra-friendly)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from linkage_lab.kinematics.transmission import IdentityTransmission, Transmission, parallelogram_leg

#: The generic transmissions by name → factory ``(preset=None) -> Transmission``. Each robot adds its
#: own (``RobotSpec.transmissions``, e.g. an ankle linkage) through the robot registry.
TRANSMISSIONS: dict[str, Callable[..., Transmission]] = {
    "identity": lambda preset=None: IdentityTransmission(2),
    "parallelogram": lambda preset=None: parallelogram_leg(),
}


def known_transmissions() -> dict[str, Callable[..., Transmission]]:
    """The generic transmissions and every registered robot's, by name."""
    from linkage_lab.robots.registry import robot_transmissions

    return {**robot_transmissions(), **TRANSMISSIONS}


def make_transmission(name: str) -> Transmission:
    """Build a transmission from its name, e.g. ``"parallelogram"`` or ``"<robot>_ankle_left:<preset>"``.

    Raises:
        KeyError: Unknown name (the message lists the known ones).
    """
    base, _, preset = name.partition(":")
    factories = TRANSMISSIONS if base in TRANSMISSIONS else known_transmissions()
    if base not in factories:
        raise KeyError(f"unknown transmission {name!r}; known: {', '.join(sorted(factories))}")
    return factories[base](preset or None)


@dataclass
class JointDomain:
    """Where a pose-dependent transmission is defined: a joint range it reaches everywhere, and a
    test for any pose. Constant transmissions are defined everywhere and have none.

    Attributes:
        lower: Per-joint lower bound of the range (rad), ``(n,)``.
        upper: Per-joint upper bound (rad), ``(n,)``.
        reachable: ``(..., n)`` poses → ``(...)`` bool; never raises, False for non-finite poses.
    """

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    reachable: Callable[[torch.Tensor], torch.Tensor]
    _cache: dict = field(default_factory=dict, repr=False)

    def bounds(self, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(lower, upper)`` in ``like``'s dtype and device (cached)."""
        key = (like.dtype, like.device)
        if key not in self._cache:
            self._cache[key] = tuple(
                torch.as_tensor(v, dtype=like.dtype, device=like.device) for v in (self.lower, self.upper)
            )
        return self._cache[key]


def joint_domain(name: str) -> JointDomain | None:
    """The :class:`JointDomain` of a named transmission, ``None`` where it is defined everywhere.

    A pose-dependent transmission tells its domain through a ``joint_domain()`` method.
    """
    transmission = make_transmission(name)
    domain = getattr(transmission, "joint_domain", None)
    return None if domain is None else domain()
