"""The reality-gap sweep: every acceptance command on the closed chain under each condition of the stress set.

A policy is judged here by what the robot could do with it: the base velocity from the robot's estimator,
latency, motor constants off by 20 %, a slippery floor, kicked starts
(:data:`~linkage_lab.sim2sim.stress.STRESS_SET`). Each condition is one closed-chain sweep
(:func:`~linkage_lab.sim2sim.sweep.run_closed_chain_sweep`) judged by the task's closed-chain targets; the
document (``reality_gap.json``) holds one row per condition and command, with a table (``reality_gap.md``)
and a picture (``reality_gap.png``). ``linkage-lab ship`` writes them beside the shipped policy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from linkage_lab.evaluation.sweep import CommandCase
from linkage_lab.io import save_figure_atomic, write_json_atomic, write_text_atomic
from linkage_lab.sim2sim.bundle import Bundle, load_bundle
from linkage_lab.sim2sim.stress import STRESS_SET, StressCondition
from linkage_lab.sim2sim.sweep import SWEEP_DURATION_S, run_closed_chain_sweep

REALITY_GAP_FILE = "reality_gap.json"
REALITY_GAP_TABLE = "reality_gap.md"
REALITY_GAP_PLOT = "reality_gap.png"
#: Runs per command and condition: one from rest, one kicked (the stress set multiplies the runs).
REALITY_GAP_EPISODES = 2


def run_reality_gap(
    bundle: Any,
    conditions: Sequence[StressCondition] = STRESS_SET,
    episodes: int = REALITY_GAP_EPISODES,
    duration_s: float | None = None,
    seed: int = 0,
    on_row: Callable[[str, dict[str, Any]], None] | None = None,
    io_options: dict[str, Any] | None = None,
    sensor_noise: Any = "robot",
) -> dict[str, Any]:
    """Run the bundle's acceptance cases under each condition; returns the ``reality_gap.json`` document.

    Args:
        bundle: An exported bundle folder (or a loaded one).
        conditions: The stress conditions.
        episodes: Runs per case and condition.
        duration_s: Simulated seconds per run; ``None``: the sweep's.
        seed: Seed of the start kicks.
        on_row: Called with each finished ``(condition name, sweep row)`` (progress).
        io_options: Options of the robot side (its ``sim2sim_io`` extra), as in every run of the sweep.
        sensor_noise: What the controller's readings carry in every run (see
            :func:`~linkage_lab.sim2sim.runner.run_sim2sim`): by default the robot's ``sensors`` model.
    """

    loaded = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
    duration = SWEEP_DURATION_S if duration_s is None else duration_s
    rows, targets, noise = [], None, None
    for condition in conditions:

        def progress(row: dict[str, Any], name: str = condition.name) -> None:
            if on_row is not None:
                on_row(name, row)

        sweep, _ = run_closed_chain_sweep(
            loaded,
            duration_s=duration,
            on_case=progress,
            episodes=episodes,
            seed=seed,
            delays_s=condition.delays_s,
            stress=condition.physics,
            io_options=io_options,
            sensor_noise=sensor_noise,
        )
        targets, noise = sweep["targets"], sweep["sensor_noise"]
        for row in sweep["cases"]:
            rows.append({"condition": condition.name, **_summary(row)})
    failed = [row for row in rows if not row["passed"]]
    return {
        "task": loaded.metadata.get("task"),
        "bundle": str(loaded.path),
        "episodes_per_case": episodes,
        "duration_s": duration,
        "kick_seed": seed,
        "base_velocity": "the robot's estimator (IMU + leg kinematics + contact)",
        "sensor_noise": noise,
        "conditions": [
            {
                "name": c.name,
                "description": c.description,
                "delays_s": {"observation": c.delays_s[0], "action": c.delays_s[1]},
                "physics": c.physics.report(),
            }
            for c in conditions
        ],
        "targets": targets,
        "rows": rows,
        "summary": {
            "runs": sum(row["runs"] for row in rows),
            "falls": sum(row["falls"] for row in rows),
            "failed_rows": len(failed),
            "passed": None if targets is None else not failed,
        },
    }


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    """The few figures of a closed-chain sweep row the reality-gap table shows."""

    command = row["command"]
    figures = ("lin_vel_xy_rms_mps", "yaw_rate_rms_radps", "mean_forward_speed_mps", "mean_yaw_rate_radps")
    return {
        "case": CommandCase(command["lin_vel_x_mps"], command["ang_vel_z_radps"]).name,
        "command": command,
        "runs": len(row["runs"]),
        "falls": int(row["falls"]),
        **{key: row[key] for key in figures},
        "failed_checks": sorted(key for key, check in row["checks"].items() if not check["ok"]),
        "passed": all(check["ok"] for check in row["checks"].values()),
    }


def format_reality_gap(document: dict[str, Any]) -> str:
    """The document as a Markdown table: one line per condition and command."""

    def fmt(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    lines = [
        "| condition | command (m/s, rad/s) | runs | falls | lin-vel RMS (m/s) | yaw RMS (rad/s) | speed (m/s) | "
        "yaw rate (rad/s) | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in document["rows"]:
        command = row["command"]
        verdict = "pass" if row["passed"] else "miss: " + ", ".join(row["failed_checks"])
        lines.append(
            f"| {row['condition']} | {command['lin_vel_x_mps']:+.2f}, {command['ang_vel_z_radps']:+.2f} | "
            f"{row['runs']} | {row['falls']} | {fmt(row['lin_vel_xy_rms_mps'])} | {fmt(row['yaw_rate_rms_radps'])} | "
            f"{fmt(row['mean_forward_speed_mps'])} | {fmt(row['mean_yaw_rate_radps'])} | {verdict} |"
        )
    summary = document["summary"]
    lines.append("")
    lines.append(
        f"{summary['runs']} runs, {summary['falls']} falls; {summary['failed_rows']} of {len(document['rows'])} rows "
        f"miss a target ({document['task']}, closed-chain targets {document['targets']})."
    )
    return "\n".join(lines) + "\n"


def plot_reality_gap(document: dict[str, Any], path: str | Path, dpi: int = 120) -> Path:
    """Per command, each condition's tracking error (lin-vel RMS for forward commands, yaw RMS for turning ones)
    as grouped bars against the target; a fall is written over its bar."""
    from matplotlib.figure import Figure

    conditions = [c["name"] for c in document["conditions"]]
    cases = list(dict.fromkeys(row["case"] for row in document["rows"]))
    by_key = {(row["condition"], row["case"]): row for row in document["rows"]}
    targets = document["targets"] or {}
    figure = Figure(figsize=(max(8.0, 1.6 * len(cases)), 4.5))
    axes = figure.subplots()
    width = 0.8 / max(len(conditions), 1)
    colors = ["#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974", "#64b5cd", "#937860"]
    for index, condition in enumerate(conditions):
        xs, heights = [], []
        for x, case in enumerate(cases):
            row = by_key.get((condition, case))
            if row is None:
                continue
            turning = row["command"]["ang_vel_z_radps"] != 0.0
            value = row["yaw_rate_rms_radps"] if turning else row["lin_vel_xy_rms_mps"]
            xs.append(x - 0.4 + width * (index + 0.5))
            heights.append(value or 0.0)
            if row["falls"]:
                axes.text(xs[-1], heights[-1], f"{row['falls']}F", ha="center", va="bottom", fontsize=7, color="red")
        axes.bar(xs, heights, width, label=condition, color=colors[index % len(colors)])
    for x, case in enumerate(cases):
        turning = by_key[(conditions[0], case)]["command"]["ang_vel_z_radps"] != 0.0 if conditions else False
        target = targets.get("yaw_rate_rms_radps" if turning else "lin_vel_rms_mps")
        if target is not None:
            axes.hlines(target, x - 0.45, x + 0.45, colors="black", linestyles="dashed", linewidth=1)
    axes.set_xticks(range(len(cases)), cases, fontsize=8)
    axes.set_ylabel("RMS error: m/s (forward) or rad/s (turning)")
    axes.set_title(f"Reality gap on the closed chain: {document['task']} (dashed: target; nF: falls)")
    axes.legend(fontsize=7, ncols=3)
    figure.tight_layout()

    return save_figure_atomic(figure, path, dpi)


def write_reality_gap(folder: str | Path, document: dict[str, Any]) -> Path:
    """Write ``reality_gap.json`` (atomically), ``reality_gap.md`` and ``reality_gap.png``; returns the JSON's path."""

    folder = Path(folder)
    path = write_json_atomic(folder / REALITY_GAP_FILE, document)
    write_text_atomic(folder / REALITY_GAP_TABLE, format_reality_gap(document))
    plot_reality_gap(document, folder / REALITY_GAP_PLOT)
    return path
