"""The base velocity as a robot's estimator gives it: the true velocity with the estimator's measured error.

No robot measures its base velocity; it runs an estimator (IMU + leg kinematics + contact,
:mod:`linkage_lab.deploy.base_velocity`), which sim-to-sim and the deploy path use. Training does not
run that filter in every env: it observes the true velocity corrupted by the error the filter was measured
to make on the closed-chain robot under the same policy (``robot_side.base_velocity`` of ``sim2sim.json``):
a per-episode bias drawn uniformly in ``±bias_mps`` and noise of ``noise_std_mps`` per base axis. A filter's error
is not white: it wanders over the filter's own time scale. ``correlation_s`` gives the noise that time scale, as a
first-order Gauss–Markov process; 0 keeps it white (a fresh draw every step).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch
from isaaclab.managers import ManagerTermBase, ObservationTermCfg, SceneEntityCfg

#: Until a robot's task sets its own measured error: the Limit's at 0.5 m/s on the closed chain, rounded up
#: (bias x -0.045, noise x / y / z 0.058 / 0.015 / 0.105 m/s; docs/results/2026-12-03_honest_policies.md).
DEFAULT_BIAS_MPS = (0.05, 0.02, 0.05)
DEFAULT_NOISE_STD_MPS = (0.06, 0.03, 0.1)

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv


def gauss_markov_coefficient(correlation_s: float, period_s: float) -> float:
    """The step coefficient ``a`` of ``eₜ = a·eₜ₋₁ + √(1−a²)·σ·nₜ`` sampled every ``period_s`` whose integral time
    scale ``period_s · (½ + a / (1 − a))`` is ``correlation_s`` (:func:`linkage_lab.sim2sim.velocity_source.
    integral_time_s` measures it); 0 (white noise) at or below half a period.

    Raises:
        ValueError: A negative ``correlation_s`` or a period that is not positive.
    """
    if period_s <= 0.0 or correlation_s < 0.0 or not math.isfinite(correlation_s):
        raise ValueError(f"a noise correlation takes a time >= 0 and a period > 0, not {correlation_s}, {period_s}")
    steps = correlation_s / period_s - 0.5
    return 0.0 if steps <= 0.0 else steps / (1.0 + steps)


class VelocityError:
    """An estimator's error model per env: a per-episode uniform bias in ``±bias_mps`` and Gaussian noise of
    ``noise_std_mps``, per base axis (m/s), correlated over ``correlation_s`` (a first-order Gauss–Markov process
    stepped once per call, :func:`gauss_markov_coefficient`; 0: white).

    Raises:
        ValueError: Not three non-negative values each, or a ``period_s`` that is not positive.
    """

    def __init__(
        self,
        num_envs: int,
        bias_mps: Sequence[float],
        noise_std_mps: Sequence[float],
        device: str,
        correlation_s: Sequence[float] = (0.0, 0.0, 0.0),
        period_s: float = 0.02,
    ):
        self._bias_mps = torch.as_tensor(bias_mps, dtype=torch.float32, device=device)
        self._noise_mps = torch.as_tensor(noise_std_mps, dtype=torch.float32, device=device)
        correlation = torch.as_tensor(correlation_s, dtype=torch.float32)
        if self._bias_mps.shape != (3,) or self._noise_mps.shape != (3,) or correlation.shape != (3,):
            raise ValueError(
                "a velocity error takes bias_mps, noise_std_mps and correlation_s, one value per base axis (x, y, z)"
            )
        if bool((self._bias_mps < 0).any() or (self._noise_mps < 0).any() or (correlation < 0).any()):
            raise ValueError("a velocity error's bias_mps, noise_std_mps and correlation_s must be non-negative")
        coefficient = [gauss_markov_coefficient(float(c), period_s) for c in correlation]
        self._keep = torch.tensor(coefficient, dtype=torch.float32, device=device)
        self._fresh = torch.sqrt(1.0 - self._keep**2) * self._noise_mps
        self._correlated = bool((self._keep > 0).any())
        self.bias = torch.zeros(num_envs, 3, device=device)
        """Each env's bias this episode (m/s, base frame)."""
        self.noise = torch.zeros(num_envs, 3, device=device)
        """Each env's noise at the last call (m/s, base frame)."""
        self.reset()

    def reset(self, env_ids: Sequence[int] | slice | None = None) -> None:
        """Draw the bias of ``env_ids`` (all envs when ``None``) anew, and their noise from its stationary spread."""
        ids = slice(None) if env_ids is None else env_ids
        count = self.bias[ids].shape[0]
        self.bias[ids] = (2.0 * torch.rand(count, 3, device=self.bias.device) - 1.0) * self._bias_mps
        if self._correlated:  # white noise owes nothing to its past (and draws as it always did)
            self.noise[ids] = torch.randn(count, 3, device=self.noise.device) * self._noise_mps

    def __call__(self, velocity: torch.Tensor) -> torch.Tensor:
        """``velocity`` (num_envs × 3, m/s) as the estimator would give it; steps the noise once."""
        fresh = torch.randn_like(velocity) * self._fresh
        self.noise = self._keep * self.noise + fresh if self._correlated else fresh
        return velocity + self.bias + self.noise


class base_lin_vel_estimate(ManagerTermBase):  # noqa: N801 (Isaac Lab's observation-function naming)
    """Base linear velocity in the base frame (m/s) with an estimator's bias and noise (:class:`VelocityError`).

    Params:
        bias_mps: Per axis (x, y, z), the half-width of the uniform per-episode bias (m/s).
        noise_std_mps: Per axis, the standard deviation of the Gaussian noise (m/s).
        correlation_s: Per axis, the noise's integral time scale (s); 0 (the default): white, a fresh draw each step.
        asset_cfg: The robot.
    """

    def __init__(self, cfg: ObservationTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        self.error = VelocityError(
            env.num_envs,
            cfg.params["bias_mps"],
            cfg.params["noise_std_mps"],
            env.device,
            correlation_s=cfg.params.get("correlation_s", (0.0, 0.0, 0.0)),
            period_s=env.step_dt,
        )

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        """Draw the bias of ``env_ids`` anew."""
        self.error.reset(env_ids)

    def __call__(
        self,
        env: ManagerBasedEnv,
        bias_mps: Sequence[float],
        noise_std_mps: Sequence[float],
        correlation_s: Sequence[float] = (0.0, 0.0, 0.0),
        asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
    ) -> torch.Tensor:
        return self.error(env.scene[asset_cfg.name].data.root_lin_vel_b.torch)
