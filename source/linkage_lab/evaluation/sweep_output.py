"""Running a sweep and writing its files: ``sweep.json`` and its picture ``sweep.png`` (achieved vs commanded
motion per case, and the errors against the targets)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from linkage_lab.evaluation.sweep import (
    SWEEP_COMMAND,
    SWEEP_FILE,
    CommandCase,
    TrackingTargets,
    case_name,
    case_result,
    sweep_document,
    task_acceptance,
)
from linkage_lab.io import save_figure_atomic, write_json_atomic
from linkage_lab.outputs import check_output_dir, staged_directory

SWEEP_PLOT = "sweep.png"


def plot_sweep(sweep: dict[str, Any], path: str | Path, dpi: int = 120) -> Path:
    """The sweep as a picture: achieved vs commanded forward speed and yaw rate per case, and each
    case's RMS errors against the targets (bars red where a check failed)."""
    from matplotlib.figure import Figure

    rows = sweep["cases"]
    names = [case_name(r).replace("_", "\n") for r in rows]
    x = list(range(len(rows)))
    fig = Figure(figsize=(10, 4.2))
    speed, errors = fig.subplots(1, 2)
    width = 0.38
    speed.bar([i - width / 2 for i in x], [r["command"]["lin_vel_x_mps"] for r in rows], width, label="commanded v_x")
    speed.bar(
        [i + width / 2 for i in x],
        [r["mean_forward_speed_mps"] or 0.0 for r in rows],
        width,
        label="mean forward speed",
    )
    speed.set_xticks(x, names, fontsize=7)
    speed.set_ylabel("m/s")
    speed.axhline(0.0, color="k", lw=0.5)
    speed.set_title("forward speed per case")
    speed.legend(fontsize=7)
    targets = sweep.get("targets") or {}
    for offset, key, label, target in (
        (-width / 2, "lin_vel_xy_rms_mps", "v_xy RMS (m/s)", targets.get("lin_vel_rms_mps")),
        (width / 2, "yaw_rate_rms_radps", "yaw-rate RMS (rad/s)", targets.get("yaw_rate_rms_radps")),
    ):
        colors = [
            "tab:red" if (r["checks"].get(key) is not None and not r["checks"][key]["ok"]) else "tab:green"
            for r in rows
        ]
        bars = errors.bar([i + offset for i in x], [r[key] or 0.0 for r in rows], width, color=colors, label=label)
        bars[0].set_label(label)
        if target is not None:
            errors.axhline(target, ls="--", lw=0.8, color="gray")
            errors.text(len(rows) - 0.5, target, f" {label.split(' (')[0]} target {target}", fontsize=6, va="bottom")
    for i, r in enumerate(rows):
        if r.get("falls"):
            errors.text(i, 0.0, f"{r['falls']} falls", rotation=90, fontsize=7, color="tab:red", va="bottom")
    errors.set_xticks(x, names, fontsize=7)
    errors.set_title("tracking error (left bar v_xy, right bar yaw rate; red = check failed)", fontsize=8)
    summary = sweep.get("summary", {})
    where = " on the closed chain (sim2sim)" if str(sweep.get("simulator", "")).startswith("sim2sim") else ""
    fig.suptitle(
        f"{sweep.get('task', '')}{where}: {sweep.get('episodes_per_case')} episodes per case — "
        + ("all targets met" if summary.get("passed") else "targets missed"),
        fontsize=9,
    )
    fig.tight_layout()
    return save_figure_atomic(fig, path, dpi=dpi)


def write_sweep(out_dir: str | Path, sweep: dict[str, Any]) -> Path:
    """Write ``sweep.json`` (atomically) and ``sweep.png`` into ``out_dir``; returns the JSON's path."""
    path = Path(out_dir) / SWEEP_FILE
    write_json_atomic(path, sweep)
    plot_sweep(sweep, Path(out_dir) / SWEEP_PLOT)
    return path


def run_sweep(
    request: Any,
    cases: Sequence[CommandCase] | None = None,
    targets: TrackingTargets | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Evaluate ``request`` (an :class:`~linkage_lab.evaluation.evaluate.EvalRequest`) once per case.

    Each case writes its own report into ``<out>/<case name>/``; ``<out>/sweep.json`` holds the table.
    Overrides of the request that set the command are replaced by each case's. ``cases`` and
    ``targets`` default to the task's :func:`task_acceptance`.

    Returns:
        The sweep folder and the ``sweep.json`` content.
    """
    from dataclasses import replace

    from linkage_lab.evaluation.evaluate import default_out_dir, evaluate

    acceptance = task_acceptance(request.task)
    cases = acceptance.cases if cases is None else cases
    targets = acceptance.targets if targets is None else targets
    out_dir = check_output_dir(default_out_dir(request), SWEEP_COMMAND, request.force)
    base = [o for o in request.overrides if not o.startswith("env.commands.base_velocity.")]
    rows = []
    # The whole sweep (its cases' eval outputs, the table and the plot) is assembled aside and swapped in,
    # under the same rules as every output folder: new, empty, or a previous sweep replaced with --force.
    with staged_directory(out_dir, SWEEP_COMMAND, request.force) as staging:
        for case in cases:
            case_request = replace(request, overrides=(*base, *case.overrides()), out_dir=staging / case.name)
            _, report = evaluate(case_request)
            rows.append(case_result(case, report, targets))
        sweep = sweep_document(request.task, rows, targets, base, request.episodes, request.num_envs)
        write_sweep(staging, sweep)
    return out_dir, sweep
