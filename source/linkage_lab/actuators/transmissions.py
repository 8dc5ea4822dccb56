"""Named transmissions an actuator config can refer to by string (hydra-friendly)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

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


def _rsu_domain(side: str, preset: str = "marvin") -> JointDomain:
    from linkage_lab.kinematics.rsu_ankle import evaluate
    from linkage_lab.kinematics.rsu_geometry import load_ankle_geometry

    geometry = load_ankle_geometry(preset, side=side)

    def reachable(pose: torch.Tensor) -> torch.Tensor:
        return evaluate(geometry, pose, with_jacobian=False).reachable.all(-1)

    (p_lo, p_hi), (r_lo, r_hi) = geometry.pitch_range_rad, geometry.roll_range_rad
    return JointDomain((p_lo, r_lo), (p_hi, r_hi), reachable)


#: Joint domains of the pose-dependent transmissions (same names as :data:`TRANSMISSIONS`).
DOMAINS: dict[str, Callable[..., JointDomain]] = {
    "marvin_ankle_left": lambda preset="marvin": _rsu_domain("left", preset),
    "marvin_ankle_right": lambda preset="marvin": _rsu_domain("right", preset),
}


def joint_domain(name: str) -> JointDomain | None:
    """The :class:`JointDomain` of a named transmission, ``None`` where it is defined everywhere."""
    base, _, preset = name.partition(":")
    if base not in DOMAINS:
        return None
    return DOMAINS[base](preset) if preset else DOMAINS[base]()
