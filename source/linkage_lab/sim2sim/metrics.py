"""Sim-to-sim statistics: per-motor torque against its limits, saturation time, falls and foot contact.

The tracking and footfall statistics are the evaluation's own (:mod:`linkage_lab.evaluation.metrics`);
this module adds what only the closed-chain model has: each motor's torque (the linkage's real motors,
not the serial joints) and how long the drivers' demand was cut by the torque–speed line or the torque
clamp.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: A tilt beyond this (the angle between the base's up axis and the world's) is a fall (deg).
FALL_TILT_DEG = 60.0
#: Torque differences below this are round-off, not saturation (N·m).
_SATURATION_TOLERANCE_NM = 1e-6


@dataclass(frozen=True)
class FallRule:
    """When the robot has fallen: base below ``height_m`` or tilted more than ``tilt_deg``.

    The height is the sprint's rule (docs/design/gait.md §4): the NAO's fraction of its standing torso height,
    :func:`~linkage_lab.sprint.rules.fall_threshold` of the base's height standing on the closed-chain
    model; the tilt catches a robot lying on its side with its base still high.

    Attributes:
        height_m: Base height below which the robot has fallen (m).
        tilt_deg: Largest tilt of the base (deg).
        standing_height_m: The base's height standing in the default pose (m), for the report.
    """

    height_m: float
    tilt_deg: float
    standing_height_m: float

    @classmethod
    def from_standing_height(cls, standing_height_m: float, tilt_deg: float = FALL_TILT_DEG) -> FallRule:
        """The rule for a robot whose base stands ``standing_height_m`` above the ground."""
        from linkage_lab.sprint.rules import fall_threshold

        return cls(fall_threshold(standing_height_m), tilt_deg, standing_height_m)

    def tilt_of(self, projected_gravity_b: np.ndarray) -> float:
        """The base's tilt (deg) from the gravity direction in its frame."""
        return math.degrees(math.acos(float(np.clip(-projected_gravity_b[2], -1.0, 1.0))))

    def check(self, base_height_m: float, projected_gravity_b: np.ndarray) -> str | None:
        """``"height"`` or ``"tilt"`` when fallen, else ``None``."""
        if base_height_m < self.height_m:
            return "height"
        if self.tilt_of(projected_gravity_b) > self.tilt_deg:
            return "tilt"
        return None

    def describe(self) -> dict[str, Any]:
        """The rule as numbers."""
        return {
            "base_height_below_m": self.height_m,
            "standing_base_height_m": self.standing_height_m,
            "tilt_above_deg": self.tilt_deg,
            "rule": "base height below the sprint's fall fraction of its standing height (docs/design/gait.md §4), "
            "or tilt",
        }


class MotorTorqueStats:
    """Peak and RMS applied torque per motor against its peak, and the time its demand was cut.

    A sample is one physics step. A motor is *saturated* at a step when the torque it applied differs from
    what its driver's PD asked (the torque clamp or the torque–speed line cut it).

    Args:
        names: Motor names, actuator order.
        peak_torque_nm: Each motor's peak torque (N·m).
        dt_s: Physics step (s).
    """

    def __init__(self, names: Sequence[str], peak_torque_nm: Sequence[float], dt_s: float):
        self.names = list(names)
        self.peak_limit = np.asarray(peak_torque_nm, dtype=float)
        self.dt_s = dt_s
        n = len(self.names)
        self.samples = 0
        self._sum_sq = np.zeros(n)
        self._peak = np.zeros(n)
        self._demand_peak = np.zeros(n)
        self._saturated = np.zeros(n, dtype=np.int64)
        self._any_saturated = 0

    def add(self, demanded_nm: np.ndarray, applied_nm: np.ndarray) -> None:
        """One physics step's demanded (driver PD) and applied (after limits) torques (N·m)."""
        applied = np.asarray(applied_nm, dtype=float)
        demanded = np.asarray(demanded_nm, dtype=float)
        self.samples += 1
        self._sum_sq += applied**2
        self._peak = np.maximum(self._peak, np.abs(applied))
        self._demand_peak = np.maximum(self._demand_peak, np.abs(demanded))
        cut = np.abs(demanded - applied) > _SATURATION_TOLERANCE_NM
        self._saturated += cut
        self._any_saturated += bool(cut.any())

    def summary(self) -> dict[str, Any]:
        """Per motor ``name``, ``limit_nm``, ``peak_nm``, ``rms_nm``, ``peak_ratio``, ``rms_ratio``,
        ``demanded_peak_nm``, ``saturated_fraction`` and ``saturated_s``; plus the share of steps with any
        motor saturated."""
        n = max(self.samples, 1)
        rms = np.sqrt(self._sum_sq / n)
        motors = [
            {
                "name": name,
                "limit_nm": float(self.peak_limit[k]),
                "limit_source": "motor peak torque (the torque-speed line's stall torque)",
                "peak_nm": float(self._peak[k]),
                "rms_nm": float(rms[k]),
                "peak_ratio": float(self._peak[k] / self.peak_limit[k]),
                "rms_ratio": float(rms[k] / self.peak_limit[k]),
                "demanded_peak_nm": float(self._demand_peak[k]),
                "saturated_fraction": float(self._saturated[k] / n),
                "saturated_s": float(self._saturated[k] * self.dt_s),
            }
            for k, name in enumerate(self.names)
        ]
        return {
            "sampling": "every physics step",
            "samples": self.samples,
            "motors": motors,
            "any_saturated_fraction": self._any_saturated / n,
            "any_saturated_s": self._any_saturated * self.dt_s,
            "worst_peak_ratio": float(max((m["peak_ratio"] for m in motors), default=0.0)),
        }


def foot_geoms(model: Any, base_body: str) -> dict[str, np.ndarray]:
    """The robot's feet, body name → its colliding geom ids: every body but the base with a geom that
    touches the ground (the models collide only their feet and base with the ground)."""
    import mujoco

    base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, base_body)
    feet: dict[str, list[int]] = {}
    for geom in range(model.ngeom):
        body = int(model.geom_bodyid[geom])
        if body not in (0, base) and model.geom_contype[geom] and model.geom_conaffinity[geom]:
            feet.setdefault(model.body(body).name, []).append(geom)
    return {name: np.asarray(ids) for name, ids in feet.items()}


def feet_in_contact(data: Any, feet: dict[str, np.ndarray]) -> np.ndarray:
    """Per foot (``feet`` order) whether any of its geoms touches anything now, bool ``(n_feet,)``."""
    touching = set()
    for index in range(data.ncon):
        contact = data.contact[index]
        touching.update((int(contact.geom1), int(contact.geom2)))
    return np.array([any(int(g) in touching for g in geoms) for geoms in feet.values()])
