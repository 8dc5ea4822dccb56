"""The transfer table's report: ``transfer.md`` (one line per policy and command, the stress set's column and the
sprint table) and ``transfer.png``, from a ``transfer.json`` document (:mod:`linkage_lab_experiments.transfer`
runs the rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def fmt(value: Any, digits: int = 3) -> str:
    """A number as the table prints it (``–`` for none)."""
    return "–" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def case_line(case: dict[str, Any]) -> str:
    """One command of a row as the run prints it: Isaac Lab → sim2sim."""
    i, s = case["isaac_lab"], case["sim2sim"]
    return (
        f"speed {fmt(i['mean_forward_speed_mps'])} -> {fmt(s['mean_forward_speed_mps'])} m/s, "
        f"lin RMS {fmt(i['lin_vel_xy_rms_mps'])} -> {fmt(s['lin_vel_xy_rms_mps'])}, "
        f"falls {i['falls']}/{i['episodes']} -> {s['falls']}, worst saturation {s['worst_saturated_fraction']:.0%}"
    )


def _race(metrics: dict[str, Any]) -> str:
    if metrics["success"]:
        return f"finished in {metrics['time']:.2f} s"
    return f"{metrics['ended_reason']} at {metrics['distance_m']:.2f} m"


def sprint_line(sprint: dict[str, Any]) -> str:
    """A row's race as the run prints it: Isaac Lab → sim2sim."""
    i, s = sprint["isaac_lab"], sprint["sim2sim"]
    return (
        f"{_race(i)} -> {_race(s)}, max lateral offset {i['max_lateral_offset_m']:.2f} -> "
        f"{s['max_lateral_offset_m']:.2f} m"
    )


def markdown_table(doc: dict[str, Any]) -> str:
    """The table of ``transfer.json`` as Markdown: one line per row and command (with a column for the stress set
    when a row was run under it)."""
    stressed = any("sim2sim_stress" in case for row in doc["rows"] for case in row.get("cases", []))
    columns = [
        "policy",
        "command (vx, wz)",
        "speed Isaac → sim2sim (m/s)",
        "lin-vel RMS Isaac → sim2sim (m/s)",
        "yaw RMS Isaac → sim2sim (rad/s)",
        "falls Isaac → sim2sim",
        "sim2sim motors saturated (mean / worst)",
    ]
    if stressed:
        columns.append("stress set: falls / runs, worst lin-vel RMS (m/s), worst yaw RMS (rad/s), conditions passed")
    head = "| " + " | ".join(columns) + " |\n" + "|---" * len(columns) + "|\n"
    lines = []
    for row in doc["rows"]:
        if row["status"] != "ok":
            lines.append(f"| {row['name']} | – | {row['status']}: {row['note']} | | | | |" + " |" * stressed)
            continue
        for case in row["cases"]:
            i, s = case["isaac_lab"], case["sim2sim"]
            line = (
                f"| {row['name']} | {case['command'][0]:+.1f}, {case['command'][1]:+.1f} | "
                f"{fmt(i['mean_forward_speed_mps'])} → {fmt(s['mean_forward_speed_mps'])} | "
                f"{fmt(i['lin_vel_xy_rms_mps'])} → {fmt(s['lin_vel_xy_rms_mps'])} | "
                f"{fmt(i['yaw_rate_rms_radps'])} → {fmt(s['yaw_rate_rms_radps'])} | "
                f"{i['falls']}/{i['episodes']} → {s['falls']}/1 | "
                f"{s['mean_saturated_fraction']:.1%} / {s['worst_saturated_fraction']:.0%} "
                f"({s['worst_saturated_motor']}) |"
            )
            if stressed:
                line += f" {_stress_cell(case.get('sim2sim_stress'))} |"
            lines.append(line)
    table = head + "\n".join(lines) + "\n"
    races = [row for row in doc["rows"] if row.get("sprint")]
    if races:
        table += (
            "\n| policy | ankles (Isaac Lab) | sprint Isaac Lab | sprint sim2sim | "
            "max lateral offset Isaac → sim2sim (m) |\n|---|---|---|---|---|\n"
        )
        for row in races:
            i, s = row["sprint"]["isaac_lab"], row["sprint"]["sim2sim"]
            table += (
                f"| {row['name']} | {row['sprint']['ankle']} | {_race(i)} | {_race(s)} | "
                f"{i['max_lateral_offset_m']:.2f} → {s['max_lateral_offset_m']:.2f} |\n"
            )
    return table


def _stress_cell(stress: dict[str, Any] | None) -> str:
    if stress is None:
        return "not run"
    return (
        f"{stress['falls']}/{stress['runs']}, {fmt(stress['worst_lin_vel_xy_rms_mps'])} "
        f"({stress['worst_lin_vel_xy_rms_mps_condition']}), {fmt(stress['worst_yaw_rate_rms_radps'])} "
        f"({stress['worst_yaw_rate_rms_radps_condition']}), {stress['conditions_passed']}/{stress['conditions']}"
    )


def plot(doc: dict[str, Any], path: Path) -> Path:
    """Lin-vel RMS error (Isaac Lab vs sim2sim) and worst motor saturation per row and command (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from linkage_lab.io import save_figure_atomic

    labels, isaac, sim, saturation, stressed = [], [], [], [], []
    for row in doc["rows"]:
        for case in row["cases"]:
            labels.append(f"{row['name']}\n{case['command'][0]:+.1f},{case['command'][1]:+.1f}")
            isaac.append(case["isaac_lab"]["lin_vel_xy_rms_mps"] or 0.0)
            sim.append(case["sim2sim"]["lin_vel_xy_rms_mps"] or 0.0)
            saturation.append(100.0 * case["sim2sim"]["worst_saturated_fraction"])
            stressed.append(case.get("sim2sim_stress"))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8.0, 0.55 * len(labels)), 7.5), sharex=True)
    x = range(len(labels))
    width = 0.27 if any(stressed) else 0.4
    top.bar([v - width / 2 for v in x], isaac, width, label="Isaac Lab (serial tree, trained on)")
    top.bar([v + width / 2 for v in x], sim, width, label="sim2sim (closed chain, robot-side code)")
    if any(stressed):
        xs = [v + 1.5 * width for v, s in zip(x, stressed) if s]
        worst = [s["worst_lin_vel_xy_rms_mps"] or 0.0 for s in stressed if s]
        top.bar(xs, worst, width, color="tab:gray", label="sim2sim under the stress set (worst condition; nF: falls)")
        for xv, height, s in zip(xs, worst, [s for s in stressed if s]):
            if s["falls"]:
                top.text(xv, height, f"{s['falls']}F", ha="center", va="bottom", fontsize=7, color="red")
    top.set_ylabel("lin-vel RMS error (m/s)")
    top.legend(loc="upper left", fontsize=8)
    top.set_title("Transfer: the same policy in Isaac Lab and on the closed-chain MuJoCo model")
    bottom.bar(list(x), saturation, 0.5, color="tab:red")
    bottom.set_ylabel("worst motor saturated (% of time)")
    bottom.set_xticks(list(x))
    bottom.set_xticklabels(labels, rotation=90, fontsize=7)
    fig.tight_layout()
    return save_figure_atomic(fig, path)
