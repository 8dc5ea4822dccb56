"""A task's acceptance sweep on the closed chain: its fixed commands, sim2sim runs of each, judged by its targets.

``linkage-lab eval --sweep`` judges a policy in Isaac Lab, on the serial tree it was trained on; this runs
the same cases (:func:`~linkage_lab.evaluation.sweep.task_acceptance`) with the exported bundle on the robot's
closed-chain MuJoCo model, as the robot runs it, and writes the same ``sweep.json`` layout, so the two
verdicts read side by side. A sim2sim run has no randomisation: each case runs once from rest and, with
``episodes`` > 1, again with the base kicked at the start as the task's resets kick it (seeded: the same
kicks for every policy). A case's runs are pooled into one row; a fall in any of them fails the case.
``linkage-lab ship`` runs it for robots with a closed-chain model and ships the result as
``closed_chain_sweep.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from linkage_lab.evaluation.sweep import CommandCase, TrackingTargets
from linkage_lab.sim2sim.bundle import Bundle, load_bundle

#: Simulated seconds per run: the acceptance sweep's episode length.
SWEEP_DURATION_S = 20.0
#: Runs per case by default: one from rest and three kicked.
SWEEP_EPISODES = 4
#: The largest start kick of a sweep's later episodes, ``(v_x, v_y, ω_z)`` in m/s and rad/s: the smaller of the
#: project's tasks' start kicks (``events.reset_base``: Marvin's residual task 0.25 on each axis, the Limit's
#: Isaac Lab's 0.5).
KICK_LIMITS = (0.25, 0.25, 0.25)


def episode_kicks(episodes: int, seed: int = 0) -> list[tuple[float, float, float] | None]:
    """The start of each episode of a case: the first at rest (``None``), the others kicked uniformly within
    :data:`KICK_LIMITS`, drawn from ``seed`` (the same kicks for every case and policy)."""
    import numpy as np

    if episodes < 1:
        raise ValueError(f"a sweep needs at least one episode per case, got {episodes}")
    rng = np.random.default_rng(seed)
    limits = np.asarray(KICK_LIMITS)
    kicks = [tuple(float(v) for v in rng.uniform(-limits, limits)) for _ in range(episodes - 1)]
    return [None, *kicks]


def pool_reports(reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several sim2sim reports of one command as one ``eval.json``-shaped report: the episodes' control steps
    pooled (means and RMS over all samples, as one evaluation of several episodes computes them), falls summed,
    footfall alternation over all touchdown pairs, each foot's duty factor over all samples."""
    import math

    steps = [int(r["control_steps"]) for r in reports]
    total = sum(steps)

    def pooled(key: str, squared: bool) -> float | None:
        terms = [(n, r["tracking"][key]) for n, r in zip(steps, reports) if n and r["tracking"][key] is not None]
        if not terms:
            return None
        weight = sum(n for n, _ in terms)
        if squared:
            return math.sqrt(sum(n * v * v for n, v in terms) / weight)
        return sum(n * v for n, v in terms) / weight

    tracking = {
        key: pooled(key, key.endswith("_rms_mps") or key.endswith("_rms_radps"))
        for key in ("lin_vel_xy_rms_mps", "yaw_rate_rms_radps", "mean_forward_speed_mps", "mean_yaw_rate_radps")
    }
    pairs: dict[str, int] = {}
    for report in reports:
        for kind, count in report["footfalls"]["touchdown_pairs"].items():
            pairs[kind] = pairs.get(kind, 0) + int(count)
    events = sum(pairs.values())
    samples = [int(r["footfalls"].get("samples") or 0) for r in reports]
    feet = []
    if sum(samples):
        for k, foot in enumerate(reports[0]["footfalls"].get("feet") or ()):
            down = sum(n * r["footfalls"]["feet"][k]["duty_factor"] for n, r in zip(samples, reports) if n)
            feet.append({"body": foot["body"], "duty_factor": down / sum(samples)})
    return {
        "episodes": len(reports),
        "falls": sum(int(r["falls"]) for r in reports),
        "control_steps": total,
        "tracking": tracking,
        "footfalls": {
            "samples": sum(samples),
            "feet": feet,
            "touchdown_pairs": pairs,
            "alternation": pairs.get("alternating", 0) / events if events else None,
        },
    }


def closed_chain_case(
    case: CommandCase, reports: Sequence[dict[str, Any]], targets: TrackingTargets | None
) -> dict[str, Any]:
    """The sweep row of one command's sim2sim runs: the evaluation's row of the pooled runs (a report has
    ``eval.json``'s shape), each run's start kick and fall time, and how hard the motors worked."""
    from linkage_lab.evaluation.sweep import case_result

    row = case_result(case, pool_reports(reports), targets)
    simulated = [float(r["simulated_s"]) for r in reports]
    saturated = [float(r["motor_torques"]["any_saturated_fraction"]) for r in reports]
    row["runs"] = [
        {
            "base_kick": r.get("base_kick"),
            "fall_time_s": None if r.get("fall") is None else r["fall"]["time_s"],
            "simulated_s": t,
        }
        for r, t in zip(reports, simulated)
    ]
    row["fall_times_s"] = [run["fall_time_s"] for run in row["runs"] if run["fall_time_s"] is not None]
    row["simulated_s"] = sum(simulated)
    row["any_motor_saturated_fraction"] = sum(f * t for f, t in zip(saturated, simulated)) / max(sum(simulated), 1e-9)
    row["worst_peak_torque_ratio"] = max(float(r["motor_torques"]["worst_peak_ratio"]) for r in reports)
    return row


def describe_case(row: dict[str, Any]) -> str:
    """One progress line for a finished row: its command, runs and falls."""
    command, fell = row["command"], row["fall_times_s"]
    return (
        f"  {command['lin_vel_x_mps']:+.2f} m/s, {command['ang_vel_z_radps']:+.2f} rad/s: {len(row['runs'])} runs, "
        + (f"fell in {len(fell)} (at {', '.join(f'{t:.2f}' for t in fell)} s)" if fell else "no fall")
    )


def run_closed_chain_sweep(
    bundle: str | Path | Bundle,
    cases: Sequence[CommandCase] | None = None,
    duration_s: float = SWEEP_DURATION_S,
    io_options: dict[str, Any] | None = None,
    on_case: Any = None,
    episodes: int = 1,
    seed: int = 0,
    delays_s: tuple[float, float] = (0.0, 0.0),
    stress: Any = None,
    sensor_noise: Any = "robot",
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Run ``bundle`` ``episodes`` times per case on its robot's closed chain.

    Args:
        bundle: An exported bundle folder (or a loaded one).
        cases: The commands; ``None``: the acceptance cases of the bundle's task.
        duration_s: Simulated seconds per run.
        io_options: Options of the robot side (its ``sim2sim_io`` extra).
        on_case: Called with each finished row (progress).
        episodes: Runs per case: the first from rest, the others with :func:`episode_kicks`' start kicks.
        seed: Seed of the kicks and of each run's sensor noise (drawn from ``(seed, case, run)``).
        delays_s: ``(observation, action)`` delays of every run in s (see :func:`run_sim2sim`).
        stress: The model's changed constants (:class:`~linkage_lab.sim2sim.stress.PhysicsStress`); ``None``: nominal.
        sensor_noise: What the controller's readings carry (see :func:`run_sim2sim`): by default the robot's
            ``sensors`` model.

    Returns:
        The ``sweep.json`` content and each run's ``sim2sim.json`` report by ``<case>/<run>`` name
        (:func:`write_closed_chain_sweep` writes them).

    Raises:
        BundleError: The bundle cannot be run on a closed chain.
        ValueError: No cases given and the bundle names no task of this project (an unknown task's run is
            reported without targets), or fewer than one episode.
    """
    from linkage_lab.evaluation.sweep import sweep_document, task_acceptance
    from linkage_lab.sim2sim.robot_side import resolve_robot
    from linkage_lab.sim2sim.runner import run_sim2sim
    from linkage_lab.tasks.registry import UnknownTaskError

    kicks = episode_kicks(episodes, seed)
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
    targets = None if acceptance is None else acceptance.targets_for("closed_chain")
    rows, reports = [], {}
    for case_index, case in enumerate(cases):
        command = (case.lin_vel_x_mps, case.ang_vel_z_radps)
        runs = [
            run_sim2sim(
                loaded,
                command,
                duration_s,
                io_options=io_options or None,
                base_kick=kick,
                delays_s=delays_s,
                stress=stress,
                sensor_noise=sensor_noise,
                noise_seed=(seed, case_index, run_index),
            )
            for run_index, kick in enumerate(kicks)
        ]
        reports.update({f"{case.name}/run{index}": report for index, report in enumerate(runs)})
        rows.append(closed_chain_case(case, runs, targets))
        if on_case is not None:
            on_case(rows[-1])
    sweep = sweep_document(
        task,
        rows,
        targets,
        episodes_per_case=episodes,
        num_envs=1,
        simulator="sim2sim: the exported bundle on the robot's closed-chain MuJoCo model",
        bundle=str(loaded.path),
        duration_s=duration_s,
        kick_limits=list(KICK_LIMITS),
        kick_seed=seed,
        robot_side_options=dict(io_options or {}),
        delays_s={"observation": float(delays_s[0]), "action": float(delays_s[1])},
        physics_stress=None if stress is None else stress.report(),
        sensor_noise=_noise_model(reports),
    )
    return sweep, reports


def _noise_model(reports: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The sensor model the runs read through (the same in every run; their seeds and drawn biases differ)."""
    per_run = ("seed", "drawn_gyro_bias_radps")
    models = [report.get("sensor_noise") for report in reports.values()]
    return None if not models or models[0] is None else {k: v for k, v in models[0].items() if k not in per_run}


def write_closed_chain_sweep(folder: str | Path, sweep: dict[str, Any], reports: dict[str, dict[str, Any]]) -> Path:
    """Write ``<folder>/<case>/<run>/sim2sim.json`` per run, ``sweep.json`` and ``sweep.png``; returns the JSON's
    path."""
    from linkage_lab.evaluation.sweep_output import write_sweep
    from linkage_lab.io import write_json_atomic
    from linkage_lab.sim2sim.runner import REPORT_FILE

    for name, report in reports.items():
        write_json_atomic(Path(folder) / name / REPORT_FILE, report)
    return write_sweep(folder, sweep)
