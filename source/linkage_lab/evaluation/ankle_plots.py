"""The ankle report's pictures: the transmission map and the torque diamond (PNG, matplotlib)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.io import save_figure_atomic
from linkage_lab.kinematics.ankle_report import MIN_TRANSMISSION, AnkleSurvey
from linkage_lab.kinematics.rsu_geometry import RSUAnkleGeometry


def plot_transmission_map(data: AnkleSurvey, report: dict[str, Any], path: str | Path, dpi: int = 120) -> Path:
    """Write the transmission map (min over the two motors) with the worst pose marked (PNG)."""
    from matplotlib.figure import Figure

    worst = report["worst_transmission"]
    field = data.transmission.min(axis=-1).T  # (R, P)
    # A bare Figure (no pyplot): no GUI backend, nothing global to switch or close.
    fig = Figure(figsize=(7.5, 4.5))
    ax = fig.subplots()
    mesh = ax.pcolormesh(data.pitch_deg, data.roll_deg, field, shading="nearest", cmap="viridis", vmin=0, vmax=1)
    fig.colorbar(mesh, ax=ax, label="transmission, min over motors a, b")
    levels = ax.contour(
        data.pitch_deg,
        data.roll_deg,
        field,
        levels=[0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9],
        colors="white",
        linewidths=0.5,
    )
    ax.clabel(levels, fmt="%.1f", fontsize="small")
    if field.min() < MIN_TRANSMISSION < field.max():
        ax.contour(data.pitch_deg, data.roll_deg, field, levels=[MIN_TRANSMISSION], colors="red", linewidths=1.5)
        ax.plot([], [], color="red", label=f"transmission {MIN_TRANSMISSION} (design rule)")
        ax.legend(loc="lower right", fontsize="small")
    ax.plot(worst["pitch_deg"], worst["roll_deg"], marker="X", color="red", markersize=12, markeredgecolor="white")
    ax.annotate(
        f"worst {worst['value']:.3f} (motor {worst['motor']})",
        (worst["pitch_deg"], worst["roll_deg"]),
        xytext=(0.5, 0.5),
        textcoords="axes fraction",
        ha="center",
        color="white",
        arrowprops={"arrowstyle": "->", "color": "white"},
    )
    ax.set_xlabel("pitch (deg), + toes up")
    ax.set_ylabel("roll (deg)")
    ax.set_title(f"Ankle transmission, preset {data.geometry.preset} ({data.geometry.side})")
    return save_figure_atomic(fig, Path(path), dpi=dpi)


def plot_torque_diamond(geometry: RSUAnkleGeometry, diamond: dict[str, Any], path: str | Path, dpi: int = 120) -> Path:
    """Write the feasible torque set at a pose vs the simulator's box and the demand (PNG)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 5.5))
    ax = fig.subplots()
    for key, style, label in (
        (
            "vertices_peak_nm",
            {"color": "tab:blue", "alpha": 0.25},
            f"hardware, peak {geometry.motor.peak_nm:g} N·m",
        ),
        (
            "vertices_rated_nm",
            {"color": "tab:green", "alpha": 0.35},
            f"hardware, rated {geometry.motor.rated_nm:g} N·m",
        ),
    ):
        vertices = np.asarray(diamond[key])
        ax.fill(vertices[:, 0], vertices[:, 1], label=label, **style)
    box_p, box_r = diamond["box_peak_nm"]
    ax.plot(
        [-box_p, box_p, box_p, -box_p, -box_p],
        [-box_r, -box_r, box_r, box_r, -box_r],
        "r--",
        label="simulator box (peak)",
    )
    demand = np.asarray(diamond["demand_nm"])
    mirrors = demand * np.array([[1, -1], [-1, 1], [-1, -1]])
    ax.plot(mirrors[:, 0], mirrors[:, 1], "o", mfc="none", color="black", alpha=0.5, label="demand, other signs")
    marker = "o" if diamond["demand_feasible"] else "X"
    ax.plot(*demand, marker, color="black", markersize=10, label=f"demand ({demand[0]:+g}, {demand[1]:+g}) N·m")
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("pitch torque (N·m)")
    ax.set_ylabel("roll torque (N·m)")
    pitch, roll = diamond["pose_deg"]
    ax.set_title(f"Torque diamond, preset {geometry.preset}, pitch {pitch:+.1f}°, roll {roll:+.1f}°")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    return save_figure_atomic(fig, Path(path), dpi=dpi)
