"""The base velocity as a robot's estimator gives it: the true velocity with the estimator's measured error.

No robot measures its base velocity; it runs an estimator (IMU + leg kinematics + contact,
:mod:`linkage_lab.deploy.base_velocity`), which sim-to-sim and the deploy path use. Training does not
run that filter in every env: it observes the true velocity corrupted by the error the filter was measured
to make on the closed-chain robot under the same policy (``robot_side.base_velocity`` of ``sim2sim.json``):
a per-episode bias drawn uniformly in ``±bias_mps`` and white noise of ``noise_std_mps`` per step, per base axis.
"""

from __future__ import annotations

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


class VelocityError:
    """An estimator's error model per env: a per-episode uniform bias in ``±bias_mps`` and per-call Gaussian noise of
    ``noise_std_mps``, per base axis (m/s).

    Raises:
        ValueError: Not three non-negative values each.
    """

    def __init__(self, num_envs: int, bias_mps: Sequence[float], noise_std_mps: Sequence[float], device: str):
        self._bias_mps = torch.as_tensor(bias_mps, dtype=torch.float32, device=device)
        self._noise_mps = torch.as_tensor(noise_std_mps, dtype=torch.float32, device=device)
        if self._bias_mps.shape != (3,) or self._noise_mps.shape != (3,):
            raise ValueError("a velocity error takes bias_mps and noise_std_mps with one value per base axis (x, y, z)")
        if bool((self._bias_mps < 0).any() or (self._noise_mps < 0).any()):
            raise ValueError("a velocity error's bias_mps and noise_std_mps must be non-negative")
        self.bias = torch.zeros(num_envs, 3, device=device)
        """Each env's bias this episode (m/s, base frame)."""
        self.reset()

    def reset(self, env_ids: Sequence[int] | slice | None = None) -> None:
        """Draw the bias of ``env_ids`` (all envs when ``None``) anew."""
        ids = slice(None) if env_ids is None else env_ids
        count = self.bias[ids].shape[0]
        self.bias[ids] = (2.0 * torch.rand(count, 3, device=self.bias.device) - 1.0) * self._bias_mps

    def __call__(self, velocity: torch.Tensor) -> torch.Tensor:
        """``velocity`` (num_envs × 3, m/s) as the estimator would give it."""
        return velocity + self.bias + torch.randn_like(velocity) * self._noise_mps


class base_lin_vel_estimate(ManagerTermBase):  # noqa: N801 (Isaac Lab's observation-function naming)
    """Base linear velocity in the base frame (m/s) with an estimator's bias and noise (:class:`VelocityError`).

    Params:
        bias_mps: Per axis (x, y, z), the half-width of the uniform per-episode bias (m/s).
        noise_std_mps: Per axis, the standard deviation of the per-step Gaussian noise (m/s).
        asset_cfg: The robot.
    """

    def __init__(self, cfg: ObservationTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        self.error = VelocityError(env.num_envs, cfg.params["bias_mps"], cfg.params["noise_std_mps"], env.device)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        """Draw the bias of ``env_ids`` anew."""
        self.error.reset(env_ids)

    def __call__(
        self,
        env: ManagerBasedEnv,
        bias_mps: Sequence[float],
        noise_std_mps: Sequence[float],
        asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
    ) -> torch.Tensor:
        return self.error(env.scene[asset_cfg.name].data.root_lin_vel_b.torch)
