"""Residual actions on a command-driven scripted gait: the action term and its observation.

The joint target of each control step is ``q* = clip(q_gait + scale · a, q_min, q_max)``: ``q_gait``
from :class:`~linkage_lab.gait.commanded.CommandedBipedGait` (phase, stride and stepping driven by
the velocity command, balance feedback from the IMU), ``a`` the policy's action and the clip the
articulation's joint range. The action is first cleaned as in every velocity task
(:class:`~linkage_lab.tasks.velocity.faults.GuardedJointPositionAction`: a non-finite row counts as
0, i.e. the gait alone, and actions are clipped). The gait's state ``(φ, s, a)`` resets with the
env; the policy sees it through :func:`gait_state`. Export writes the same gait module as
``gait.onnx`` beside the policy.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import MISSING, asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from isaaclab.utils import configclass

from linkage_lab.deploy.residual_gait import GAIT_DOC, GAIT_FILE, gait_metadata, write_gait_graph
from linkage_lab.gait.commanded import CommandedBipedGait, gait_observation, yaw_rate_with_integral
from linkage_lab.gait.policy import describe
from linkage_lab.tasks.velocity.estimate import VelocityError
from linkage_lab.tasks.velocity.faults import GuardedJointPositionAction, GuardedJointPositionActionCfg

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv, ManagerBasedRLEnv
    from isaaclab.managers import SceneEntityCfg


class ResidualGaitAction(GuardedJointPositionAction):
    """Joint position targets ``clip(q_gait + scale · a, q_min, q_max)`` (module docstring).

    ``a`` is the guarded action: a row with a non-finite entry counts as 0 (the gait alone), then
    ``±action_clip``. The gait state resets with its env.
    """

    cfg: ResidualGaitActionCfg

    def __init__(self, cfg: ResidualGaitActionCfg, env: ManagerBasedEnv):
        if cfg.use_default_offset or cfg.offset != 0.0:
            raise ValueError("a residual gait action has no offset: set use_default_offset=False and offset=0.0")
        if cfg.target_filter_alpha != 1.0:
            raise ValueError("a residual gait action has no target filter (the gait's targets are not smoothed)")
        super().__init__(cfg, env)
        if cfg.scale_by_joint:
            scales = residual_scales(self._joint_names, cfg.scale, cfg.scale_by_joint)
            self._scale = torch.tensor(scales, device=self.device).repeat(self.num_envs, 1)
        self.gait_prior: CommandedBipedGait = cfg.gait_factory(env.step_dt, list(self._joint_names))
        if cfg.frequency_hz is not None:
            self.gait_prior = self.gait_prior.with_frequency(cfg.frequency_hz)
        if cfg.turn_per_yaw_rate_s is not None:
            self.gait_prior.command_cfg = replace(
                self.gait_prior.command_cfg, turn_per_yaw_rate_s=cfg.turn_per_yaw_rate_s
            )
        if cfg.yaw_integral_gain_per_s is not None:
            self.gait_prior.command_cfg = replace(
                self.gait_prior.command_cfg, yaw_integral_gain_per_s=cfg.yaw_integral_gain_per_s
            )
        self.gait_prior.to(self.device)
        limits = self._asset.data.joint_pos_limits.torch[:, self._joint_ids]
        self._target_lower = limits[..., 0].clone()
        self._target_upper = limits[..., 1].clone()
        self.gait_state = self.gait_prior.initial_state(self.num_envs, self.device)
        #: The base velocity the gait places its feet by: the estimator's error on the truth (``None``: the truth).
        self.velocity_error = (
            None
            if cfg.velocity_error is None
            else VelocityError(self.num_envs, *cfg.velocity_error, device=self.device)
        )
        #: The state this step's targets were composed at (``gait_state`` is already the next one).
        self.applied_gait_state = self.gait_state.clone()
        self.gait_targets = torch.zeros_like(self._raw_actions)
        #: Per env, the heading the gait has fallen behind its yaw-rate command (rad; :func:`yaw_rate_with_integral`).
        self.yaw_integral_rad = torch.zeros(self.num_envs, device=self.device)

    def process_actions(self, actions: torch.Tensor) -> None:
        """Compose the joint targets of this step and advance the gait's clock."""
        # The guard cleans the action into ``_raw_actions`` (and the manager's copy the rewards read).
        super().process_actions(actions)
        data = self._asset.data
        command = self._env.command_manager.get_command(self.cfg.command_name)
        self.applied_gait_state = self.gait_state
        if self.gait_prior.command_cfg.yaw_integral_gain_per_s > 0.0:
            command, self.yaw_integral_rad = yaw_rate_with_integral(
                self.gait_prior.command_cfg,
                command,
                data.root_ang_vel_b.torch[:, 2],
                self.yaw_integral_rad,
                self.gait_prior.control_period_s,
            )
        with torch.no_grad():
            self.gait_targets, self.gait_state = self.gait_prior(
                self.gait_state,
                command,
                data.projected_gravity_b.torch,
                data.root_ang_vel_b.torch,
                self._base_velocity(data.root_lin_vel_b.torch),
            )
        targets = self.gait_targets + self._raw_actions * self._scale
        self._processed_actions = torch.maximum(torch.minimum(targets, self._target_upper), self._target_lower)

    def _base_velocity(self, truth: torch.Tensor) -> torch.Tensor:
        return truth if self.velocity_error is None else self.velocity_error(truth)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        """Zero the last action and restart the gait (phase 0, standing) of ``env_ids`` (all when None)."""
        super().reset(env_ids)
        if self.velocity_error is not None:
            self.velocity_error.reset(env_ids)
        ids = slice(None) if env_ids is None else env_ids
        self.gait_state[ids] = 0.0
        self.applied_gait_state[ids] = 0.0
        self.yaw_integral_rad[ids] = 0.0

    def target_clip(self) -> list[list[float]]:
        """Per joint ``[q_min, q_max]`` of the composed target (rad), env 0."""
        return torch.stack((self._target_lower[0], self._target_upper[0]), dim=-1).tolist()

    def bundle_metadata(self) -> dict[str, Any]:
        """What ``metadata.json`` adds for this term: the target composition and the gait graph's I/O."""

        return {
            "action_target": "q* = clip(gait_targets + action_scale * action, action_target_clip) (rad); "
            "gait_targets from gait.onnx, see residual_gait",
            "action_target_clip": self.target_clip(),
            "residual_gait": gait_metadata(
                self.gait_prior,
                command_name=self.cfg.command_name,
                observation_term=self.cfg.observation_term,
                gait_parameters=describe(self.gait_prior.gait),
                command_parameters=asdict(self.gait_prior.command_cfg),
            ),
        }

    def write_bundle_files(self, out_dir: Path) -> dict[str, str]:
        """Write ``gait.onnx`` into the bundle; returns ``{relative path: description}``."""

        write_gait_graph(self.gait_prior, Path(out_dir) / GAIT_FILE)
        return {GAIT_FILE: "the gait prior: (gait_state, command, IMU) -> joint targets, next gait_state (ONNX)"}

    def bundle_readme_section(self) -> str:
        """Markdown for the bundle's README: how the robot composes its joint targets."""

        return GAIT_DOC


@configclass
class ResidualGaitActionCfg(GuardedJointPositionActionCfg):
    """:class:`ResidualGaitAction`: the policy's action is a correction to a scripted gait's targets."""

    class_type: type = ResidualGaitAction

    use_default_offset: bool = False
    """Always False: the gait, not the default pose, is the action's origin."""
    gait_factory: Callable[[float, list[str]], CommandedBipedGait] = MISSING
    """``factory(control_period_s, joint_names)`` building the gait prior for the term's joints."""
    command_name: str = "base_velocity"
    velocity_error: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None
    """``(bias_mps, noise_std_mps)`` per base axis of the velocity the gait reads
    (:class:`~linkage_lab.tasks.velocity.estimate.VelocityError`): on the robot the gait reads the estimator's;
    ``None``: the simulator's truth."""
    """The velocity command that drives the gait: ``(v_x, v_y, ω_z)`` (m/s, m/s, rad/s)."""
    observation_term: str = "gait"
    """Name of the policy observation term that carries :func:`gait_state` (documentation in the export)."""
    turn_per_yaw_rate_s: float | None = None
    """The gait's hip-yaw turn per step per unit yaw-rate command (s; ``GaitCommandCfg.turn_per_yaw_rate_s``);
    None: the factory's. ``0.0``: a gait that does not turn on a yaw-rate command."""
    yaw_integral_gain_per_s: float | None = None
    """The gait's heading hold on the yaw-rate command (1/s; ``GaitCommandCfg.yaw_integral_gain_per_s``); None: the
    factory's. ``0.0``: the open-loop turn."""
    frequency_hz: float | None = None
    """The gait's step frequency (Hz; :meth:`CommandedBipedGait.with_frequency`: same step length, so the
    speed per unit stride scales with it); None: the factory's."""
    scale_by_joint: dict[str, float] = {}
    """Residual scales (rad per unit action) replacing ``scale`` for some joints, keyed by a regular expression
    searched in the joint name: ``{hip_yaw: 0.03}`` matches both hip yaws and reads as the hydra override
    ``env.actions.joint_pos.scale_by_joint={hip_yaw:0.03}`` (:func:`residual_scales`). Empty (the default):
    ``scale`` for all."""


def residual_scales(joint_names: Sequence[str], scale: float, scale_by_joint: dict[str, float] | str) -> list[float]:
    """Per joint residual scale: ``scale_by_joint``'s value where its key (a regex) is in the name, else ``scale``.

    Raises:
        ValueError: A key that matches no joint, a joint matched by two keys, a malformed regex, or a
            negative or non-finite scale, each naming what it was.
    """
    if isinstance(scale_by_joint, str):
        # Isaac Lab's hydra layer hands a dict override (``{hip_yaw:0.03}``) over as its text: read it
        # back with hydra's own grammar.
        from hydra.core.override_parser.overrides_parser import OverridesParser
        from hydra.errors import HydraException

        try:
            parsed = OverridesParser.create().parse_overrides([f"scale_by_joint={scale_by_joint}"])[0].value()
        except HydraException as error:
            raise ValueError(f"scale_by_joint {scale_by_joint!r} is not a mapping: {error}") from None
        if not isinstance(parsed, dict):
            raise ValueError(f"scale_by_joint {scale_by_joint!r} is not a mapping of joint regex to scale")
        scale_by_joint = parsed
    if not isinstance(scale, (int, float)):
        raise ValueError(f"scale_by_joint needs a single default scale, got scale={scale!r}")
    scales = [float(scale)] * len(joint_names)
    matched_by: dict[str, str] = {}
    for key, value in scale_by_joint.items():
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"scale_by_joint[{key!r}] = {value!r} is not a number") from None
        if not math.isfinite(value) or value < 0.0:
            raise ValueError(f"scale_by_joint[{key!r}] = {value}: a residual scale must be finite and >= 0")
        try:
            pattern = re.compile(str(key))
        except re.error as error:
            raise ValueError(f"scale_by_joint key {key!r} is not a regular expression: {error}") from None
        hits = [i for i, name in enumerate(joint_names) if pattern.search(name)]
        if not hits:
            raise ValueError(f"scale_by_joint key {key!r} matches no joint of {list(joint_names)}")
        for i in hits:
            name = joint_names[i]
            if name in matched_by:
                raise ValueError(f"joint {name!r} is matched by scale_by_joint keys {matched_by[name]!r} and {key!r}")
            matched_by[name] = str(key)
            scales[i] = value
    return scales


def gait_state(env: ManagerBasedRLEnv, action_name: str = "joint_pos") -> torch.Tensor:
    """The gait prior's state as the policy sees it: ``(sin φ, cos φ, s, a)``, ``(num_envs, 4)``.

    φ is the phase (rad) the next action is composed at, ``s`` the stride and ``a`` the stepping scale.
    """
    term = env.action_manager.get_term(action_name)
    return gait_observation(term.gait_state)


#: Its size, for the pre-build policy check (:mod:`linkage_lab.evaluation.policy_check`).
gait_state.observation_size = 4


def gait_contact_schedule(
    env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, action_name: str = "joint_pos"
) -> torch.Tensor:
    """Share of the feet whose contact matches the gait's schedule this step: ``(num_envs,)`` in [0, 1].

    A foot should be in the air while the gait prior swings it (:meth:`CommandedBipedGait.swing_legs` at
    the phase this step's targets were composed at) and on the ground otherwise. ``sensor_cfg`` names
    the foot bodies of a contact sensor that tracks air time, in the gait's leg order (``BIPED_SIDES``,
    ``preserve_order=True``); a foot is down while its current contact time is positive. Paying this
    teaches the residual policy to step when the gait steps instead of tapping between its strides.
    """
    term = env.action_manager.get_term(action_name)
    swing = term.gait_prior.swing_legs(term.applied_gait_state)
    sensor = env.scene.sensors[sensor_cfg.name]
    down = sensor.data.current_contact_time.torch[:, sensor_cfg.body_ids] > 0.0
    return (down != swing).float().mean(dim=-1)


class GaitPriorPolicy:
    """The gait prior alone as a policy (zero corrections): ``linkage-lab eval --policy scripted`` on a
    residual task, the baseline a trained residual policy is measured against.

    Args:
        env: The (wrapped or bare) env of a residual task.
    """

    description = {"type": "gait_prior", "actions": "zero: the task's own gait prior alone"}

    def __init__(self, env: Any):
        unwrapped = env.unwrapped
        self._zeros = torch.zeros(
            unwrapped.num_envs, unwrapped.action_manager.total_action_dim, device=unwrapped.device
        )

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        """Zero actions, whatever the observation."""
        return self._zeros.clone()

    def reset(self, dones: torch.Tensor) -> None:
        """Nothing to forget: the gait's clock lives in the action term and resets with its env."""
