"""Delays between the robot and its controller in a closed-chain run: stale observations, late actions.

A real control loop acts on a sample that is already old (bus transfer, filtering, inference) and its
target reaches the drives later still (the next bus cycle). :class:`Latency` holds both delays in
physics steps of the model (its resolution); :class:`DelayLine` is the queue each is run through. The
drives' own PD runs on their own encoders at the physics rate, without delay.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Latency:
    """Delays in physics steps of the model.

    Attributes:
        observation_steps: Age of the sensor sample the policy acts on.
        action_steps: Physics steps from the policy's output to the drives applying it.
    """

    observation_steps: int = 0
    action_steps: int = 0

    @classmethod
    def from_seconds(cls, observation_s: float, action_s: float, physics_dt_s: float) -> Latency:
        """Delays in seconds rounded to the nearest physics step of ``physics_dt_s``.

        Raises:
            ValueError: A delay that is negative or not finite.
        """
        steps = []
        for name, value in (("observation delay", observation_s), ("action delay", action_s)):
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value}")
            steps.append(int(round(value / physics_dt_s)))
        return cls(*steps)

    def report(self, physics_dt_s: float) -> dict[str, Any]:
        """The delays as ``sim2sim.json`` records them (seconds, at the model's physics step)."""
        return {
            "observation_delay_s": round(self.observation_steps * physics_dt_s, 9),
            "action_delay_s": round(self.action_steps * physics_dt_s, 9),
            "physics_step_s": physics_dt_s,
        }


class DelayLine:
    """What was pushed ``delay`` pushes ago; until then, the first value pushed (the line starts full of it)."""

    def __init__(self, delay: int):
        if delay < 0:
            raise ValueError(f"delay must be >= 0 pushes, got {delay}")
        self._values: deque[Any] = deque(maxlen=delay + 1)

    def push(self, value: Any) -> Any:
        """Add ``value``; return the value of ``delay`` pushes ago."""
        if not self._values:
            self._values.extend([value] * self._values.maxlen)
        else:
            self._values.append(value)
        return self._values[0]
