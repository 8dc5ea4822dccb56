"""The S3N fidelity benchmark: serial Kin-Only / S3N-Act / S3N-Full against the closed-chain oracle.

Protocol (the paper's, docs/design/s3n.md §4, on a robot's leg): both serial joints follow a position chirp of
0.2 rad over 0.1–25 Hz about the standing pose, zero velocity targets, motor-space PD with
``K_p = 50 N·m/rad``, ``K_d = 1.5 N·m·s/rad`` per motor, each motor clipped at its limit, a PD update
every 1 ms physics step and no command delay. The oracle gets the same controller on its motor
joints (targets ``θ* = J q*``). S3N-Full's ``M_p`` is identified from a separate multisine run of
the oracle (:mod:`linkage_lab_experiments.analysis.identify`), never read off the oracle's parameters.

The robot's leg comes from the registry (:meth:`FidelityCfg.for_robot`): its leg body (the one the
task simulates), its S3N motor parameters and its drive's torque limits and standing pose. Every
model runs through the shared :func:`~linkage_lab_experiments.analysis.leg_run.drive_loop`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import S3N_MODELS, S3NCfg, S3NModel, integrated_inertia
from linkage_lab.io import save_figure_atomic
from linkage_lab.robots.registry import get_robot
from linkage_lab_experiments.analysis import pick_robot
from linkage_lab_experiments.analysis.identify import MpIdentification, forward_difference_acceleration, identify_mp
from linkage_lab_experiments.analysis.leg_run import (
    PARALLELOGRAM_J,
    LegRun,
    run_oracle_leg,
    run_serial_leg,
)
from linkage_lab_experiments.analysis.leg_run import oracle_at_step as _oracle_at_step
from linkage_lab_experiments.analysis.oracle import OracleCfg, ParallelogramOracle

#: Serial → motor coordinates of the parallelogram leg, ``θ = J q``.
_J = PARALLELOGRAM_J


@dataclass(frozen=True)
class FidelityCfg:
    """Settings of the benchmark."""

    duration_s: float = 10.0
    """Length of the linear chirp (s). A linear chirp spends equal time at every frequency, so once
    the sweep is slow against the leg's dynamics the RMSEs hardly depend on it (10 s and 20 s agree
    to 3 digits)."""
    timestep_s: float = 1e-3
    """Physics and PD step of every model, the oracle included (s)."""
    chirp_amplitude_rad: float = 0.2
    """Chirp amplitude on each serial joint (rad)."""
    chirp_band_hz: tuple[float, float] = (0.1, 25.0)
    """Start and end frequency of the chirp (Hz)."""
    operating_pose_rad: tuple[float, float] = (0.6, -1.2)
    """Serial ``(hip, knee)`` pose the chirp is centred on (the Limit's standing pose), rad."""
    motor_kp: float = 50.0
    """Per-motor PD stiffness (N·m/rad), the paper's."""
    motor_kd: float = 1.5
    """Per-motor PD damping gain (N·m·s/rad), the paper's."""
    motor_peak_torque_nm: tuple[float, float] | None = None
    """Per-motor torque limit (N·m): the robot's hip/knee effort limits (:meth:`for_robot`)."""
    identification_duration_s: float = 6.0
    """Length of the multisine run the oracle's ``M_p`` is identified from (s)."""
    identification_amplitude_rad: tuple[float, float] = (0.3, 0.6)
    """Peak excursion of that run on ``(hip, knee)`` (rad): the knee's spans α over ±0.6 rad."""
    acceleration_estimate: str = "previous"
    """The serial S3N models' ``LinkageDriveCfg.acceleration_estimate`` (``previous``: the paper's)."""
    oracle: OracleCfg | None = None
    """The closed-chain leg (the robot's leg body, its motor parameters, crank and rod); its step
    is replaced by ``timestep_s`` and its loop-closure time constant kept at ``≥ 2 timestep_s``.
    ``None`` (only the targets are needed): set by :meth:`for_robot`."""

    @classmethod
    def for_robot(cls, robot: str | None = None, **overrides: Any) -> FidelityCfg:
        """The benchmark on ``robot``'s leg, from its registry extras.

        ``leg_body``: the serial leg body (the one the task simulates); ``s3n_cfg``: its motor
        inertia and damping; ``leg_drive_cfg``: its per-motor torque limits and standing pose.

        Args:
            robot: A registered robot with those extras; ``None``: the only one that has them.
            overrides: Replace any field.
        """

        spec = get_robot(pick_robot("leg_body", robot))
        s3n = spec.extra("s3n_cfg")("s3n_act")
        drive = spec.extra("leg_drive_cfg")("s3n_act")
        oracle = OracleCfg(
            body=spec.extra("leg_body")(),
            reflected_inertia_kgm2=tuple(s3n.reflected_inertia_kgm2),
            motor_damping_nms_per_rad=tuple(s3n.motor_damping_nms_per_rad),
        )
        defaults: dict[str, Any] = {"oracle": oracle, "motor_peak_torque_nm": tuple(drive.motor_peak_torque_nm)}
        if drive.reference_joint_pos_rad is not None:
            defaults["operating_pose_rad"] = tuple(drive.reference_joint_pos_rad)
        return cls(**{**defaults, **overrides})

    def require_oracle(self) -> OracleCfg:
        """:attr:`oracle`, which a simulation needs; raises ``ValueError`` when unset."""
        if self.oracle is None or self.motor_peak_torque_nm is None:
            raise ValueError("FidelityCfg needs oracle and motor_peak_torque_nm: use FidelityCfg.for_robot()")
        return self.oracle

    def oracle_at_step(self) -> OracleCfg:
        """:attr:`oracle` with this benchmark's physics step."""
        return _oracle_at_step(self.require_oracle(), self.timestep_s)


@dataclass
class Trace:
    """One simulated run, sampled at every physics step before it is taken."""

    time_s: np.ndarray
    joint_pos: np.ndarray
    """Serial ``(hip, knee)`` positions (rad), ``(T, 2)``."""
    joint_torque: np.ndarray
    """Motor torque in joint coordinates ``Jᵀ τ_m`` (N·m), ``(T, 2)``."""
    motor_pos: np.ndarray
    motor_vel: np.ndarray
    motor_torque: np.ndarray
    """Applied motor torques (N·m), ``(T, 2)``."""
    saturated_fraction: float
    """Fraction of steps in which some motor torque was limited."""


@dataclass
class FidelityResult:
    """Everything :func:`run_fidelity` measured."""

    metrics: dict
    """``{"models": {model: {"pos_rmse": [h, k], "tau_rmse": [h, k]}}, "reduction_pct": {...}}``."""
    traces: dict[str, Trace]
    """``"oracle"`` and one per model."""
    identification: MpIdentification
    true_mp_kgm2: tuple[float, float, float]
    """The oracle's ``(M₁₁, M₁₂, M₂₂)`` from its mass matrix, for comparison only."""
    max_constraint_violation_m: float


def chirp_targets(cfg: FidelityCfg) -> tuple[np.ndarray, np.ndarray]:
    """Time (s) and serial targets ``q*(t) = q₀ + A sin(2π(f₀t + (f₁ − f₀)t²/2T))`` (rad), ``(T, 2)``."""
    time = np.arange(int(round(cfg.duration_s / cfg.timestep_s))) * cfg.timestep_s
    f0, f1 = cfg.chirp_band_hz
    phase = 2.0 * np.pi * (f0 * time + (f1 - f0) * time**2 / (2.0 * cfg.duration_s))
    wave = cfg.chirp_amplitude_rad * np.sin(phase)
    return time, np.asarray(cfg.operating_pose_rad) + wave[:, None]


def multisine_targets(cfg: FidelityCfg) -> tuple[np.ndarray, np.ndarray]:
    """Time (s) and serial targets for identification: Schroeder-phased multisines, 0.5–12 Hz."""
    time = np.arange(int(round(cfg.identification_duration_s / cfg.timestep_s))) * cfg.timestep_s
    columns = []
    for freqs, peak in zip(
        ([0.5, 1.3, 2.9, 4.7, 7.1, 10.3], [0.7, 1.9, 3.7, 5.9, 8.3, 11.9]),
        cfg.identification_amplitude_rad,
        strict=True,
    ):
        k = np.arange(len(freqs))
        signal = np.sin(2.0 * np.pi * np.outer(time, freqs) + np.pi * k * (k + 1) / len(freqs)).sum(axis=1)
        # Fade in over 0.5 s so that every run starts at rest on its target.
        ramp = np.clip(time / 0.5, 0.0, 1.0)
        columns.append(peak * ramp * signal / np.abs(signal).max())
    return time, np.asarray(cfg.operating_pose_rad) + np.stack(columns, axis=1)


def _drive_cfg(cfg: FidelityCfg, s3n: S3NCfg) -> LinkageDriveCfg:
    return LinkageDriveCfg(
        s3n=s3n,
        control_space="motor",
        motor_kp=(cfg.motor_kp, cfg.motor_kp),
        motor_kd=(cfg.motor_kd, cfg.motor_kd),
        motor_peak_torque_nm=tuple(cfg.motor_peak_torque_nm),
        reference_joint_pos_rad=tuple(cfg.operating_pose_rad),
        acceleration_estimate=cfg.acceleration_estimate if s3n.model != "kin_only" else "previous",
    )


def _trace(time: np.ndarray, run: LegRun) -> Trace:
    """The benchmark's view of a run: motor coordinates ``θ = J q`` and the applied motor torque."""
    motor_torque = np.asarray(run.motor_torque)
    saturated = np.any(np.abs(np.asarray(run.motor_torque_desired) - motor_torque) > 1e-9, axis=1)
    return Trace(
        time,
        run.joint_pos,
        motor_torque @ _J,
        run.joint_pos @ _J.T,
        run.joint_vel @ _J.T,
        motor_torque,
        float(saturated.mean()),
    )


def run_oracle(cfg: FidelityCfg, time: np.ndarray, joint_targets: np.ndarray) -> tuple[Trace, float]:
    """Drive the closed-chain oracle with motor-space PD on ``θ* = J q*``.

    Returns:
        The trace and the largest loop-closure violation seen (m).
    """
    zero_motor = S3NCfg(model="kin_only", reflected_inertia_kgm2=(0.0, 0.0), motor_damping_nms_per_rad=(0.0, 0.0))
    run = run_oracle_leg(cfg.require_oracle(), _drive_cfg(cfg, zero_motor), joint_targets, cfg.timestep_s)
    return _trace(time, run), run.info["max_loop_violation_m"]


def run_serial(cfg: FidelityCfg, model: S3NModel, time: np.ndarray, joint_targets: np.ndarray, mp_kgm2=None) -> Trace:
    """Drive the serial MuJoCo leg through :class:`LinkageDrive` under ``model``."""
    oracle = cfg.require_oracle()
    s3n = S3NCfg(
        model=model,
        reflected_inertia_kgm2=tuple(oracle.reflected_inertia_kgm2),
        motor_damping_nms_per_rad=tuple(oracle.motor_damping_nms_per_rad),
        mp_kgm2=mp_kgm2 if model == "s3n_full" else None,
        serial_link_kgm2=oracle.body.serial_link_kgm2(),
    )
    run = run_serial_leg(_drive_cfg(cfg, s3n), oracle.body, joint_targets, cfg.timestep_s)
    return _trace(time, run)


def identify_oracle(cfg: FidelityCfg) -> MpIdentification:
    """Excite the oracle with :func:`multisine_targets` and fit ``M_p`` (damping and gravity too)."""
    time, targets = multisine_targets(cfg)
    trace, _ = run_oracle(cfg, time, targets)
    acc = forward_difference_acceleration(trace.motor_vel, cfg.timestep_s)
    return identify_mp(trace.motor_pos[:-1], trace.motor_vel[:-1], acc, trace.motor_torque[:-1])


def rmse_metrics(traces: dict[str, Trace]) -> dict:
    """Per-joint RMSE of each model against ``traces["oracle"]`` and reductions vs Kin-Only (%)."""
    oracle = traces["oracle"]
    models = {}
    for model in S3N_MODELS:
        trace = traces[model]
        models[model] = {
            "pos_rmse": np.sqrt(np.mean((trace.joint_pos - oracle.joint_pos) ** 2, axis=0)).tolist(),
            "tau_rmse": np.sqrt(np.mean((trace.joint_torque - oracle.joint_torque) ** 2, axis=0)).tolist(),
        }
    base = models["kin_only"]
    reduction = {}
    for model in S3N_MODELS[1:]:
        reduction[model] = {
            key: float(
                np.mean(100.0 * (1.0 - np.asarray(models[model][f"{key}_rmse"]) / np.asarray(base[f"{key}_rmse"])))
            )
            for key in ("pos", "tau")
        }
    return {"models": models, "reduction_pct": reduction}


def run_fidelity(cfg: FidelityCfg | None = None, progress: Callable[[str], None] | None = None) -> FidelityResult:
    """Identify the oracle's ``M_p``, run the chirp on the oracle and the three serial models.

    Args:
        cfg: Benchmark settings; ``None``: :meth:`FidelityCfg.for_robot` of the only robot with a leg body.
        progress: Called with a label after each of the 5 simulation runs (e.g. a progress bar).
    """
    cfg = cfg or FidelityCfg.for_robot()
    report = progress or (lambda label: None)
    identification = identify_oracle(cfg)
    report("identification")
    time, targets = chirp_targets(cfg)
    traces = {}
    traces["oracle"], violation = run_oracle(cfg, time, targets)
    report("oracle")
    for model in S3N_MODELS:
        traces[model] = run_serial(cfg, model, time, targets, identification.mp_kgm2)
        report(model)
    # The oracle's true M_p, for the report only: its mass matrix on the loop's 2 DOF at α = 0.
    true = ParallelogramOracle(cfg.require_oracle()).motor_space_inertia([0.0], cfg.operating_pose_rad[0])[0]
    true_mp = (float(true[0, 0]), float(true[0, 1]), float(true[1, 1]))
    return FidelityResult(rmse_metrics(traces), traces, identification, true_mp, violation)


def motor_space_view(s3n: S3NCfg, alpha: np.ndarray) -> np.ndarray:
    """``J⁻ᵀ M J⁻¹``: the motor-space inertia a serial model integrates (kg·m²), ``(len(α), 2, 2)``."""
    alpha_t = torch.as_tensor(alpha, dtype=torch.float64)
    jac = torch.as_tensor(_J)
    inertia = integrated_inertia(s3n, alpha_t, jac)
    jac_inv = torch.linalg.inv(jac)
    return (jac_inv.T @ inertia @ jac_inv).numpy()


def plot_fidelity(result: FidelityResult, cfg: FidelityCfg, out_dir: str | Path) -> list[Path]:
    """Write ``s3n_errors.png`` (error time series) and ``s3n_inertia.png`` (M_p over α)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    oracle = result.traces["oracle"]
    colors = {"kin_only": "tab:red", "s3n_act": "tab:blue", "s3n_full": "tab:green"}
    fig, axes = plt.subplots(2, 2, figsize=(13, 7), sharex=True)
    for col, joint in enumerate(("hip", "knee")):
        for model in S3N_MODELS:
            trace = result.traces[model]
            axes[0, col].plot(
                trace.time_s,
                trace.joint_pos[:, col] - oracle.joint_pos[:, col],
                lw=0.6,
                color=colors[model],
                label=model,
            )
            axes[1, col].plot(
                trace.time_s,
                trace.joint_torque[:, col] - oracle.joint_torque[:, col],
                lw=0.6,
                color=colors[model],
                label=model,
            )
        axes[0, col].set_title(f"{joint}: position error vs oracle (rad)")
        axes[1, col].set_title(f"{joint}: torque error vs oracle (N·m)")
        axes[1, col].set_xlabel(f"time (s); chirp {cfg.chirp_band_hz[0]}–{cfg.chirp_band_hz[1]} Hz, linear")
    f0, f1 = cfg.chirp_band_hz
    for ax in axes.flat:
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    for ax in axes[0]:
        top = ax.secondary_xaxis(
            "top",
            functions=(
                lambda t: f0 + (f1 - f0) * t / cfg.duration_s,
                lambda f: (f - f0) * cfg.duration_s / (f1 - f0),
            ),
        )
        top.set_xlabel("chirp frequency (Hz)")
    fig.tight_layout()
    paths = [save_figure_atomic(fig, out_dir / "s3n_errors.png")]
    plt.close(fig)

    alpha = np.linspace(-2.4, -0.3, 43)
    true = ParallelogramOracle(cfg.require_oracle()).motor_space_inertia(alpha, cfg.operating_pose_rad[0])
    identified = S3NCfg(
        model="s3n_full",
        reflected_inertia_kgm2=tuple(cfg.oracle.reflected_inertia_kgm2),
        motor_damping_nms_per_rad=tuple(cfg.oracle.motor_damping_nms_per_rad),
        mp_kgm2=result.identification.mp_kgm2,
        serial_link_kgm2=cfg.oracle.body.serial_link_kgm2(),
    )
    curves = {model: motor_space_view(replace(identified, model=model), alpha) for model in S3N_MODELS}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    styles = {"kin_only": (":", 3.0), "s3n_act": ("-.", 1.5), "s3n_full": ("--", 1.5)}
    validation = cfg.operating_pose_rad[1] + np.array([-1.0, 1.0]) * cfg.chirp_amplitude_rad
    labels = {"kin_only": "Kin-Only", "s3n_act": "S3N-Act", "s3n_full": "S3N-Full (identified)"}
    for ax, (name, i, j) in zip(axes, (("M₁₁", 0, 0), ("M₁₂ cos α", 0, 1), ("M₂₂", 1, 1)), strict=True):
        ax.plot(alpha, true[:, i, j], "k-", lw=3.0, alpha=0.5, label="oracle (mass matrix)")
        for model in S3N_MODELS:
            style, width = styles[model]
            ax.plot(alpha, curves[model][:, i, j], style, lw=width, color=colors[model], label=labels[model])
        ax.axvspan(*validation, color="0.85", zorder=0, label="chirp range")
        ax.set_title(f"motor-space {name} (kg·m²)")
        ax.set_xlabel("α = knee angle (rad)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Motor-space inertia J⁻ᵀ M J⁻¹ each model integrates vs the oracle (Kin-Only = S3N-Act on M₂₂)")
    fig.tight_layout()
    paths.append(save_figure_atomic(fig, out_dir / "s3n_inertia.png"))
    plt.close(fig)
    return paths
