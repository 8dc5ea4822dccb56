"""The first-order smoothing of a policy's joint targets, robot-side (numpy).

Training smooths the targets in its action term (``GuardedJointPositionActionCfg.target_filter_alpha``); the
bundle records ``α`` (metadata ``action_target_filter_alpha``) and every loop that runs the policy outside Isaac Lab
(sim2sim, the robot) applies this filter to the same targets, so the policy meets the same plant.
"""

from __future__ import annotations

import numpy as np


class TargetFilter:
    """``q_t = α q*_t + (1 − α) q_{t−1}`` once per control step; the first target after :meth:`reset` passes as is.

    Args:
        alpha: ``α`` in ``(0, 1]``; 1 passes every target unchanged.

    Raises:
        ValueError: ``alpha`` outside ``(0, 1]`` (or not finite).
    """

    def __init__(self, alpha: float = 1.0):
        alpha = float(alpha)
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"target filter alpha must be in (0, 1], got {alpha}")
        self.alpha = alpha
        self._state: np.ndarray | None = None

    def reset(self) -> None:
        """Start of an episode: the next target starts the filter."""
        self._state = None

    def __call__(self, target: np.ndarray) -> np.ndarray:
        """The smoothed target (a new array, ``target``'s shape)."""
        target = np.asarray(target, dtype=np.float64)
        if self._state is None or self.alpha == 1.0:
            self._state = target.copy()
        else:
            self._state = self.alpha * target + (1.0 - self.alpha) * self._state
        return self._state.copy()
