"""A gait clock: a phase the policy observes and a contact schedule it is paid to step to.

The clock is the control loop's own time, ``φ = frac(k · Δt · f)`` after ``k`` control steps of ``Δt`` since the
episode (on the robot: the policy) started, observed as ``(sin 2πφ, cos 2πφ)``. It needs no sensor: the robot counts
its ticks (:func:`clock_phase` is the one formula both sides use). Each foot has a phase offset (0 or ½ cycle for the
two pairs of a trot) and is wanted down in the first half of its own cycle; :func:`stance_desire` smooths the edges.
:func:`clock_contacts` pays a foot for resting (its ground speed near 0) while wanted down and for carrying nothing
while wanted up. The math is torch only; the Isaac Lab terms are the thin functions at the bottom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

#: Width of the smoothed edge of the stance window, in ``sin 2π(φ + offset)`` units: the desire is 0.5 at a
#: switch and within 5 % of 0 or 1 once the sine is past ±0.45 (a tenth of a cycle from the switch).
STANCE_EDGE = 0.15


def clock_phase(steps: torch.Tensor | int, step_dt_s: float, frequency_hz: float) -> torch.Tensor:
    """The clock's phase in cycles, ``[0, 1)``, after ``steps`` control steps of ``step_dt_s``."""
    if not (frequency_hz > 0.0 and step_dt_s > 0.0):
        raise ValueError(f"a gait clock needs a positive frequency and step, got {frequency_hz} Hz, {step_dt_s} s")
    cycles = torch.as_tensor(steps, dtype=torch.float64) * (step_dt_s * frequency_hz)
    return torch.remainder(cycles, 1.0).float()


def clock_observation(phase: torch.Tensor) -> torch.Tensor:
    """``(…, 2)``: ``sin 2πφ, cos 2πφ`` (continuous across the cycle's wrap)."""
    angle = 2.0 * math.pi * phase
    return torch.stack((torch.sin(angle), torch.cos(angle)), dim=-1)


def stance_desire(phase: torch.Tensor, offsets: Sequence[float], edge: float = STANCE_EDGE) -> torch.Tensor:
    """``(…, n_feet)`` in ``[0, 1]``: how much each foot is wanted down at ``phase`` (cycles).

    Foot ``i`` is wanted down while ``sin 2π(φ + offset_i) > 0`` (half its cycle), up otherwise; the switch is
    a ``tanh`` of the sine over ``edge``, so a foot landing a little early or late loses little.
    """
    offsets_t = torch.as_tensor(list(offsets), dtype=phase.dtype, device=phase.device)
    sine = torch.sin(2.0 * math.pi * (phase.unsqueeze(-1) + offsets_t))
    return 0.5 * (1.0 + torch.tanh(sine / edge))


def schedule_score(
    desire: torch.Tensor,
    foot_speed_mps: torch.Tensor,
    foot_force_n: torch.Tensor,
    speed_std_mps: float,
    force_std_n: float,
) -> torch.Tensor:
    """Per env, in ``[0, 1]``: the feet's mean agreement with the schedule.

    A foot wanted up scores ``exp(−(F/σ_F)²)`` on its contact force (in the air 1, carrying weight about 0); a foot
    wanted down scores one minus that (it must carry) times ``exp(−(v/σ_v)²)`` on its ground speed (it must rest: a
    skidding or swinging foot about 0). In between the two are mixed by the desire.
    """
    up = torch.exp(-torch.square(foot_force_n / force_std_n))
    down = (1.0 - up) * torch.exp(-torch.square(foot_speed_mps / speed_std_mps))
    return (desire * down + (1.0 - desire) * up).mean(dim=-1)


# --- Isaac Lab terms ------------------------------------------------------------------------------------------------


def gait_clock(env, frequency_hz: float) -> torch.Tensor:
    """Observation ``(num_envs, 2)``: the gait clock's ``sin, cos`` from the env's control steps since its reset."""
    return clock_observation(clock_phase(env.episode_length_buf, env.step_dt, frequency_hz)).to(env.device)


gait_clock.observation_size = 2  # the pre-build policy check's size (evaluation/policy_check.py)


def clock_contacts(
    env,
    sensor_cfg,
    asset_cfg,
    frequency_hz: float,
    phase_offsets: Sequence[float],
    speed_std_mps: float = 0.1,
    force_std_n: float = 5.0,
) -> torch.Tensor:
    """Reward per env in ``[0, 1]``: the feet (``sensor_cfg``/``asset_cfg`` body ids, the same feet in the same
    order as ``phase_offsets``) against the clock's schedule (:func:`schedule_score`)."""
    phase = clock_phase(env.episode_length_buf, env.step_dt, frequency_hz).to(env.device)
    desire = stance_desire(phase, phase_offsets)
    sensor = env.scene.sensors[sensor_cfg.name]
    force = sensor.data.net_forces_w.torch[:, sensor_cfg.body_ids, :].norm(dim=-1)
    speed = env.scene[asset_cfg.name].data.body_lin_vel_w.torch[:, asset_cfg.body_ids, :2].norm(dim=-1)
    return schedule_score(desire, speed, force, speed_std_mps, force_std_n)
