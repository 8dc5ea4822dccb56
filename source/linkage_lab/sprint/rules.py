"""The 10 m sprint's pure logic (docs/design/gait.md §4): end conditions and the metrics of a run.

End conditions, checked at every control step; when several hold at the same step the first
in this order wins (``ENDED_REASONS``):

1. ``finished``: the torso travelled ``track_length_m`` along +x from its start (a crossing
   counts even if the robot falls or leaves the lane at the same step: success first).
2. ``fell``: torso height below ``fall_height_m``.
3. ``left_track``: ``|y − y_start| > lane_half_width_m``.
4. ``no_progress``: the torso has not advanced ``no_progress_distance_m`` beyond its last
   checkpoint within ``no_progress_window_s``. The checkpoint is the start, and moves to the
   current position each time the torso gets that far past it.
5. ``time_limit``: simulated time ``≥ time_limit_s``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

#: End reasons, in precedence order; the tracker stores their index (−1 while running).
ENDED_REASONS: tuple[str, ...] = ("finished", "fell", "left_track", "no_progress", "time_limit")

#: The NAO's standing torso height (m): the torso frame sits 0.085 m above the hip pitch axis,
#: and the hip is thigh 0.100 + tibia 0.1029 + foot height 0.04519 above the sole (Aldebaran's
#: link lengths), 0.333 m in all with straight legs.
NAO_STANDING_TORSO_HEIGHT_M = 0.085 + 0.100 + 0.1029 + 0.04519

#: The NAO's fall threshold (m) in the lesson the sprint comes from.
NAO_FALL_HEIGHT_M = 0.20


def fall_threshold(standing_torso_height_m: float) -> float:
    """Fall height for a robot: the NAO's fraction ``0.20 / 0.333 ≈ 0.60`` of its standing torso height (m).

    Args:
        standing_torso_height_m: Height of the torso (the tracked body's origin) when standing (m).
    """
    if standing_torso_height_m <= 0.0:
        raise ValueError(f"standing torso height must be positive, got {standing_torso_height_m}")
    return standing_torso_height_m * NAO_FALL_HEIGHT_M / NAO_STANDING_TORSO_HEIGHT_M


@dataclass(frozen=True)
class SprintCfg:
    """The sprint's rules."""

    fall_height_m: float
    """Torso height below which the robot has fallen (m); see :func:`fall_threshold`."""
    track_length_m: float = 10.0
    """Distance to travel along +x (m)."""
    lane_half_width_m: float = 0.5
    """Largest allowed ``|y − y_start|`` (m): half of a 1 m lane."""
    no_progress_distance_m: float = 0.2
    """Progress needed within each ``no_progress_window_s`` (m)."""
    no_progress_window_s: float = 20.0
    """Window for the progress check (s)."""
    time_limit_s: float = 90.0
    """Longest run (s)."""


class SprintTracker:
    """Incremental sprint referee, batched over environments. Call :meth:`update` every control step.

    The start position of an environment is its torso position at its first update after
    construction or :meth:`reset`. Once an environment has ended its state is frozen.

    Args:
        num_envs: Number of environments.
        cfg: The rules.
        device: Torch device of the state.
    """

    def __init__(self, num_envs: int, cfg: SprintCfg, device: torch.device | str = "cpu"):
        self.cfg = cfg
        self.num_envs = num_envs
        zeros = torch.zeros(num_envs, dtype=torch.float64, device=device)
        self.start_xy = torch.zeros(num_envs, 2, dtype=torch.float64, device=device)
        self.checkpoint_x, self.checkpoint_time = zeros.clone(), zeros.clone()
        self.distance_m, self.duration_s, self.max_lateral_offset_m = (
            zeros.clone(),
            zeros.clone(),
            zeros.clone(),
        )
        self.fell = torch.zeros(num_envs, dtype=torch.bool, device=device)
        self.started = torch.zeros_like(self.fell)
        self.reason = torch.full((num_envs,), -1, dtype=torch.long, device=device)

    @property
    def done(self) -> torch.Tensor:
        """True where the run has ended, ``(num_envs,)``."""
        return self.reason >= 0

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        """Forget the runs of ``env_ids`` (all when None); their next update sets the start."""
        ids = slice(None) if env_ids is None else env_ids
        for state in (self.checkpoint_x, self.checkpoint_time, self.distance_m, self.duration_s):
            state[ids] = 0.0
        self.max_lateral_offset_m[ids] = 0.0
        self.fell[ids] = False
        self.started[ids] = False
        self.reason[ids] = -1

    def update(self, time_s: torch.Tensor | float, torso_pos_m: torch.Tensor) -> torch.Tensor:
        """Advance the referee by one step.

        Args:
            time_s: Simulated time (s), scalar or ``(num_envs,)``; the clock starts with the simulation.
            torso_pos_m: Torso world position ``(num_envs, 3)`` (m).

        Returns:
            The ``done`` mask after this step, ``(num_envs,)``.
        """
        cfg = self.cfg
        pos = torso_pos_m.to(self.start_xy)
        time = torch.as_tensor(time_s, dtype=pos.dtype, device=pos.device).expand(self.num_envs)
        new = ~self.started
        self.start_xy[new] = pos[new, :2]
        self.checkpoint_x[new] = pos[new, 0]
        self.checkpoint_time[new] = time[new]
        self.started |= new

        active = ~self.done
        progress = pos[:, 0] - self.start_xy[:, 0]
        lateral = (pos[:, 1] - self.start_xy[:, 1]).abs()
        advanced = pos[:, 0] >= self.checkpoint_x + cfg.no_progress_distance_m
        self.checkpoint_x = torch.where(active & advanced, pos[:, 0], self.checkpoint_x)
        self.checkpoint_time = torch.where(active & advanced, time, self.checkpoint_time)

        conditions = torch.stack(
            (
                progress >= cfg.track_length_m,
                pos[:, 2] < cfg.fall_height_m,
                lateral > cfg.lane_half_width_m,
                time - self.checkpoint_time >= cfg.no_progress_window_s,
                time >= cfg.time_limit_s,
            ),
            dim=-1,
        )
        any_condition = conditions.any(dim=-1)
        first = conditions.to(torch.uint8).argmax(dim=-1)
        ending = active & any_condition
        self.reason = torch.where(ending, first, self.reason)
        self.distance_m = torch.where(active, progress.clamp(0.0, cfg.track_length_m), self.distance_m)
        self.duration_s = torch.where(active, time, self.duration_s)
        self.max_lateral_offset_m = torch.where(
            active, torch.maximum(self.max_lateral_offset_m, lateral), self.max_lateral_offset_m
        )
        self.fell |= active & conditions[:, 1]
        return self.done

    def metrics(self, env_id: int = 0) -> dict[str, Any]:
        """The metrics of one ended run (the ``metrics.json`` fields of docs/design/gait.md §4).

        Raises:
            RuntimeError: The run has not ended yet.
        """
        reason_index = int(self.reason[env_id])
        if reason_index < 0:
            raise RuntimeError(f"sprint in env {env_id} has not ended (t = {float(self.duration_s[env_id])} s)")
        reason = ENDED_REASONS[reason_index]
        duration = float(self.duration_s[env_id])
        distance = float(self.distance_m[env_id])
        success = reason == "finished"
        return {
            "success": success,
            "time": duration if success else None,
            "distance_m": distance,
            "average_speed_mps": distance / duration if duration > 0.0 else 0.0,
            "max_lateral_offset_m": float(self.max_lateral_offset_m[env_id]),
            "fell": bool(self.fell[env_id]),
            "ended_reason": reason,
            "duration_s": duration,
        }


def sprint_metrics(time_s: torch.Tensor, torso_pos_m: torch.Tensor, cfg: SprintCfg) -> dict[str, Any]:
    """Referee a whole torso trajectory: the metrics at the first step where the run ends.

    Args:
        time_s: Sample times ``(T,)`` (s), increasing.
        torso_pos_m: Torso positions ``(T, 3)`` (m); the first sample is the start.
        cfg: The rules.

    Raises:
        ValueError: The trajectory ends before any end condition holds.
    """
    tracker = SprintTracker(1, cfg, device=torso_pos_m.device)
    for time, position in zip(time_s, torso_pos_m, strict=True):
        if bool(tracker.update(time, position.unsqueeze(0))[0]):
            return tracker.metrics(0)
    raise ValueError(f"the trajectory ends (t = {float(time_s[-1])} s) before the sprint does")
