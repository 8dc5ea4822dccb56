"""Evaluation at fixed velocity commands: one bounded evaluation per command, one summary table.

A velocity policy is judged on commands it must hold for a whole episode (walk at 0.3 m/s, stand,
turn at 0.5 rad/s), not on the random commands it was trained with. Each case runs the normal
evaluation (:func:`~linkage_lab.evaluation.evaluate.evaluate`) with the task's command ranges pinned
to one value and no standing envs, so its ``eval.json`` is complete on its own; the sweep collects
the tracking figures and checks them against optional targets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Version of the ``sweep.json`` layout.
SWEEP_SCHEMA_VERSION = 1
SWEEP_FILE = "sweep.json"
#: The command named in an ``eval --sweep`` folder's manifest (:mod:`linkage_lab.outputs`).
SWEEP_COMMAND = "eval --sweep"


@dataclass(frozen=True)
class CommandCase:
    """One fixed velocity command.

    Attributes:
        lin_vel_x_mps: Forward speed command (m/s).
        ang_vel_z_radps: Yaw-rate command (rad/s).
    """

    lin_vel_x_mps: float
    ang_vel_z_radps: float = 0.0

    @property
    def name(self) -> str:
        """A folder-safe name such as ``vx+0.30_wz+0.00``."""
        return f"vx{self.lin_vel_x_mps:+.2f}_wz{self.ang_vel_z_radps:+.2f}"

    def overrides(self) -> list[str]:
        """Hydra overrides pinning the task's ``base_velocity`` command to this case."""
        prefix = "env.commands.base_velocity"
        vx, wz = self.lin_vel_x_mps, self.ang_vel_z_radps
        return [
            f"{prefix}.ranges.lin_vel_x=[{vx},{vx}]",
            f"{prefix}.ranges.lin_vel_y=[0.0,0.0]",
            f"{prefix}.ranges.ang_vel_z=[{wz},{wz}]",
            f"{prefix}.rel_standing_envs=0.0",
            f"{prefix}.heading_command=false",
        ]


#: The commands a velocity policy of this project is accepted on: forward −0.3, 0, 0.3, 0.5 m/s and
#: turning at ±0.5 rad/s on the spot.
DEFAULT_CASES: tuple[CommandCase, ...] = (
    CommandCase(-0.3),
    CommandCase(0.0),
    CommandCase(0.3),
    CommandCase(0.5),
    CommandCase(0.0, 0.5),
    CommandCase(0.0, -0.5),
)


@dataclass(frozen=True)
class TrackingTargets:
    """Pass marks of a sweep; ``None`` leaves a figure unchecked.

    Attributes:
        lin_vel_rms_mps: Largest RMS error of the planar velocity (m/s), checked on cases without a yaw command.
        yaw_rate_rms_radps: Largest RMS yaw-rate error (rad/s), checked on cases with a yaw command.
        max_falls: Most falls allowed per case.
        forward_speed_error_mps: Largest ``|mean forward speed - command|`` (m/s), on cases without a yaw command.
        min_alternation: Smallest footfall alternation (``eval.json`` ``footfalls``), on cases with a forward command.
        yaw_rate_error_radps: Largest ``|mean yaw rate - command|`` (rad/s), on cases with a yaw command: whether
            the robot turns at the rate asked, whatever its yaw swing within a stride.
        min_duty_factor: Smallest share of the time any one foot touches the ground (``footfalls``' duty factors),
            on every case: each foot carries the robot. A policy that holds a leg up walks on the others, overloads
            their motors and leaves the leg odometry of its base-velocity estimate a foot short.
    """

    lin_vel_rms_mps: float | None = 0.06
    yaw_rate_rms_radps: float | None = 0.12
    max_falls: int | None = 0
    forward_speed_error_mps: float | None = None
    min_alternation: float | None = None
    yaw_rate_error_radps: float | None = None
    min_duty_factor: float | None = None


#: The simulators a shipped policy's sweeps run on, by the file ``ship`` writes for each.
SWEEP_FILES = {"isaac_lab": "sweep.json", "closed_chain": "closed_chain_sweep.json"}


@dataclass(frozen=True)
class KnownMiss:
    """A check the shipped policy is known to miss, recorded once, beside the target it misses.

    Attributes:
        simulator: ``isaac_lab`` (``sweep.json``) or ``closed_chain`` (``closed_chain_sweep.json``).
        case: The case's name (:attr:`CommandCase.name`, e.g. ``vx+0.00_wz+0.50``).
        check: The missed check's key (``yaw_rate_rms_radps``, ``falls``, ...).
        reason: Why it is missed, with the measurement that says so.
    """

    simulator: str
    case: str
    check: str
    reason: str


@dataclass(frozen=True)
class Acceptance:
    """What a task's policies are accepted on: the fixed commands, the pass marks, and what the shipped
    policy is known to miss (each with its reason; a test holds the shipped sweeps to exactly these).

    A task declares its own in its registration (``acceptance_entry_point``); tasks without one are
    judged on :data:`DEFAULT_CASES` against the default :class:`TrackingTargets`.
    """

    cases: tuple[CommandCase, ...]
    targets: TrackingTargets
    known_misses: tuple[KnownMiss, ...] = ()
    #: The marks on the closed chain (sim2sim sweeps, the reality-gap sweep); ``None``: :attr:`targets`.
    closed_chain_targets: TrackingTargets | None = None

    def targets_for(self, simulator: str) -> TrackingTargets:
        """The pass marks on ``simulator`` (``isaac_lab`` or ``closed_chain``)."""
        if simulator == "closed_chain" and self.closed_chain_targets is not None:
            return self.closed_chain_targets
        return self.targets

    def known(self, simulator: str) -> set[tuple[str, str]]:
        """The ``(case, check)`` pairs known to be missed on ``simulator``."""
        return {(miss.case, miss.check) for miss in self.known_misses if miss.simulator == simulator}


def failed_checks(sweep: dict[str, Any]) -> set[tuple[str, str]]:
    """The ``(case, check)`` pairs of a ``sweep.json`` whose check failed."""
    return {(case_name(row), key) for row in sweep["cases"] for key, check in row["checks"].items() if not check["ok"]}


def task_acceptance(task: str) -> Acceptance:
    """The task's :class:`Acceptance` (its ``acceptance_entry_point``), or the project's default one."""
    import importlib

    import gymnasium as gym

    from linkage_lab.tasks.registry import require_task

    entry = gym.spec(require_task(task)).kwargs.get("acceptance_entry_point")
    if entry is None:
        return Acceptance(DEFAULT_CASES, TrackingTargets())
    module_name, _, attr = entry.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def parse_case(text: str) -> CommandCase:
    """``"vx,wz"`` or ``"vx"`` (m/s, rad/s) as a :class:`CommandCase`.

    Raises:
        ValueError: Not one or two finite numbers.
    """
    parts = [p.strip() for p in str(text).split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if not 1 <= len(values) <= 2 or not all(math.isfinite(v) for v in values):
        raise ValueError(f"command {text!r}: expected 'VX' or 'VX,WZ' in m/s and rad/s, e.g. 0.3 or 0.0,0.5")
    return CommandCase(*values)


def case_result(case: CommandCase, report: dict[str, Any], targets: TrackingTargets | None) -> dict[str, Any]:
    """The sweep row of one case from its ``eval.json`` content, with its checks against ``targets``."""
    tracking = report.get("tracking") or {}
    row: dict[str, Any] = {
        "command": {"lin_vel_x_mps": case.lin_vel_x_mps, "ang_vel_z_radps": case.ang_vel_z_radps},
        "episodes": report.get("episodes"),
        "falls": report.get("falls"),
        "lin_vel_xy_rms_mps": tracking.get("lin_vel_xy_rms_mps"),
        "yaw_rate_rms_radps": tracking.get("yaw_rate_rms_radps"),
        "mean_forward_speed_mps": tracking.get("mean_forward_speed_mps"),
        "mean_yaw_rate_radps": tracking.get("mean_yaw_rate_radps"),
        "alternation": (report.get("footfalls") or {}).get("alternation"),
        "min_duty_factor": min_duty_factor(report.get("footfalls")),
        "checks": {},
    }
    if targets is None:
        return row
    checks = row["checks"]
    if targets.max_falls is not None:
        checks["falls"] = _check(row["falls"], targets.max_falls)
    if case.ang_vel_z_radps == 0.0 and targets.lin_vel_rms_mps is not None:
        checks["lin_vel_xy_rms_mps"] = _check(row["lin_vel_xy_rms_mps"], targets.lin_vel_rms_mps)
    if case.ang_vel_z_radps != 0.0 and targets.yaw_rate_rms_radps is not None:
        checks["yaw_rate_rms_radps"] = _check(row["yaw_rate_rms_radps"], targets.yaw_rate_rms_radps)
    if case.ang_vel_z_radps == 0.0 and targets.forward_speed_error_mps is not None:
        speed = row["mean_forward_speed_mps"]
        error = None if speed is None else abs(speed - case.lin_vel_x_mps)
        row["forward_speed_error_mps"] = error
        checks["forward_speed_error_mps"] = _check(error, targets.forward_speed_error_mps)
    if case.ang_vel_z_radps != 0.0 and targets.yaw_rate_error_radps is not None:
        yaw_rate = row["mean_yaw_rate_radps"]
        error = None if yaw_rate is None else abs(yaw_rate - case.ang_vel_z_radps)
        row["yaw_rate_error_radps"] = error
        checks["yaw_rate_error_radps"] = _check(error, targets.yaw_rate_error_radps)
    if case.lin_vel_x_mps != 0.0 and targets.min_alternation is not None:
        checks["alternation"] = _at_least(row["alternation"], targets.min_alternation)
    if targets.min_duty_factor is not None:
        checks["min_duty_factor"] = _at_least(row["min_duty_factor"], targets.min_duty_factor)
    return row


def _at_least(value: float | None, limit: float) -> dict[str, Any]:
    return {"value": value, "limit": limit, "ok": value is not None and value >= limit, "kind": "at least"}


def min_duty_factor(footfalls: dict[str, Any] | None) -> float | None:
    """The smallest duty factor over the feet of a ``footfalls`` summary; ``None`` without one."""
    duties = [foot.get("duty_factor") for foot in (footfalls or {}).get("feet") or ()]
    duties = [d for d in duties if d is not None]
    return min(duties) if duties else None


def _check(value: float | None, limit: float) -> dict[str, Any]:
    return {"value": value, "limit": limit, "ok": value is not None and value <= limit}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Whether every check of every row passed, and the worst figures over the rows."""

    def worst(key: str) -> float | None:
        values = [r[key] for r in rows if r.get(key) is not None]
        return max(values) if values else None

    checks = [c for r in rows for c in r["checks"].values()]
    return {
        "passed": all(c["ok"] for c in checks) if checks else None,
        "failed_checks": [
            f"{case_name(r)}: {key} {_figure(c['value'])} {'<' if c.get('kind') == 'at least' else '>'} {c['limit']}"
            for r in rows
            for key, c in r["checks"].items()
            if not c["ok"]
        ],
        "total_falls": sum(r["falls"] or 0 for r in rows),
        "worst_lin_vel_xy_rms_mps": worst("lin_vel_xy_rms_mps"),
        "worst_yaw_rate_rms_radps": worst("yaw_rate_rms_radps"),
    }


def _figure(value: float | None) -> str:
    """A checked figure as people read it: three significant digits (``None`` as missing)."""
    return "missing" if value is None else f"{value:.3g}"


def case_name(row: dict[str, Any]) -> str:
    command = row["command"]
    return CommandCase(command["lin_vel_x_mps"], command["ang_vel_z_radps"]).name


def format_table(sweep: dict[str, Any]) -> str:
    """The sweep as a fixed-width table for the terminal."""

    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    lines = [
        f"{'vx (m/s)':>9} {'wz (rad/s)':>10} {'v fwd':>7} {'v RMS':>7} {'wz mean':>8} {'yaw RMS':>8} {'alt':>5} "
        f"{'duty':>5} {'falls':>5}  ok"
    ]
    for row in sweep["cases"]:
        command = row["command"]
        ok = all(c["ok"] for c in row["checks"].values()) if row["checks"] else None
        lines.append(
            f"{command['lin_vel_x_mps']:>9.2f} {command['ang_vel_z_radps']:>10.2f} "
            f"{num(row['mean_forward_speed_mps'], '.3f'):>7} {num(row['lin_vel_xy_rms_mps'], '.3f'):>7} "
            f"{num(row.get('mean_yaw_rate_radps'), '+.3f'):>8} {num(row['yaw_rate_rms_radps'], '.3f'):>8} "
            f"{num(row.get('alternation'), '.2f'):>5} "
            f"{num(row.get('min_duty_factor'), '.2f'):>5} "
            f"{num(row['falls'], 'd'):>5}  "
            f"{'-' if ok is None else 'yes' if ok else 'NO'}"
        )
    summary = sweep["summary"]
    if summary["passed"] is not None:
        lines.append("all targets met" if summary["passed"] else "missed: " + "; ".join(summary["failed_checks"]))
    return "\n".join(lines)


def sweep_document(
    task: str | None,
    rows: Sequence[dict[str, Any]],
    targets: TrackingTargets | None,
    overrides: Sequence[str] = (),
    episodes_per_case: int | None = None,
    num_envs: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``sweep.json`` content of ``rows`` (:func:`case_result`'s), with the targets and their summary."""
    return {
        "schema_version": SWEEP_SCHEMA_VERSION,
        "task": task,
        "overrides": list(overrides),
        "episodes_per_case": episodes_per_case,
        "num_envs": num_envs,
        **extra,
        "targets": None if targets is None else vars(targets).copy(),
        "cases": list(rows),
        "summary": summarize(rows),
    }
