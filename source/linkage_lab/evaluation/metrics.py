"""Running statistics of an evaluation: episodes, velocity tracking, joint torques, footfalls (pure torch)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from linkage_lab.gait.footfalls import TouchdownSequence


class EpisodeStats:
    """Per-env running return and length; records each episode when it ends.

    Args:
        num_envs: Number of parallel envs.
        device: Device of the reward tensors.
    """

    def __init__(self, num_envs: int, device: str | torch.device = "cpu"):
        self._return = torch.zeros(num_envs, dtype=torch.float64, device=device)
        self._length = torch.zeros(num_envs, dtype=torch.long, device=device)
        self.returns: list[float] = []
        self.lengths: list[int] = []
        self.timeouts = 0
        self.falls = 0

    @property
    def completed(self) -> int:
        """Episodes finished so far."""
        return len(self.returns)

    def add(self, reward: torch.Tensor, dones: torch.Tensor, time_outs: torch.Tensor | None) -> None:
        """Add one control step: ``reward`` ``(num_envs,)``, ``dones`` and ``time_outs`` (bool-like)."""
        self._return += reward.to(torch.float64)
        self._length += 1
        done = dones.to(torch.bool)
        if not done.any():
            return
        timeout = torch.zeros_like(done) if time_outs is None else time_outs.to(torch.bool)
        self.returns += self._return[done].tolist()
        self.lengths += self._length[done].tolist()
        self.timeouts += int((done & timeout).sum())
        self.falls += int((done & ~timeout).sum())
        self._return[done] = 0.0
        self._length[done] = 0

    def summary(self, step_dt_s: float) -> dict[str, Any]:
        """Return (mean, std), episode length (steps and s) and the fall rate (``None`` without episodes).

        Args:
            step_dt_s: Control period (s).
        """
        n = self.completed
        returns = torch.tensor(self.returns, dtype=torch.float64)
        lengths = torch.tensor(self.lengths, dtype=torch.float64)
        mean_steps = float(lengths.mean()) if n else None
        return {
            "episodes": n,
            "return": {
                "mean": float(returns.mean()) if n else None,
                "std": float(returns.std(correction=0)) if n else None,
            },
            "episode_length": {
                "mean_steps": mean_steps,
                "mean_s": None if mean_steps is None else mean_steps * step_dt_s,
                "std_steps": float(lengths.std(correction=0)) if n else None,
            },
            "falls": self.falls,
            "timeouts": self.timeouts,
            "fall_rate": self.falls / n if n else None,
        }


class TrackingStats:
    """RMS velocity-tracking errors and the mean forward speed and yaw rate over the samples added."""

    def __init__(self):
        self.samples = 0
        self._sum_lin_sq = 0.0
        self._sum_yaw_sq = 0.0
        self._sum_forward = 0.0
        self._sum_forward_cmd = 0.0
        self._sum_yaw = 0.0

    def add(self, command: torch.Tensor, lin_vel_b: torch.Tensor, ang_vel_b: torch.Tensor, mask: torch.Tensor) -> None:
        """Add the envs selected by ``mask``.

        Args:
            command: ``(num_envs, 3)`` commanded (v_x, v_y, ω_z) in the base frame (m/s, m/s, rad/s).
            lin_vel_b: ``(num_envs, 3)`` base linear velocity in the base frame (m/s).
            ang_vel_b: ``(num_envs, 3)`` base angular velocity in the base frame (rad/s).
            mask: ``(num_envs,)`` bool, the envs to count.
        """
        if not mask.any():
            return
        command, lin, ang = command[mask].double(), lin_vel_b[mask].double(), ang_vel_b[mask].double()
        self.samples += int(mask.sum())
        self._sum_lin_sq += float(((command[:, :2] - lin[:, :2]) ** 2).sum())
        self._sum_yaw_sq += float(((command[:, 2] - ang[:, 2]) ** 2).sum())
        self._sum_forward += float(lin[:, 0].sum())
        self._sum_forward_cmd += float(command[:, 0].sum())
        self._sum_yaw += float(ang[:, 2].sum())

    def summary(self) -> dict[str, Any]:
        """``lin_vel_xy_rms_mps`` (RMS of ‖v_cmd,xy − v_xy‖), ``yaw_rate_rms_radps``, mean speeds and yaw rate.

        The mean yaw rate is what a heading follows; a biped's RMS yaw-rate error also holds the yaw its
        body swings through with every step, which averages out over a stride.
        """
        n = self.samples
        return {
            "samples": n,
            "lin_vel_xy_rms_mps": math.sqrt(self._sum_lin_sq / n) if n else None,
            "yaw_rate_rms_radps": math.sqrt(self._sum_yaw_sq / n) if n else None,
            "mean_forward_speed_mps": self._sum_forward / n if n else None,
            "mean_commanded_forward_speed_mps": self._sum_forward_cmd / n if n else None,
            "mean_yaw_rate_radps": self._sum_yaw / n if n else None,
        }


class JointTorqueStats:
    """Peak and RMS joint torque per joint (applied, after limits) and the commanded peak (before).

    A sample is one env at one physics substep: the statistics see every torque the physics
    integrated, not only the last substep of each control step.
    """

    def __init__(self, num_joints: int):
        self.samples = 0
        self._sum_sq = torch.zeros(num_joints, dtype=torch.float64)
        self._peak = torch.zeros(num_joints, dtype=torch.float64)
        self._commanded_peak = torch.zeros(num_joints, dtype=torch.float64)

    def add(self, applied_nm: torch.Tensor, commanded_nm: torch.Tensor) -> None:
        """Add applied and commanded torques (N·m), in report joint order.

        Args:
            applied_nm: ``(num_envs, num_joints)`` or ``(substeps, num_envs, num_joints)``: every
                leading index is one sample.
            commanded_nm: Same shape, before the actuators' limits.
        """
        num_joints = self._peak.shape[0]
        applied = applied_nm.detach().to("cpu", torch.float64).reshape(-1, num_joints)
        commanded = commanded_nm.detach().to("cpu", torch.float64).reshape(-1, num_joints)
        if applied.shape[0] == 0:
            return
        self.samples += applied.shape[0]
        self._sum_sq += (applied**2).sum(dim=0)
        self._peak = torch.maximum(self._peak, applied.abs().amax(dim=0))
        self._commanded_peak = torch.maximum(self._commanded_peak, commanded.abs().amax(dim=0))

    def summary(self, names: list[str], limits: dict[str, Any]) -> list[dict[str, Any]]:
        """One row per joint: ``name``, ``limit_nm``, ``limit_source``, ``peak_nm``, ``rms_nm``,
        ``peak_ratio`` and ``rms_ratio`` (to the limit) and ``commanded_peak_nm``."""
        rms = (self._sum_sq / max(self.samples, 1)).sqrt()
        rows = []
        for k, name in enumerate(names):
            limit = limits[name].effort_nm
            finite = math.isfinite(limit) and limit > 0
            rows.append(
                {
                    "name": name,
                    "limit_nm": limit if math.isfinite(limit) else None,
                    "limit_source": limits[name].source,
                    "peak_nm": float(self._peak[k]),
                    "rms_nm": float(rms[k]),
                    "peak_ratio": float(self._peak[k]) / limit if finite else None,
                    "rms_ratio": float(rms[k]) / limit if finite else None,
                    "commanded_peak_nm": float(self._commanded_peak[k]),
                }
            )
        return rows


#: A joint is on a stop within this distance of an end of its range (rad): there the joint limit, not the
#: motor, carries the load (a standing pose exactly at the end sits 0.0006 rad inside the limit's constraint).
JOINT_STOP_MARGIN_RAD = 0.005
#: A joint on a stop for more than this share of the time is flagged: the policy uses the stop as an actuator.
JOINT_STOP_FLAG_SHARE = 0.05


class JointStopStats:
    """Per joint, the share of samples (one env at one control step) it spends on a stop of its range.

    Args:
        lower_rad: Lower ends of the ranges, ``(num_joints,)`` or ``(num_envs, num_joints)``.
        upper_rad: Upper ends, the same shape.
        margin_rad: How near an end counts as on the stop.
    """

    def __init__(self, lower_rad: torch.Tensor, upper_rad: torch.Tensor, margin_rad: float = JOINT_STOP_MARGIN_RAD):
        self.lower = lower_rad.detach().to("cpu", torch.float64)
        self.upper = upper_rad.detach().to("cpu", torch.float64)
        self.margin = float(margin_rad)
        self.samples = 0
        self._on_stop = torch.zeros(self.lower.shape[-1], dtype=torch.float64)

    def add(self, joint_pos_rad: torch.Tensor, valid: torch.Tensor | None = None) -> None:
        """Add one control step's joint positions ``(num_envs, num_joints)``; ``valid`` masks envs (a reset)."""
        q = joint_pos_rad.detach().to("cpu", torch.float64)
        on_stop = (q >= self.upper - self.margin) | (q <= self.lower + self.margin)
        if valid is not None:
            keep = valid.detach().to("cpu", torch.bool)
            on_stop = on_stop[keep]
        self.samples += on_stop.shape[0]
        self._on_stop += on_stop.sum(dim=0, dtype=torch.float64)

    def summary(self, names: list[str]) -> dict[str, Any]:
        """``margin_rad``, ``flag_share``, ``samples``, one row per joint (``name``, ``share_on_stop``,
        ``flagged``) and the ``flagged`` names."""
        shares = (self._on_stop / max(self.samples, 1)).tolist()
        rows = [
            {"name": name, "share_on_stop": share, "flagged": share > JOINT_STOP_FLAG_SHARE}
            for name, share in zip(names, shares, strict=True)
        ]
        return {
            "margin_rad": self.margin,
            "flag_share": JOINT_STOP_FLAG_SHARE,
            "samples": self.samples,
            "joints": rows,
            "flagged": [row["name"] for row in rows if row["flagged"]],
        }


def joint_stop_line(stops: dict[str, Any] | None) -> str | None:
    """The console line of a :meth:`JointStopStats.summary` naming its flagged joints; ``None`` when none is."""
    if not stops or not stops["flagged"]:
        return None
    shares = {row["name"]: row["share_on_stop"] for row in stops["joints"]}
    return f"  on a joint stop more than {stops['flag_share']:.0%} of the time: " + ", ".join(
        f"{name} {shares[name]:.0%}" for name in stops["flagged"]
    )


class FootContactStats:
    """Footfall statistics from per-control-step foot contact: how the robot steps.

    Touchdowns and their order are :class:`~linkage_lab.gait.footfalls.TouchdownSequence`'s: a foot in
    contact after at least ``min_air_steps`` steps out of contact (shorter lifts, 60 ms at the default 3
    steps of 20 ms, are contact chatter of a landing foot, not steps); successive touchdowns are
    *alternating* (the other foot, each alone on its step), *repeated* (the same foot twice in a row: a
    shuffle or a limp) or *simultaneous* (two or more feet at one step: a hop, or a trot's diagonal
    pair). For a biped, ``alternation`` near 1 is walking.
    """

    def __init__(self, foot_names: Sequence[str], num_envs: int, control_period_s: float, min_air_steps: int = 3):
        self.foot_names = list(foot_names)
        self.control_period_s = control_period_s
        self.min_air_steps = min_air_steps
        n_feet = len(self.foot_names)
        self.samples = 0
        self._touchdowns = torch.zeros(n_feet, dtype=torch.long)
        self._contact_steps = torch.zeros(n_feet, dtype=torch.long)
        self._feet_down_hist = torch.zeros(n_feet + 1, dtype=torch.long)
        self._alternating = 0
        self._repeated = 0
        self._simultaneous = 0
        self._sequence = TouchdownSequence(num_envs, n_feet, min_air_steps)

    def add(self, in_contact: torch.Tensor, mask: torch.Tensor) -> None:
        """Add one control step.

        Args:
            in_contact: ``(num_envs, n_feet)`` bool, each foot in contact with the ground.
            mask: ``(num_envs,)`` bool, the envs whose episode goes on (others restart their history).
        """
        in_contact = in_contact.detach().to("cpu", torch.bool)
        mask = mask.detach().to("cpu", torch.bool)
        step = self._sequence.step(in_contact, mask)
        self.samples += int(mask.sum())
        self._touchdowns += step.touchdown.sum(0)
        self._contact_steps += (in_contact & mask[:, None]).sum(0)
        self._feet_down_hist += torch.bincount(in_contact[mask].sum(-1), minlength=len(self.foot_names) + 1)
        self._alternating += int(step.alternating.sum())
        self._repeated += int(step.repeated.sum())
        self._simultaneous += int(step.simultaneous.sum())

    def summary(self) -> dict[str, Any]:
        """Per foot touchdowns per second and duty factor; shares of steps by feet down; alternation."""
        n = self.samples
        seconds = n * self.control_period_s
        events = self._alternating + self._repeated + self._simultaneous
        hist = self._feet_down_hist.tolist()
        return {
            "samples": n,
            "feet": [
                {
                    "body": name,
                    "touchdowns_per_s": float(self._touchdowns[i]) / seconds if seconds else None,
                    "duty_factor": float(self._contact_steps[i]) / n if n else None,
                }
                for i, name in enumerate(self.foot_names)
            ],
            "share_of_steps_by_feet_down": [h / n if n else None for h in hist],
            "flight_share": hist[0] / n if n else None,
            "touchdown_pairs": {
                "alternating": self._alternating,
                "repeated": self._repeated,
                "simultaneous": self._simultaneous,
            },
            "alternation": self._alternating / events if events else None,
        }
