"""Pictures of an ankle-torque replay (PNG, matplotlib): motor-torque scatter and visited poses."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from linkage_lab.evaluation.replay import AnkleReplay
from linkage_lab.io import save_figure_atomic
from linkage_lab.kinematics.ankle_report import survey

#: File names the evaluation writes.
MOTOR_TORQUE_PLOT = "ankle_motor_torque.png"
POSE_PLOT = "ankle_poses.png"

_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:purple")


def plot_normalised_motor_torque(replay: AnkleReplay, path: str | Path, title: str = "", dpi: int = 120) -> Path:
    """Every kept sample in normalised motor torques ``(τ_a / T_peak, τ_b / T_peak)``, one colour per ankle.

    The feasible set is the unit square at every pose (drawn solid); the rated torque is the inner
    dashed square ``T_rated / T_peak``.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 6.0))
    ax = fig.subplots()
    rated = replay.rated_nm / replay.peak_nm
    limit = 1.0
    for k, (name, data) in enumerate(replay.samples().items()):
        torque = data["normalised_motor_torque"].numpy()
        if torque.size:
            limit = max(limit, float(np.abs(torque).max()))
        outside = int((np.abs(torque) > 1.0).any(axis=-1).sum()) if torque.size else 0
        ax.scatter(
            torque[:, 0] if torque.size else [],
            torque[:, 1] if torque.size else [],
            s=4,
            alpha=0.35,
            color=_COLOURS[k % len(_COLOURS)],
            label=f"{name} ({len(torque)} samples, {outside} outside)",
            rasterized=True,
        )
    ax.plot([-1, 1, 1, -1, -1], [-1, -1, 1, 1, -1], "k-", lw=1.5, label=f"peak {replay.peak_nm:g} N·m")
    ax.plot(
        [-rated, rated, rated, -rated, -rated],
        [-rated, -rated, rated, rated, -rated],
        "k--",
        lw=1.0,
        label=f"rated {replay.rated_nm:g} N·m",
    )
    bound = 1.05 * limit
    ax.set_xlim(-bound, bound)
    ax.set_ylim(-bound, bound)
    ax.set_aspect("equal")
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    motor_a, motor_b = replay.motor_names[:2]
    ax.set_xlabel(f"τ_{motor_a} / T_peak")
    ax.set_ylabel(f"τ_{motor_b} / T_peak")
    ax.set_title(title or "Commanded ankle torque in motor space (feasible = unit square)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    return save_figure_atomic(fig, Path(path), dpi=dpi)


def plot_visited_poses(replay: AnkleReplay, path: str | Path, title: str = "", dpi: int = 120) -> Path:
    """Visited (pitch, roll) poses over each ankle's transmission map; outside samples marked.

    The map is the ankle library's survey (:func:`linkage_lab.kinematics.ankle_report.survey`,
    minimum transmission over the two motors), so an ankle's transmission needs a ``geometry``
    (an :class:`~linkage_lab.kinematics.ankle_transmission.RSUAnkleTransmission`); other
    transmissions get the poses on a blank background.
    """
    from matplotlib.figure import Figure

    samples = replay.samples()
    fig = Figure(figsize=(6.0 * len(samples), 4.8))
    axes = np.atleast_1d(fig.subplots(1, len(samples), squeeze=False)[0])
    mesh = None
    for k, (ax, (name, data)) in enumerate(zip(axes, samples.items(), strict=True)):
        geometry = getattr(replay.transmissions[name], "geometry", None)
        if geometry is not None:
            grid = survey(geometry, step_deg=1.0)
            field = grid.transmission.min(axis=-1).T  # (roll, pitch)
            mesh = ax.pcolormesh(
                grid.pitch_deg, grid.roll_deg, field, shading="nearest", cmap="viridis", vmin=0, vmax=1
            )
        pose = np.degrees(data["pose_rad"].numpy())
        torque = data["normalised_motor_torque"].numpy()
        outside = (np.abs(torque) > 1.0).any(axis=-1) if torque.size else np.zeros(0, dtype=bool)
        if pose.size:
            ax.scatter(
                pose[~outside, 0],
                pose[~outside, 1],
                s=8,
                alpha=0.8,
                color=_COLOURS[k % len(_COLOURS)],
                edgecolors="black",
                linewidths=0.3,
                label="inside",
                rasterized=True,
            )
            ax.scatter(pose[outside, 0], pose[outside, 1], s=14, marker="x", color="red", label="outside peak")
        ax.set_xlabel("pitch (deg), + toes up")
        ax.set_ylabel("roll (deg)")
        ax.set_title(f"{name} ankle")
        ax.legend(loc="lower right", fontsize="small")
    if mesh is not None:
        fig.colorbar(mesh, ax=list(axes), label="transmission, min over motors")
    fig.suptitle(title or "Visited ankle poses over the transmission map")
    return save_figure_atomic(fig, Path(path), dpi=dpi)


def write_replay_plots(replay: AnkleReplay, out_dir: str | Path, title: str = "") -> list[Path]:
    """Write both replay plots into ``out_dir``; returns their paths."""
    out_dir = Path(out_dir)
    return [
        plot_normalised_motor_torque(replay, out_dir / MOTOR_TORQUE_PLOT, title),
        plot_visited_poses(replay, out_dir / POSE_PLOT, title),
    ]
