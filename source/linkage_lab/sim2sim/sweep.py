"""A task's acceptance sweep on the closed chain: its fixed commands, one sim2sim run each, judged by its targets.

``linkage-lab eval --sweep`` judges a policy in Isaac Lab, on the serial tree it was trained on; this runs
the same cases (:func:`~linkage_lab.evaluation.sweep.task_acceptance`) with the exported bundle on the robot's
closed-chain MuJoCo model, as the robot runs it, and writes the same ``sweep.json`` layout, so the two
verdicts read side by side. A sim2sim run has no randomisation and no pushes: one run per case, and a case
passes when that run meets the targets (a fall fails it). ``linkage-lab ship`` runs it for robots with a
closed-chain model and ships the result as ``closed_chain_sweep.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from linkage_lab.evaluation.sweep import CommandCase, TrackingTargets
from linkage_lab.sim2sim.bundle import Bundle, load_bundle

#: Simulated seconds per case: the acceptance sweep's episode length.
SWEEP_DURATION_S = 20.0


def closed_chain_case(case: CommandCase, report: dict[str, Any], targets: TrackingTargets | None) -> dict[str, Any]:
    """The sweep row of one sim2sim run: the evaluation's row (the report has ``eval.json``'s shape) with when it
    fell and how hard the motors worked."""
    from linkage_lab.evaluation.sweep import case_result

    row = case_result(case, report, targets)
    torques = report["motor_torques"]
    row["fall_time_s"] = None if report.get("fall") is None else report["fall"]["time_s"]
    row["simulated_s"] = report["simulated_s"]
    row["any_motor_saturated_fraction"] = torques["any_saturated_fraction"]
    row["worst_peak_torque_ratio"] = torques["worst_peak_ratio"]
    return row


def run_closed_chain_sweep(
    bundle: str | Path | Bundle,
    cases: Sequence[CommandCase] | None = None,
    duration_s: float = SWEEP_DURATION_S,
    io_options: dict[str, Any] | None = None,
    on_case: Any = None,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Run ``bundle`` once per case on its robot's closed chain.

    Args:
        bundle: An exported bundle folder (or a loaded one).
        cases: The commands; ``None``: the acceptance cases of the bundle's task.
        duration_s: Simulated seconds per case.
        io_options: Options of the robot side (its ``sim2sim_io`` extra).
        on_case: Called with each finished row (progress).

    Returns:
        The ``sweep.json`` content and each case's ``sim2sim.json`` report by case name
        (:func:`write_closed_chain_sweep` writes them).

    Raises:
        BundleError: The bundle cannot be run on a closed chain.
        ValueError: No cases given and the bundle names no task of this project (an unknown task's run is
            reported without targets).
    """
    from linkage_lab.evaluation.sweep import sweep_document, task_acceptance
    from linkage_lab.sim2sim.runner import resolve_robot, run_sim2sim
    from linkage_lab.tasks.registry import UnknownTaskError

    loaded = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
    resolve_robot(loaded)
    task = loaded.metadata.get("task")
    try:
        acceptance = task_acceptance(task) if task else None
    except UnknownTaskError:
        acceptance = None
    if cases is None:
        if acceptance is None:
            raise ValueError(
                f"bundle {loaded.path} names no task of this project ({task!r}); give the sweep's commands"
            )
        cases = acceptance.cases
    targets = None if acceptance is None else acceptance.targets
    rows, reports = [], {}
    for case in cases:
        command = (case.lin_vel_x_mps, case.ang_vel_z_radps)
        reports[case.name] = run_sim2sim(loaded, command, duration_s, io_options=io_options or None)
        rows.append(closed_chain_case(case, reports[case.name], targets))
        if on_case is not None:
            on_case(rows[-1])
    sweep = sweep_document(
        task,
        rows,
        targets,
        episodes_per_case=1,
        num_envs=1,
        simulator="sim2sim: the exported bundle on the robot's closed-chain MuJoCo model",
        bundle=str(loaded.path),
        duration_s=duration_s,
        robot_side_options=dict(io_options or {}),
    )
    return sweep, reports


def write_closed_chain_sweep(folder: str | Path, sweep: dict[str, Any], reports: dict[str, dict[str, Any]]) -> Path:
    """Write ``<folder>/<case>/sim2sim.json`` per case, ``sweep.json`` and ``sweep.png``; returns the JSON's path."""
    from linkage_lab.evaluation.sweep import write_sweep
    from linkage_lab.io import write_json_atomic
    from linkage_lab.sim2sim.runner import REPORT_FILE

    for name, report in reports.items():
        write_json_atomic(Path(folder) / name / REPORT_FILE, report)
    return write_sweep(folder, sweep)
