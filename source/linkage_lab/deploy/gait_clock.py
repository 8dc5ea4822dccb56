"""The gait clock on the robot: the phase a clock-trained policy observes, from the policy's own tick count.

A policy trained with a gait clock (``tasks/velocity/gait_clock.py``) observes ``(sin 2πφ, cos 2πφ)`` with
``φ = frac(k · Δt · f)`` after ``k`` control ticks of ``Δt`` since it started (in training: since the env's reset).
No sensor gives it: the robot side counts its ticks. The bundle's observation term carries ``f`` (its
``params.frequency_hz``). Numpy only.
"""

from __future__ import annotations

import math

import numpy as np

#: Name of the observation function whose values this clock gives (the training term's function).
CLOCK_FUNCTION = "gait_clock"


class GaitClock:
    """Control ticks since the policy started, as the clock's ``(sin 2πφ, cos 2πφ)``.

    Args:
        period_s: The control period ``Δt`` (s).
        frequency_hz: The gait's frequency ``f`` (cycles/s).

    Raises:
        ValueError: A period or frequency that is not a positive finite number.
    """

    def __init__(self, period_s: float, frequency_hz: float):
        for name, value in (("period_s", period_s), ("frequency_hz", frequency_hz)):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"a gait clock needs a positive finite {name}, got {value!r}")
        self.period_s = float(period_s)
        self.frequency_hz = float(frequency_hz)
        self.ticks = 0

    def reset(self) -> None:
        """Back to phase 0 (the start of an episode)."""
        self.ticks = 0

    @property
    def phase(self) -> float:
        """``φ`` in cycles, ``[0, 1)``."""
        return math.fmod(self.ticks * (self.period_s * self.frequency_hz), 1.0)

    def observation(self) -> np.ndarray:
        """``(sin 2πφ, cos 2πφ)`` at the current tick."""
        angle = 2.0 * math.pi * self.phase
        return np.array([math.sin(angle), math.cos(angle)])

    def advance(self) -> None:
        """One control tick done."""
        self.ticks += 1


def clock_frequency(term: dict) -> float:
    """The frequency (Hz) a bundle's ``gait_clock`` observation term records in its ``params``.

    Raises:
        ValueError: The term records none.
    """
    frequency = (term.get("params") or {}).get("frequency_hz")
    if frequency is None:
        raise ValueError(f"observation term {term.get('name')!r} is a gait clock but records no params.frequency_hz")
    return float(frequency)
