"""The ankle-torque replay (docs/design/ankle_linkage.md §9): commanded joint torques through the real ``J(q)``.

Each sample is one physics substep of one ankle of one env: the commanded joint torque
``τ_j = (τ_pitch, τ_roll)`` (N·m, before any motor limit) and the pose ``q = (pitch, roll)`` (rad)
it was commanded at. Every substep counts: with a PD on a new target the largest torque comes in
the first substep after the target changes, not in the last one a control step ends on. The
motors would have to produce ``τ_m = J(q)⁻ᵀ τ_j``; the sample is outside the real feasible set when
any ``|τ_m,i| > T_peak``. In normalised motor coordinates ``τ_m / T_peak`` that set is the same unit
square at every pose, which is what :mod:`linkage_lab.evaluation.plots` draws.

Pure torch: the accumulator talks to the :class:`~linkage_lab.kinematics.transmission.Transmission`
interface only, so evaluation, the sprint and the scripted gait share it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from linkage_lab.kinematics.transmission import Transmission
from linkage_lab.robots.ankles import ankle_robot, default_preset, rsu_ankle_transmission
from linkage_lab.robots.registry import get_robot

#: Samples kept per ankle for the scatter plots (the statistics use every sample).
DEFAULT_MAX_KEPT_SAMPLES = 200_000


@dataclass
class _AnkleStats:
    """Running statistics of one ankle (float64 sums, counts as ints)."""

    samples: int = 0
    invalid: int = 0
    outside: int = 0
    above_rated: int = 0
    sum_sq_nm2: torch.Tensor = field(default_factory=lambda: torch.zeros(2, dtype=torch.float64))
    peak_abs_nm: torch.Tensor = field(default_factory=lambda: torch.zeros(2, dtype=torch.float64))
    worst: dict[str, Any] | None = None
    # Candidate outside samples: rows (ratio, pitch, roll, step, substep, env, τ_a, τ_b), pruned to worst N.
    candidates: torch.Tensor = field(default_factory=lambda: torch.zeros(0, 8, dtype=torch.float64))
    kept_motor: list[torch.Tensor] = field(default_factory=list)
    kept_pose: list[torch.Tensor] = field(default_factory=list)
    kept_count: int = 0


class AnkleReplay:
    """Accumulates commanded ankle torques step by step and summarises them against the motors.

    Args:
        transmissions: One transmission per ankle, ``{name: transmission}`` (e.g. ``{"left": …,
            "right": …}``) or a sequence (named ``"0"``, ``"1"``, …). Each maps (pitch, roll) to its
            two motors.
        peak_nm: Motor peak torque ``T_peak`` (N·m): the feasible set is ``|τ_m,i| ≤ T_peak``.
        rated_nm: Motor rated (continuous) torque ``T_rated`` (N·m), the heating reference.
        worst_count: How many of the worst outside samples each ankle lists (by excess ratio).
        max_kept_samples: Samples kept per ankle for plotting (the first ones); statistics use all.
        motor_names: Names of the two motors in the transmission's row order.
    """

    def __init__(
        self,
        transmissions: Mapping[str, Transmission] | Sequence[Transmission],
        peak_nm: float,
        rated_nm: float,
        worst_count: int = 10,
        max_kept_samples: int = DEFAULT_MAX_KEPT_SAMPLES,
        motor_names: Sequence[str] = ("a", "b"),
    ):
        if not isinstance(transmissions, Mapping):
            transmissions = {str(i): t for i, t in enumerate(transmissions)}
        if not transmissions:
            raise ValueError("AnkleReplay needs at least one ankle transmission")
        if not (peak_nm > 0 and rated_nm > 0):
            raise ValueError(f"motor torques must be positive, got peak {peak_nm}, rated {rated_nm}")
        self.transmissions = dict(transmissions)
        self.names = list(self.transmissions)
        self.peak_nm = float(peak_nm)
        self.rated_nm = float(rated_nm)
        self.worst_count = int(worst_count)
        self.max_kept_samples = int(max_kept_samples)
        self.motor_names = tuple(motor_names)
        self._stats = {name: _AnkleStats() for name in self.names}
        self._steps = 0
        self._physics_steps = 0
        # Joint samples (all ankles of one env at one substep) that had any ankle outside / above rated.
        self._joint_samples = 0
        self._joint_outside = 0
        self._joint_above_rated = 0

    @property
    def steps(self) -> int:
        """Number of :meth:`add` calls so far (control steps)."""
        return self._steps

    @property
    def physics_steps(self) -> int:
        """Number of physics substeps added so far (each holds one sample per env and ankle)."""
        return self._physics_steps

    def add(self, step_torque: torch.Tensor, step_pose: torch.Tensor, step: int | None = None) -> None:
        """Add one control step: one physics substep, or all of them.

        Args:
            step_torque: Commanded joint torque (N·m), ``(n_ankles, 2)``, ``(num_envs, n_ankles, 2)``
                or ``(substeps, num_envs, n_ankles, 2)`` (every physics substep of the control step,
                in order); the last axis is (pitch, roll), the ankle axis follows :attr:`names`.
            step_pose: Pose (rad) each torque was commanded at, same shape.
            step: Step index reported for the worst samples; ``None`` counts :meth:`add` calls.
        """
        torque = torch.as_tensor(step_torque).detach().to("cpu", torch.float64)
        pose = torch.as_tensor(step_pose).detach().to("cpu", torch.float64)
        while torque.ndim < 4:
            torque, pose = torque.unsqueeze(0), pose.unsqueeze(0)
        expected = (len(self.names), 2)
        if torque.shape != pose.shape or torque.ndim != 4 or tuple(torque.shape[2:]) != expected:
            raise ValueError(
                f"AnkleReplay.add expects torque and pose of shape ([substeps,] num_envs, {expected[0]}, 2), "
                f"got {tuple(torque.shape)} and {tuple(pose.shape)}"
            )
        substeps, num_envs = torque.shape[:2]
        step_index = self._steps if step is None else int(step)
        # All substeps of the step as one batch of rows, substep-major (row = substep · num_envs + env).
        where = {
            "step": torch.full((substeps * num_envs,), float(step_index), dtype=torch.float64),
            "substep": torch.arange(substeps, dtype=torch.float64).repeat_interleave(num_envs),
            "env": torch.arange(num_envs, dtype=torch.float64).repeat(substeps),
        }
        torque, pose = torque.reshape(-1, *expected), pose.reshape(-1, *expected)
        any_outside = torch.zeros(torque.shape[0], dtype=torch.bool)
        any_rated = torch.zeros(torque.shape[0], dtype=torch.bool)
        all_valid = torch.ones(torque.shape[0], dtype=torch.bool)
        for k, name in enumerate(self.names):
            outside, rated, valid = self._add_ankle(name, torque[:, k], pose[:, k], where)
            any_outside |= outside
            any_rated |= rated
            all_valid &= valid
        self._joint_samples += int(all_valid.sum())
        self._joint_outside += int((any_outside & all_valid).sum())
        self._joint_above_rated += int((any_rated & all_valid).sum())
        self._physics_steps += substeps
        self._steps += 1

    def _add_ankle(
        self, name: str, joint_torque: torch.Tensor, pose: torch.Tensor, where: dict[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One ankle's rows (``(N, 2)`` torque and pose); ``where`` holds each row's step, substep and env."""
        stats = self._stats[name]
        motor = _motor_torque(self.transmissions[name], joint_torque, pose)  # (N, 2), τ_m = J⁻ᵀ τ_j
        valid = torch.isfinite(motor).all(dim=-1) & torch.isfinite(pose).all(dim=-1)
        stats.invalid += int((~valid).sum())
        motor = torch.where(valid.unsqueeze(-1), motor, torch.zeros_like(motor))
        abs_motor = motor.abs()
        ratio = abs_motor.amax(dim=-1) / self.peak_nm
        outside = valid & (abs_motor > self.peak_nm).any(dim=-1)
        rated = valid & (abs_motor > self.rated_nm).any(dim=-1)
        stats.samples += int(valid.sum())
        stats.outside += int(outside.sum())
        stats.above_rated += int(rated.sum())
        stats.sum_sq_nm2 += (motor**2).sum(dim=0)
        stats.peak_abs_nm = torch.maximum(stats.peak_abs_nm, abs_motor.amax(dim=0))
        location = torch.stack([where["step"], where["substep"], where["env"]], dim=-1)
        if valid.any():
            masked_ratio = torch.where(valid, ratio, torch.full_like(ratio, -1.0))
            best = int(masked_ratio.argmax())  # the first of equal ratios: the earliest substep
            if stats.worst is None or float(ratio[best]) > stats.worst["ratio"]:
                step, substep, env = (int(v) for v in location[best])
                stats.worst = _sample_record(float(ratio[best]), pose[best], step, substep, env, motor[best])
        if outside.any():
            rows = torch.cat([ratio[outside, None], pose[outside], location[outside], motor[outside]], dim=-1)
            stats.candidates = torch.cat([stats.candidates, rows])
            if stats.candidates.shape[0] > 4 * max(self.worst_count, 1):
                stats.candidates = _top_rows(stats.candidates, self.worst_count)
        room = self.max_kept_samples - stats.kept_count
        if room > 0 and valid.any():
            keep_motor, keep_pose = motor[valid][:room], pose[valid][:room]
            stats.kept_motor.append(keep_motor / self.peak_nm)
            stats.kept_pose.append(keep_pose)
            stats.kept_count += keep_motor.shape[0]
        return outside, rated, valid

    def samples(self) -> dict[str, dict[str, torch.Tensor]]:
        """Kept samples per ankle: ``normalised_motor_torque`` (τ_m / T_peak), ``pose_rad`` (rad), (N, 2)."""
        out = {}
        for name, stats in self._stats.items():
            empty = torch.zeros(0, 2, dtype=torch.float64)
            out[name] = {
                "normalised_motor_torque": torch.cat(stats.kept_motor) if stats.kept_motor else empty,
                "pose_rad": torch.cat(stats.kept_pose) if stats.kept_pose else empty,
            }
        return out

    def summary(self) -> dict[str, Any]:
        """The replay's numbers as a JSON-ready dict.

        Returns:
            ``motor`` (``peak_nm``, ``rated_nm``), ``steps`` (control steps), ``physics_steps``
            (physics substeps sampled; a sample is one ankle of one env at one of them), ``ankles``
            (per ankle: ``samples``,
            ``invalid_samples`` (non-finite torque or pose, excluded), ``outside_samples``,
            ``fraction_outside``, ``above_rated_samples``, ``fraction_above_rated``, ``worst_ratio``
            (``max |τ_m,i| / T_peak``) and ``worst`` (where: pose in degrees, step, substep, env,
            motor torques),
            ``peak_motor_nm``, ``rms_motor_nm`` and ``rms_ratio_to_rated`` per motor, and
            ``worst_outside``, the worst outside samples) and ``overall`` (a sample = all ankles of
            one env at one substep: outside when any ankle is; ``worst_ratio`` and ``worst`` over all
            ankles; ``max_rms_ratio_to_rated`` and the ``hottest_motor``). Ratios and fractions are
            ``None`` when there is no sample.
        """
        ankles = {name: self._ankle_summary(name) for name in self.names}
        worst_name = max(
            (n for n in self.names if ankles[n]["worst_ratio"] is not None),
            key=lambda n: ankles[n]["worst_ratio"],
            default=None,
        )
        hottest = max(
            ((n, m) for n in self.names for m in self.motor_names if ankles[n]["samples"]),
            key=lambda nm: ankles[nm[0]]["rms_ratio_to_rated"][nm[1]],
            default=None,
        )
        overall = {
            "samples": self._joint_samples,
            "outside_samples": self._joint_outside,
            "fraction_outside": _fraction(self._joint_outside, self._joint_samples),
            "above_rated_samples": self._joint_above_rated,
            "fraction_above_rated": _fraction(self._joint_above_rated, self._joint_samples),
            "worst_ratio": None if worst_name is None else ankles[worst_name]["worst_ratio"],
            "worst": None if worst_name is None else {"ankle": worst_name, **ankles[worst_name]["worst"]},
            "max_rms_ratio_to_rated": None if hottest is None else ankles[hottest[0]]["rms_ratio_to_rated"][hottest[1]],
            "hottest_motor": None if hottest is None else f"{hottest[0]}/{hottest[1]}",
        }
        return {
            "motor": {"peak_nm": self.peak_nm, "rated_nm": self.rated_nm},
            "steps": self._steps,
            "physics_steps": self._physics_steps,
            "overall": overall,
            "ankles": ankles,
        }

    def _ankle_summary(self, name: str) -> dict[str, Any]:
        stats = self._stats[name]
        n = stats.samples
        rms = (stats.sum_sq_nm2 / n).sqrt().tolist() if n else [None, None]
        worst_rows = _top_rows(stats.candidates, self.worst_count)
        return {
            "samples": n,
            "invalid_samples": stats.invalid,
            "outside_samples": stats.outside,
            "fraction_outside": _fraction(stats.outside, n),
            "above_rated_samples": stats.above_rated,
            "fraction_above_rated": _fraction(stats.above_rated, n),
            "worst_ratio": None if stats.worst is None else stats.worst["ratio"],
            "worst": None if stats.worst is None else {k: v for k, v in stats.worst.items() if k != "ratio"},
            "peak_motor_nm": dict(zip(self.motor_names, stats.peak_abs_nm.tolist(), strict=True)) if n else None,
            "rms_motor_nm": dict(zip(self.motor_names, rms, strict=True)),
            "rms_ratio_to_rated": {
                m: (None if r is None else r / self.rated_nm) for m, r in zip(self.motor_names, rms, strict=True)
            },
            "worst_outside": [
                _sample_record(float(r[0]), r[1:3], int(r[3]), int(r[4]), int(r[5]), r[6:8]) for r in worst_rows
            ],
        }


def _motor_torque(transmission: Transmission, joint_torque: torch.Tensor, pose: torch.Tensor) -> torch.Tensor:
    """``τ_m = J(q)⁻ᵀ τ_j`` per sample; NaN for a sample whose pose the linkage cannot reach."""
    try:
        return transmission.motor_torque(joint_torque, pose)
    except ValueError:
        # A transmission may reject a whole batch for one unreachable pose: redo it sample by sample.
        rows = []
        for tau, q in zip(joint_torque, pose, strict=True):
            try:
                rows.append(transmission.motor_torque(tau, q))
            except ValueError:
                rows.append(torch.full_like(tau, float("nan")))
        return torch.stack(rows) if rows else joint_torque.clone()


def _top_rows(rows: torch.Tensor, count: int) -> torch.Tensor:
    """The ``count`` rows with the largest first column, largest first."""
    if rows.shape[0] == 0 or count <= 0:
        return rows[:0]
    order = torch.argsort(rows[:, 0], descending=True, stable=True)
    return rows[order[:count]]


def _sample_record(
    ratio: float, pose_rad: torch.Tensor, step: int, substep: int, env: int, motor_nm: torch.Tensor
) -> dict[str, Any]:
    return {
        "ratio": ratio,
        "step": int(step),
        "substep": int(substep),
        "env": int(env),
        "pitch_deg": math.degrees(float(pose_rad[0])),
        "roll_deg": math.degrees(float(pose_rad[1])),
        "motor_torque_nm": [float(motor_nm[0]), float(motor_nm[1])],
    }


def _fraction(count: int, total: int) -> float | None:
    return count / total if total else None


def ankle_geometry_preset(transmissions: Iterable[str], robot: str | None = None) -> str:
    """The ankle geometry preset (docs/design/ankle_linkage.md §7) a set of actuator transmission names selects.

    ``<ankle transmission>:<preset>`` selects ``<preset>``, a bare ankle transmission the robot's own
    geometry. Without any ankle transmission (the ``box`` model drives the ankle joints through the
    identity, with limits from the robot's geometry) it is the robot's own too.

    Args:
        transmissions: Transmission names of the robot's linkage groups.
        robot: The robot (its ``RobotSpec.transmissions`` are its ankles); ``None``: the one
            registered robot with RSU ankles.

    Raises:
        ValueError: The two ankles use different presets (one bridge per robot cannot serve both).
    """

    robot = ankle_robot(robot)
    own = default_preset(robot)
    ankle_names = set(get_robot(robot).transmissions)
    presets = {name.partition(":")[2] or own for name in transmissions if name.partition(":")[0] in ankle_names}
    if len(presets) > 1:
        raise ValueError(f"the ankles use different geometry presets {sorted(presets)}; expected one")
    return presets.pop() if presets else own


def rsu_ankle_replay(preset: str | None = None, robot: str | None = None, **options: Any) -> AnkleReplay:
    """An :class:`AnkleReplay` of a robot's two RSU ankles (``left``, ``right``) with their motor's limits.

    Args:
        preset: Ankle geometry preset (docs/design/ankle_linkage.md §7); ``None``: the robot's own.
        robot: The robot; ``None``: the one registered robot with RSU ankles.
        **options: Passed to :class:`AnkleReplay` (``worst_count``, ``max_kept_samples``).
    """

    ankles = {side: rsu_ankle_transmission(side=side, preset=preset, robot=robot) for side in ("left", "right")}
    motor = ankles["left"].geometry.motor
    return AnkleReplay(ankles, peak_nm=motor.peak_nm, rated_nm=motor.rated_nm, **options)
