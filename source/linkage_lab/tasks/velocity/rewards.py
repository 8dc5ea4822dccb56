"""Reward terms of the velocity tasks beyond Isaac Lab's (thin: the counting is pure torch elsewhere)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.managers import ManagerTermBase, SceneEntityCfg

from linkage_lab.gait.footfalls import TouchdownSequence
from linkage_lab.gait.heading import HeadingReference

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab.managers import RewardTermCfg


class touchdown_alternation(ManagerTermBase):
    """Per touchdown: +1 for a step by the other foot than the last one, −1 for the same foot again or
    for feet landing together (the term is divided by the control period, so the weight is the reward
    of one touchdown, not of one step).

    Touchdowns and their order are :class:`~linkage_lab.gait.footfalls.TouchdownSequence`'s, the
    definition ``eval.json``'s ``footfalls.alternation`` counts with, on the feet named by
    ``params["sensor_cfg"]`` (a contact sensor that tracks air time; a foot is down while its current
    contact time is positive, as in the evaluation). ``params["min_air_steps"]`` (default 3) is the
    shortest lift that counts as a touchdown at all, ``params["min_swing_s"]`` (default 0) the shortest
    lift an alternating touchdown is paid for: quicker alternating steps pay 0, so stepping faster than
    the gait's rhythm is not a way to collect touchdowns. With ``params["command_name"]``, steps are paid
    only while that velocity command asks for at least ``params["min_command_mps"]`` (default 0.1 m/s,
    Isaac Lab's gate of its air-time reward), so stepping in place is not paid on a zero command; the
    penalties hold at any command, and ``params["standing_touchdown_cost"]`` (default 0) is what any
    touchdown costs while the command asks to stand (a robot told to stand should not march on the spot).
    ``params["step_period_s"]`` (default 0: off) makes the pay frequency-neutral: an alternating touchdown
    ``Δt`` seconds after the previous touchdown (of any foot) pays ``min(1, Δt / step_period_s)``, so steps at
    the gait's cadence or slower pay 1 each while quicker steps pay at most ``1 / step_period_s`` per second,
    whatever their rate (per touchdown, the term pays for stepping faster). The first touchdown of an episode
    pays nothing.
    """

    def __init__(self, cfg: RewardTermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        sensor_cfg = cfg.params["sensor_cfg"]
        self._sensor = env.scene.sensors[sensor_cfg.name]
        ids, _ = self._sensor.find_bodies(sensor_cfg.body_names, preserve_order=True)
        if len(ids) < 2:
            raise ValueError(f"touchdown_alternation needs two or more feet, got bodies {sensor_cfg.body_names!r}")
        self._ids = ids
        min_air_steps = int(cfg.params.get("min_air_steps", 3))
        self._sequence = TouchdownSequence(env.num_envs, len(ids), min_air_steps, device=env.device)
        self._min_swing_steps = max(min_air_steps, round(float(cfg.params.get("min_swing_s", 0.0)) / env.step_dt))
        step_period_s = float(cfg.params.get("step_period_s", 0.0))
        if not step_period_s >= 0.0:
            raise ValueError(f"touchdown_alternation's step_period_s must be >= 0 s, got {step_period_s!r}")
        self._step_period_s = step_period_s

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        """A new episode starts in ``env_ids``: forget their feet's history."""
        self._sequence.reset(env_ids)

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        sensor_cfg,
        min_air_steps: int = 3,
        min_swing_s: float = 0.0,
        command_name: str | None = None,
        min_command_mps: float = 0.1,
        standing_touchdown_cost: float = 0.0,
        step_period_s: float = 0.0,
    ) -> torch.Tensor:
        down = self._sensor.data.current_contact_time.torch[:, self._ids] > 0.0
        step = self._sequence.step(down)
        paid = step.alternating & (step.lift_steps.max(dim=-1).values >= self._min_swing_steps)
        score = -step.repeated.float() - step.simultaneous.float()
        if command_name is not None:
            walking = _walking(env, command_name, min_command_mps)
            paid &= walking
            score -= standing_touchdown_cost * (~walking & step.touchdown.any(dim=-1)).float()
        pay = paid.float()
        if self._step_period_s > 0.0:
            pay *= torch.clamp(step.interval_steps.float() * env.step_dt / self._step_period_s, max=1.0)
        return (score + pay) / env.step_dt


def airborne(
    env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, command_name: str | None = None, min_command_mps: float = 0.1
) -> torch.Tensor:
    """1 while no foot named by ``sensor_cfg`` is in contact (a flight phase), else 0: with a negative weight,
    the cost of running instead of walking, per second in the air.

    A foot is down while its contact sensor's current contact time is positive, as in
    :class:`touchdown_alternation` and the evaluation. With ``command_name``, it counts only while that velocity
    command asks for at least ``min_command_mps`` (a hop on a standing command is the alternation's to charge).
    """
    sensor = env.scene.sensors[sensor_cfg.name]
    up = ~(sensor.data.current_contact_time.torch[:, sensor_cfg.body_ids] > 0.0).any(dim=-1)
    if command_name is not None:
        up &= _walking(env, command_name, min_command_mps)
    return up.float()


def foot_held_up(
    env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, max_air_s: float = 0.5, cap_s: float = 1.0
) -> torch.Tensor:
    """Per env, over the feet named by ``sensor_cfg``, the time each has been off the ground beyond ``max_air_s``, up
    to ``cap_s`` per foot (s): with a negative weight, the cost of carrying a leg instead of walking on it. A trot's
    swing lasts a fraction of a second; a foot held up for good costs ``cap_s`` at every step. The foot's air time
    is its contact sensor's current air time (Isaac Lab's ``track_air_time``)."""
    air_s = env.scene.sensors[sensor_cfg.name].data.current_air_time.torch[:, sensor_cfg.body_ids]
    return torch.clamp(air_s - max_air_s, min=0.0, max=cap_s).sum(dim=-1)


def short_stance(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, min_stance_s: float = 0.15) -> torch.Tensor:
    """Per env, over the feet named by ``sensor_cfg`` that left the ground this step, how much shorter than
    ``min_stance_s`` their stance was (s), per second of control step: with a negative weight, each lift costs
    ``weight × shortfall``. A foot that only taps the ground (a stance of a step or two) to dodge
    :func:`foot_held_up` carries nothing; a trot's stance lasts a few tenths of a second. A foot left the ground
    this step when its current air time is positive and at most a control step, as Isaac Lab's
    ``compute_first_air`` tells it."""
    data = env.scene.sensors[sensor_cfg.name].data
    air_s = data.current_air_time.torch[:, sensor_cfg.body_ids]
    lifted = (air_s > 0.0) & (air_s <= env.step_dt + 1.0e-6)
    shortfall = torch.clamp(min_stance_s - data.last_contact_time.torch[:, sensor_cfg.body_ids], min=0.0)
    return (shortfall * lifted).sum(dim=-1) / env.step_dt


def _walking(env: ManagerBasedRLEnv, command_name: str, min_command_mps: float) -> torch.Tensor:
    """Per env, whether the velocity command ``command_name`` asks for a planar speed of ``min_command_mps`` or more."""
    command = env.command_manager.get_command(command_name)[:, :2]
    return torch.linalg.norm(command, dim=-1) >= min_command_mps


class heading_tracking(ManagerTermBase):
    """``exp(−e² / σ²)`` of the heading error ``e`` from the heading the yaw-rate command asked for.

    ``e`` is :class:`~linkage_lab.gait.heading.HeadingReference`'s: the command's integral since the
    episode began against the asset's heading (``data.heading_w``), at most ``params["max_error_rad"]``
    (default 0.5 rad) behind. ``params["std_rad"]`` is ``σ`` (rad). Unlike Isaac Lab's yaw-rate kernel,
    this pays for the heading a robot holds, not for its yaw rate at each instant, which a biped's stride
    swings through.
    """

    def __init__(self, cfg: RewardTermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self._reference = HeadingReference(env.num_envs, float(cfg.params.get("max_error_rad", 0.5)), device=env.device)

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        """A new episode starts in ``env_ids``: the reference restarts at the robot's heading."""
        self._reference.reset(env_ids)

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        std_rad: float,
        command_name: str,
        max_error_rad: float = 0.5,
        asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
    ) -> torch.Tensor:
        heading = env.scene[asset_cfg.name].data.heading_w.torch
        yaw_rate = env.command_manager.get_command(command_name)[:, 2]
        error = self._reference.step(heading, yaw_rate, env.step_dt)
        return torch.exp(-torch.square(error) / std_rad**2)


class yaw_acceleration_l2(ManagerTermBase):
    """``(Δω_z / Δt)²``: the square of the base's yaw acceleration (rad/s²)², its body-frame yaw rate differenced
    over one control step.

    With a negative weight, the cost of a yaw rate that swings from one step to the next: a swing of amplitude
    ``A`` at ``f`` Hz costs about ``(2π f A)² / 2`` on average, so it falls on the fast swing a body's chatter
    makes and hardly on a steady turn or slow steering. The first step of an episode costs nothing (there is no
    previous yaw rate to difference).
    """

    def __init__(self, cfg: RewardTermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self._previous = torch.zeros(env.num_envs, device=env.device)
        self._fresh = torch.ones(env.num_envs, dtype=torch.bool, device=env.device)

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        """A new episode starts in ``env_ids``: their next step has nothing to difference."""
        self._fresh[slice(None) if env_ids is None else env_ids] = True

    def __call__(self, env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")) -> torch.Tensor:
        yaw_rate = env.scene[asset_cfg.name].data.root_ang_vel_b.torch[:, 2]
        acceleration = torch.where(self._fresh, 0.0, (yaw_rate - self._previous) / env.step_dt)
        self._previous = yaw_rate.clone()
        self._fresh[:] = False
        return torch.square(acceleration)


def lin_vel_error_l2(
    env: ManagerBasedRLEnv, command_name: str, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")
) -> torch.Tensor:
    """``‖c_xy − v_xy‖²``: the squared error of the base's body-frame planar velocity against the command's (m/s)².

    The walking counterpart of :func:`yaw_rate_error_l2`: with a negative weight, the acceptance's lin-vel RMS error
    as a cost. Where the exponential kernels flatten a few kernel widths out, the square keeps charging the peaks of a
    swing (the steps' jolts) in proportion to its variance.
    """
    velocity = env.scene[asset_cfg.name].data.root_lin_vel_b.torch[:, :2]
    command = env.command_manager.get_command(command_name)[:, :2]
    return torch.sum(torch.square(command - velocity), dim=1)


def standing_joint_deviation_l1(
    env: ManagerBasedRLEnv,
    command_name: str,
    max_lin_mps: float = 0.05,
    max_yaw_radps: float = 0.05,
    asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
) -> torch.Tensor:
    """``Σ |q − q₀|`` over the joints of ``asset_cfg`` (rad) while the command asks to stand, else 0.

    The command asks to stand when its planar speed is under ``max_lin_mps`` and its yaw rate under
    ``max_yaw_radps``. Isaac Lab's ``stand_still_joint_deviation_l1`` reads the planar speed alone, which on a robot
    told to turn on the spot would charge the turn. With a negative weight: a robot told to stand holds its
    standing pose instead of marching on the spot (a trot in place swings the base at every step).
    """
    asset = env.scene[asset_cfg.name]
    ids = asset_cfg.joint_ids
    deviation = torch.abs(asset.data.joint_pos.torch[:, ids] - asset.data.default_joint_pos.torch[:, ids])
    command = env.command_manager.get_command(command_name)
    standing = (torch.linalg.norm(command[:, :2], dim=-1) < max_lin_mps) & (torch.abs(command[:, 2]) < max_yaw_radps)
    return deviation.sum(dim=-1) * standing


def yaw_rate_error_l2(
    env: ManagerBasedRLEnv, command_name: str, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")
) -> torch.Tensor:
    """``(c_z − ω_z)²``: the squared error of the base's body-frame yaw rate against the command's (rad/s)².

    With a negative weight, the acceptance's yaw-rate RMS error itself as a cost, summed over an episode. Isaac
    Lab's exponential kernels pay nothing more once an error is a few kernel widths out, and little less for a
    swing that crosses the command; a square charges every swing of the yaw rate in proportion to its
    variance, whatever its frequency, and the mean error as much.
    """
    yaw_rate = env.scene[asset_cfg.name].data.root_ang_vel_b.torch[:, 2]
    command = env.command_manager.get_command(command_name)[:, 2]
    return torch.square(command - yaw_rate)
