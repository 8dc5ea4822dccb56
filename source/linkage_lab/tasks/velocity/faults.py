"""Numeric faults in the velocity tasks: what keeps a NaN/inf out of the physics and the learner.

Four pieces, all switched on by :class:`~linkage_lab.tasks.velocity.flat_env_cfg.LinkageVelocityFlatEnvCfg`:

* :class:`GuardedJointPositionAction`: a non-finite action row holds the default pose (raw action
  0, as :class:`~isaaclab.envs.mdp.actions.JointPositionAction` defines it), every action is clipped
  to ``±action_clip``, and the action manager's copy (what ``last_action`` and ``action_rate_l2``
  read) is the cleaned one;
* :class:`NonFiniteState`: a termination for an env whose root or joint state is not finite, so
  the env is reset on its own (the physics worlds are independent) and the others run on;
* :func:`finite_or_zero`: an observation modifier, the last guard of what the policy sees;
* :class:`NonFiniteRewardGuard`: a startup event that wraps every reward term so that a
  non-finite value (the terminating step of a non-finite env) counts as 0.

Each piece counts what it replaced; :func:`fault_counts` sums the counts for reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch
from isaaclab.envs.mdp.actions import JointPositionAction, JointPositionActionCfg
from isaaclab.managers import ManagerTermBase, SceneEntityCfg
from isaaclab.utils import configclass

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv, ManagerBasedRLEnv

#: Names of the guard terms in the task configs (what :func:`fault_counts` looks up).
NONFINITE_STATE_TERM = "nonfinite_state"
REWARD_GUARD_EVENT = "nonfinite_reward_guard"


class GuardedJointPositionAction(JointPositionAction):
    """:class:`JointPositionAction` that never passes a NaN, an infinity or a huge value on.

    A row with any non-finite entry is replaced by zeros, the hold action (the default joint
    pose), and counted in :attr:`nonfinite_actions`; then every entry is clipped to
    ``±cfg.action_clip`` (action units). The cleaned action is also written into the action
    manager's buffer, which the observation ``last_action`` and the rewards on actions read.
    """

    cfg: GuardedJointPositionActionCfg

    def __init__(self, cfg: GuardedJointPositionActionCfg, env: ManagerBasedEnv):
        if cfg.action_clip is not None and not cfg.action_clip > 0.0:
            raise ValueError(f"action_clip must be positive or None, got {cfg.action_clip}")
        super().__init__(cfg, env)
        self.nonfinite_actions = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        """Per env: control steps whose action had a non-finite entry (held instead)."""
        self._columns: slice | None = None
        self._target_delay = _target_delay_buffer(cfg.target_delay_range_steps, self.num_envs, self.device)
        alpha = cfg.target_filter_alpha
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"target_filter_alpha must be in (0, 1], got {alpha}")
        self._filtered: torch.Tensor | None = None
        self._filter_fresh = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)

    def apply_actions(self) -> None:
        """Send the joint targets, ``target_delay_range_steps`` physics steps late where a delay is set."""
        if self._target_delay is None:
            super().apply_actions()
            return
        target = self._target_delay.compute(self.processed_actions)
        self._asset.set_joint_position_target_index(target=target, joint_ids=self._joint_ids)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        """Zero the last action of ``env_ids``, restart their target filter and draw their target delays anew (all
        envs when ``None``)."""
        super().reset(env_ids)
        self._filter_fresh[slice(None) if env_ids is None else env_ids] = True
        if self._target_delay is None:
            return
        every = torch.arange(self.num_envs, device=self.device)
        ids = every if env_ids is None else every[env_ids] if isinstance(env_ids, slice) else torch.as_tensor(env_ids)
        low, high = self.cfg.target_delay_range_steps
        lags = torch.randint(int(low), int(high) + 1, (len(ids),), dtype=torch.int, device=self.device)
        self._target_delay.set_time_lag(lags, ids.to(self.device))
        self._target_delay.reset(ids.to(self.device))

    @property
    def target_delay_steps(self) -> torch.Tensor:
        """Each env's current target delay in physics steps (zeros without a delay range)."""
        if self._target_delay is None:
            return torch.zeros(self.num_envs, dtype=torch.int, device=self.device)
        return self._target_delay.time_lags

    def process_actions(self, actions: torch.Tensor) -> None:
        finite = torch.isfinite(actions).all(dim=-1, keepdim=True)
        clean = torch.where(finite, actions, torch.zeros_like(actions))
        if self.cfg.action_clip is not None:
            clean = clean.clamp(-self.cfg.action_clip, self.cfg.action_clip)
        self.nonfinite_actions += (~finite).squeeze(-1)
        self._env.action_manager.action[:, self._manager_columns()] = clean
        super().process_actions(clean)
        if self.cfg.target_filter_alpha < 1.0:
            self._filter_targets()

    def _filter_targets(self) -> None:
        """First-order low-pass of the joint targets, one update per control step; an env's first target after a
        reset passes unfiltered (the filter starts from it, not from a stale pose)."""
        target = self._processed_actions
        if self._filtered is None:
            self._filtered = target.clone()
        alpha = self.cfg.target_filter_alpha
        smoothed = alpha * target + (1.0 - alpha) * self._filtered
        self._filtered = torch.where(self._filter_fresh.unsqueeze(-1), target, smoothed)
        self._filter_fresh[:] = False
        self._processed_actions[:] = self._filtered

    def _manager_columns(self) -> slice:
        """This term's columns in the action manager's action (found once, by identity)."""
        if self._columns is None:
            manager = self._env.action_manager
            start = 0
            for name, dim in zip(manager.active_terms, manager.action_term_dim):
                if manager.get_term(name) is self:
                    self._columns = slice(start, start + dim)
                    break
                start += dim
            else:
                raise RuntimeError("the guarded action term is not in the env's action manager")
        return self._columns


@configclass
class GuardedJointPositionActionCfg(JointPositionActionCfg):
    """Config of :class:`GuardedJointPositionAction`."""

    class_type: type = GuardedJointPositionAction

    action_clip: float | None = None
    """Symmetric clip of the raw action (action units, before ``scale``); ``None``: no clip."""

    target_delay_range_steps: tuple[int, int] = (0, 0)
    """``(min, max)`` delay of the joint targets in physics steps, drawn per env at every reset (uniform,
    inclusive): the robot's control latency, randomised at the physics step's resolution (``(0, 4)`` is
    0-20 ms at a 5 ms step). ``(0, 0)``: none."""

    target_filter_alpha: float = 1.0
    """Exponential smoothing of the joint targets per control step, ``q_t = α q_target + (1 − α) q_{t−1}`` (the
    robot runs the same filter on the policy's targets): its −3 dB corner is about ``−ln(1 − α) / (2π Δt)``, 5.5 Hz at
    ``α = 0.5`` and a 20 ms step. ``1``: no filter. The policy's ``last_action`` stays its own, unfiltered output."""


def _target_delay_buffer(range_steps: Sequence[int], num_envs: int, device: str) -> Any:
    """The target delay line of :attr:`GuardedJointPositionActionCfg.target_delay_range_steps` (``None``: no delay).

    Raises:
        ValueError: Not ``(min, max)`` with ``0 <= min <= max``.
    """
    low, high = (int(v) for v in range_steps)
    if not 0 <= low <= high:
        raise ValueError(f"target_delay_range_steps must be (min, max) with 0 <= min <= max, got {tuple(range_steps)}")
    if high == 0:
        return None
    from isaaclab.utils.buffers import DelayBuffer

    buffer = DelayBuffer(high, num_envs, device=device)
    buffer.set_time_lag(low)
    return buffer


class NonFiniteState(ManagerTermBase):
    """Termination: the env's root pose, root velocity, joint positions or joint velocities are
    not all finite. Counts the envs it ends in :attr:`resets`.

    Params: ``asset_cfg`` (default: the ``robot``).
    """

    def __init__(self, cfg: Any, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.resets = torch.zeros(env.num_envs, dtype=torch.long, device=env.device)
        """Per env: episodes ended because the state was not finite."""

    def __call__(self, env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")) -> torch.Tensor:
        data = env.scene[asset_cfg.name].data
        parts = (data.root_pos_w, data.root_quat_w, data.root_lin_vel_w, data.root_ang_vel_w)
        parts += (data.joint_pos, data.joint_vel)
        bad = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        for part in parts:
            bad |= ~torch.isfinite(part.torch).reshape(env.num_envs, -1).all(dim=-1)
        self.resets += bad
        return bad


def finite_or_zero(obs: torch.Tensor) -> torch.Tensor:
    """Observation modifier: NaN and ±inf entries become 0 (the observation of the hold action)."""
    return torch.where(torch.isfinite(obs), obs, torch.zeros_like(obs))


class _FiniteReward:
    """A reward term whose non-finite values count as 0 (counted per env in ``counts``)."""

    def __init__(self, func: Callable[..., Any], counts: torch.Tensor):
        self.func = func
        self.counts = counts

    def __call__(self, env: ManagerBasedRLEnv, **params: Any) -> Any:
        value = self.func(env, **params)
        if not isinstance(value, torch.Tensor):
            return value
        # No branch on the values: a host sync per term and step would stall a GPU pipeline.
        finite = torch.isfinite(value)
        self.counts += ~finite.reshape(finite.shape[0], -1).all(dim=-1)
        return torch.where(finite, value, torch.zeros_like(value))

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        # Only class-based terms are reset by the reward manager, and they have a reset.
        self.func.reset(env_ids=env_ids)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.func, name)


class NonFiniteRewardGuard(ManagerTermBase):
    """Startup event: wrap every reward term so that its non-finite values count as 0.

    Runs once the reward manager exists (Isaac Lab applies startup events after building the
    managers) and edits the terms through the manager's public ``get_term_cfg``/``set_term_cfg``,
    so it covers the terms a robot or a derived task adds after the shared config. The values
    replaced are counted per env and reward term in :attr:`values`.
    """

    def __init__(self, cfg: Any, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.values = torch.zeros(env.num_envs, dtype=torch.long, device=env.device)
        """Per env: (control step, reward term) values that were not finite (replaced by 0)."""

    def __call__(self, env: ManagerBasedRLEnv, env_ids: torch.Tensor | None) -> None:
        manager = env.reward_manager
        for name in manager.active_terms:
            term_cfg = manager.get_term_cfg(name)
            if not isinstance(term_cfg.func, _FiniteReward):
                term_cfg.func = _FiniteReward(term_cfg.func, self.values)
                manager.set_term_cfg(name, term_cfg)


def fault_counts(env: Any) -> dict[str, int]:
    """What the guards replaced in ``env`` so far, summed over envs (for reports).

    Returns:
        ``nonfinite_actions`` (env steps held), ``nonfinite_state_resets`` (episodes ended),
        ``nonfinite_reward_values`` (reward term values replaced by 0) and
        ``unreachable_linkage_poses`` (physics steps a linkage pose was moved into its joint range);
        0 for a guard (or a manager) the env does not have.
    """
    unwrapped = env.unwrapped
    counts = dict.fromkeys(_FAULT_NAMES, 0)
    actions = getattr(unwrapped, "action_manager", None)
    for name in getattr(actions, "active_terms", ()):
        counts["nonfinite_actions"] += _total(getattr(actions.get_term(name), "nonfinite_actions", None))
    terminations = getattr(unwrapped, "termination_manager", None)
    if NONFINITE_STATE_TERM in getattr(terminations, "active_terms", ()):
        term = terminations.get_term_cfg(NONFINITE_STATE_TERM).func
        counts["nonfinite_state_resets"] += _total(getattr(term, "resets", None))
    events = getattr(unwrapped, "event_manager", None)
    if events is not None and any(REWARD_GUARD_EVENT in names for names in events.active_terms.values()):
        counts["nonfinite_reward_values"] += _total(
            getattr(events.get_term_cfg(REWARD_GUARD_EVENT).func, "values", None)
        )
    scene = getattr(unwrapped, "scene", None)
    for asset in getattr(scene, "articulations", {}).values():
        for actuator in asset.actuators.values():
            counts["unreachable_linkage_poses"] += _total(getattr(actuator, "unreachable_poses", None))
    return counts


_FAULT_NAMES = ("nonfinite_actions", "nonfinite_state_resets", "nonfinite_reward_values", "unreachable_linkage_poses")


def _total(counter: torch.Tensor | None) -> int:
    return 0 if counter is None else int(counter.sum())
