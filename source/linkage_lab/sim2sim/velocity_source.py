"""Where a robot side's base velocity comes from in sim-to-sim: the robot's estimator, or (to compare) the truth.

The robot has no velocity sensor, so a policy that observes the base velocity (or a gait prior that places its
feet by it) gets the estimate of :class:`~linkage_lab.deploy.base_velocity.BaseVelocityEstimator`, computed from
the same readings the robot has: joint angles and rates decoded from its motors, the IMU's gyro, accelerometer
and orientation. ``truth`` hands over the simulator's velocity instead, for an ablation. Either way the error of
the estimate against the truth is recorded for the report (the truth is read for that alone).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from linkage_lab.deploy.base_velocity import ESTIMATOR_FILE, BaseVelocityEstimator, load_estimator
from linkage_lab.sim2sim.bundle import Bundle, BundleError
from linkage_lab.sim2sim.sensors import Sensors, quat_to_matrix


def integral_time_s(series: np.ndarray, period_s: float) -> float:
    """The integral time scale of ``series`` (one signal sampled every ``period_s`` seconds) about its mean:
    ``period_s · (½ + Σₖ ρ(k))``, the autocorrelation summed from lag 1 up to its first lag at or below zero (s).

    For a first-order Gauss–Markov process ``eₜ = a·eₜ₋₁ + √(1−a²)·σ·nₜ`` it is ``period_s · (½ + a / (1 − a))``,
    about its time constant ``−period_s / ln a`` when that is long; white noise gives ``period_s / 2``, a constant
    signal ``0`` (no swing to correlate).
    """
    values = np.asarray(series, dtype=float).ravel()
    swing = values - values.mean()
    power = float(swing @ swing)
    round_off = len(values) * (1e-12 * max(1.0, float(np.abs(values).max(initial=0.0)))) ** 2
    if len(values) < 2 or power <= round_off:
        return 0.0
    total = 0.5
    for lag in range(1, len(values)):
        rho = float(swing[lag:] @ swing[:-lag]) / power
        if rho <= 0.0:
            break
        total += rho
    return period_s * total


#: ``base_velocity=`` values a robot side takes (``sim2sim --io-option base_velocity=truth``).
VELOCITY_MODES = ("estimate", "truth")


def bundle_estimator(
    bundle: Bundle, joint_names: Sequence[str], fallback: Callable[[], BaseVelocityEstimator]
) -> BaseVelocityEstimator:
    """The estimator the bundle ships (:data:`~linkage_lab.deploy.base_velocity.ESTIMATOR_FILE`), or ``fallback()``
    for a bundle exported before it shipped one.

    Raises:
        BundleError: The bundle's file is unreadable, or its chains index another joint order than ``joint_names``.
    """
    path = bundle.path / ESTIMATOR_FILE
    if not path.is_file():
        return fallback()
    try:
        estimator, order = load_estimator(path)
    except ValueError as exc:
        raise BundleError(f"bundle {bundle.path}: {exc}") from None
    if list(order) != list(joint_names):
        raise BundleError(f"bundle {bundle.path}: {ESTIMATOR_FILE} indexes joints {order}, not {list(joint_names)}")
    return estimator


#: How often a robot side's estimator steps (``sim2sim --io-option estimator_rate=...``): once per control tick, as the
#: deploy runtime runs it, or on every sensor sample (each physics step), as an estimator beside the drivers would.
ESTIMATOR_RATES = ("tick", "sample")


class VelocitySource:
    """The base velocity (base frame, m/s) given to the robot-side code each control tick.

    Args:
        estimator: The robot's estimator, on its joint order.
        mode: ``"estimate"`` (what a robot does) or ``"truth"`` (the simulator's, for comparison).
        control_period_s: Time between two calls (s).
        rate: ``"tick"``: the estimator steps once per call, over ``control_period_s``; ``"sample"``: it steps in
            :meth:`sample`, once per sensor sample over the time between their stamps, and a call reads it.

    Raises:
        ValueError: An unknown ``mode`` or ``rate``.
    """

    def __init__(self, estimator: BaseVelocityEstimator, mode: str, control_period_s: float, rate: str = "tick"):
        if mode not in VELOCITY_MODES:
            raise ValueError(f"unknown base_velocity {mode!r}; known: {', '.join(VELOCITY_MODES)}")
        if rate not in ESTIMATOR_RATES:
            raise ValueError(f"unknown estimator_rate {rate!r}; known: {', '.join(ESTIMATOR_RATES)}")
        self.estimator = estimator
        self.mode = mode
        self.rate = rate
        self.control_period_s = float(control_period_s)
        self.reset()

    def reset(self) -> None:
        """Start the filter at rest and clear the error record."""
        self.estimator.reset()
        self._errors: list[np.ndarray] = []
        self._feet: list[int] = []
        self._skipped = 0
        self._last_sample_s: float | None = None

    def _step(
        self, dt_s: float, sensors: Sensors, joint_pos: np.ndarray, joint_vel: np.ndarray, joint_torque: Any
    ) -> np.ndarray:
        """One estimator step; the estimate in the base frame (the last one after a non-finite reading)."""
        rotation = quat_to_matrix(sensors.quat_wxyz)
        try:
            return self.estimator.update(
                dt_s, joint_pos, joint_vel, sensors.gyro_b, sensors.accelerometer_b, rotation, joint_torque
            )
        except ValueError:
            # A non-finite reading: the robot keeps its last estimate (the runtime's guards judge the reading).
            self._skipped += 1
            return rotation.T @ self.estimator.state.velocity_w

    def sample(
        self, sensors: Sensors, joint_pos: np.ndarray, joint_vel: np.ndarray, joint_torque: np.ndarray | None = None
    ) -> None:
        """With ``rate="sample"``, step the estimator on one sensor sample (its accelerometer the specific force
        over the time since the last sample); otherwise nothing."""
        if self.rate != "sample":
            return
        last, self._last_sample_s = self._last_sample_s, float(sensors.time_s)
        dt = 0.0 if last is None else max(float(sensors.time_s) - last, 0.0)
        self._step(dt, sensors, joint_pos, joint_vel, joint_torque)

    def __call__(
        self, sensors: Sensors, joint_pos: np.ndarray, joint_vel: np.ndarray, joint_torque: np.ndarray | None = None
    ) -> np.ndarray:
        """This tick's base velocity in the base frame (m/s); at ``rate="tick"`` the estimate is updated either way.
        ``joint_torque`` (from the drivers' torque readings) lets the estimator tell a loaded foot from a swinging
        one."""
        if self.rate == "tick":
            estimate = self._step(self.control_period_s, sensors, joint_pos, joint_vel, joint_torque)
        else:
            estimate = quat_to_matrix(sensors.quat_wxyz).T @ self.estimator.state.velocity_w
        self._errors.append(estimate - np.asarray(sensors.base_lin_vel_b, dtype=float))
        self._feet.append(self.estimator.state.feet_used)
        return np.asarray(sensors.base_lin_vel_b, dtype=float) if self.mode == "truth" else estimate

    def report(self) -> dict[str, Any]:
        """The mode, the rate and the estimate's error against the truth at the ticks: mean (bias), RMS and the RMS
        about the mean (noise) per base axis, m/s, and how long the noise stays correlated (:func:`integral_time_s`);
        the mean number of feet the filter's last step used per tick."""
        errors = np.array(self._errors).reshape(-1, 3)
        if len(errors) == 0:
            return {"mode": self.mode, "rate": self.rate, "ticks": 0}
        axes = ("x", "y", "z")
        bias = errors.mean(axis=0)
        rms = np.sqrt((errors**2).mean(axis=0))
        return {
            "mode": self.mode,
            "rate": self.rate,
            "ticks": len(errors),
            "estimate_bias_mps": dict(zip(axes, map(float, bias), strict=True)),
            "estimate_rms_mps": dict(zip(axes, map(float, rms), strict=True)),
            "estimate_noise_mps": dict(zip(axes, map(float, errors.std(axis=0)), strict=True)),
            "estimate_noise_correlation_s": {
                axis: integral_time_s(errors[:, i], self.control_period_s) for i, axis in enumerate(axes)
            },
            "mean_feet_used": float(np.mean(self._feet)),
            "skipped_updates": self._skipped,
        }
