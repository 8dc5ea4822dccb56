"""The transfer table: each policy in Isaac Lab (the serial tree it was trained on) against the same
exported bundle on the robot's closed-chain MuJoCo model, run as the robot runs it.

``python -m linkage_lab_experiments.transfer [--config configs/experiments/transfer.yaml]`` does, per row of
the config: export the checkpoint (``linkage-lab export``), the Isaac Lab acceptance sweep
(``linkage-lab eval --sweep``: fixed commands, several envs, the task's pushes), and one sim2sim run
per command of that sweep (:func:`~linkage_lab.sim2sim.runner.run_sim2sim`); a row with a
``sprint_ankle`` also races the 10 m sprint in both (``linkage-lab sprint``, ``sim2sim --sprint``).
With ``--stress`` each row also runs the reality-gap sweep on the closed chain (every command under each
condition of the stress set: the estimator, 20 / 40 ms latency, motor constants ±20 %, friction 0.5, kicked
starts; :mod:`linkage_lab.sim2sim.reality_gap`), written to ``<row>/reality_gap/``, and each command of the
table gets its worst condition's figures.
The Isaac Lab steps run as the project's own commands in a subprocess, so this process never imports
Isaac Lab. It writes
``outputs/transfer/transfer.json``, ``transfer.md`` (the table) and ``transfer.png`` (tracking error
and motor saturation, side by side).

A row's policy is a checkpoint (``pretrained`` for the task's shipped one) with the training's overrides
(its linkage model). Rows whose checkpoint is missing are reported as not trained, not skipped silently.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linkage_lab.arguments import finite_float
from linkage_lab.paths import REPO_ROOT
from linkage_lab_experiments.transfer_report import case_line, fmt, markdown_table, plot, sprint_line

DEFAULT_CONFIG = REPO_ROOT / "configs" / "experiments" / "transfer.yaml"
DEFAULT_OUT = REPO_ROOT / "outputs" / "transfer"
#: Simulated seconds of each sim2sim run (the Isaac Lab sweep's episode length).
DURATION_S = 20.0


@dataclass(frozen=True)
class Row:
    """One policy of the table.

    Attributes:
        name: The row's label.
        task: The velocity task it was trained on.
        checkpoint: ``pretrained`` or a checkpoint path (relative to the repo root).
        overrides: The training's hydra overrides (its linkage model), passed to export and eval.
        note: What the row shows (printed in the table).
        sim2sim_options: Options of the robot side in sim2sim (e.g. an ankle bridge mode).
        sprint_ankle: Race the sprint too, Isaac Lab's with these ankles (``box``/``diamond``: the
            training's); ``None``: no sprint.
    """

    name: str
    task: str
    checkpoint: str
    overrides: tuple[str, ...] = ()
    note: str = ""
    sim2sim_options: dict[str, Any] = field(default_factory=dict)
    sprint_ankle: str | None = None


def load_rows(path: Path) -> list[Row]:
    """The rows of a transfer config (``rows: [{name, task, checkpoint, overrides, note, sim2sim_options,
    sprint_ankle}]``)."""
    import yaml

    from linkage_lab.config import ConfigError

    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"transfer config {path}: {exc}") from exc
    rows = []
    for index, entry in enumerate((doc or {}).get("rows", [])):
        try:
            rows.append(
                Row(
                    name=str(entry["name"]),
                    task=str(entry["task"]),
                    checkpoint=str(entry["checkpoint"]),
                    overrides=tuple(entry.get("overrides") or ()),
                    note=str(entry.get("note", "")),
                    sim2sim_options=dict(entry.get("sim2sim_options") or {}),
                    sprint_ankle=None if entry.get("sprint_ankle") is None else str(entry["sprint_ankle"]),
                )
            )
        except (KeyError, TypeError) as exc:
            raise ConfigError(f"transfer config {path}: rows[{index}] needs name, task and checkpoint ({exc})") from exc
    if not rows:
        raise ConfigError(f"transfer config {path} lists no rows")
    return rows


def _checkpoint_available(row: Row) -> bool:
    return row.checkpoint == "pretrained" or (REPO_ROOT / row.checkpoint).is_file()


def _run(args: list[str], log: Path) -> None:
    """Run a ``linkage-lab`` command, its output into ``log``; raise with the log's tail on failure. A sweep that
    misses its targets (exit status 3) is a measurement the table shows, not a failure."""
    from linkage_lab.exit_codes import MISSED, OK

    command = [sys.executable, "-m", "linkage_lab.cli.main", *args]
    with log.open("a") as handle:
        handle.write(f"$ linkage-lab {' '.join(args)}\n")
        handle.flush()
        done = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, cwd=REPO_ROOT, check=False)
    if done.returncode not in (OK, MISSED):
        tail = "\n".join(log.read_text().splitlines()[-15:])
        raise RuntimeError(f"linkage-lab {args[0]} failed (exit {done.returncode}); {log}:\n{tail}")


def _isaac_case(case: dict[str, Any]) -> dict[str, Any]:
    return {
        "mean_forward_speed_mps": case.get("mean_forward_speed_mps"),
        "lin_vel_xy_rms_mps": case.get("lin_vel_xy_rms_mps"),
        "yaw_rate_rms_radps": case.get("yaw_rate_rms_radps"),
        "falls": case.get("falls"),
        "episodes": case.get("episodes"),
    }


def _sim2sim_case(report: dict[str, Any]) -> dict[str, Any]:
    motors = report["motor_torques"]["motors"]
    worst = max(motors, key=lambda m: m["saturated_fraction"])
    tracking = report["tracking"]
    return {
        "mean_forward_speed_mps": tracking["mean_forward_speed_mps"],
        "lin_vel_xy_rms_mps": tracking["lin_vel_xy_rms_mps"],
        "yaw_rate_rms_radps": tracking["yaw_rate_rms_radps"],
        "falls": report["falls"],
        "simulated_s": report["simulated_s"],
        "mean_saturated_fraction": sum(m["saturated_fraction"] for m in motors) / len(motors),
        "worst_saturated_motor": worst["name"],
        "worst_saturated_fraction": worst["saturated_fraction"],
        "peak_torque_ratio": max(m["peak_ratio"] for m in motors),
    }


#: The sprint metrics (docs/design/gait.md §4) the table keeps from each simulator's race.
SPRINT_KEYS = ("success", "time", "distance_m", "average_speed_mps", "max_lateral_offset_m", "ended_reason")


def _sprint_row(row: Row, folder: Path, bundle: Path, log: Path, isaac: bool) -> dict[str, Any]:
    """The row's 10 m race in Isaac Lab (``linkage-lab sprint``) and on the closed chain (``sim2sim --sprint``)."""
    from linkage_lab.sim2sim.runner import run_sim2sim
    from linkage_lab.sprint.runner import race_export_overrides

    race_dir = folder / "isaac_sprint"
    metrics_file = race_dir / "metrics.json"
    if isaac or not metrics_file.is_file():
        race = ["sprint", "--checkpoint", row.checkpoint, "--ankle", str(row.sprint_ankle), "--out", str(race_dir)]
        # The row's overrides but its presets: the race picks the ankle model from ``--ankle``.
        action_overrides = [o for o in row.overrides if not o.startswith("presets=")]
        _run([*race, "--force", *action_overrides], log)
    isaac_metrics = json.loads(metrics_file.read_text())
    race_overrides = race_export_overrides(row.task)
    if race_overrides:  # the race steps the gait prior at a cadence of its own: gait.onnx must hold it
        bundle = folder / "race_bundle"
        export = ["export", "--task", row.task, "--checkpoint", row.checkpoint, "--out", str(bundle), "--force"]
        _run([*export, *row.overrides, *race_overrides], log)
    report = run_sim2sim(bundle, None, None, sprint=True, io_options=row.sim2sim_options or None)
    return {
        "ankle": row.sprint_ankle,
        "isaac_lab": {key: isaac_metrics.get(key) for key in SPRINT_KEYS},
        "sim2sim": {key: report["sprint"].get(key) for key in SPRINT_KEYS},
    }


def stressed_cases(document: dict[str, Any]) -> dict[tuple[float, float], dict[str, Any]]:
    """Per command ``(vx, wz)``, a reality-gap document's figures over all its conditions: runs and falls summed,
    the worst lin-vel and yaw-rate RMS and the condition each came from, and the conditions meeting every target."""
    by_command: dict[tuple[float, float], list[dict[str, Any]]] = {}
    for row in document["rows"]:
        command = (row["command"]["lin_vel_x_mps"], row["command"]["ang_vel_z_radps"])
        by_command.setdefault(command, []).append(row)
    cases = {}
    for command, rows in by_command.items():
        entry: dict[str, Any] = {
            "runs": sum(r["runs"] for r in rows),
            "falls": sum(r["falls"] for r in rows),
            "conditions": len(rows),
            "conditions_passed": sum(bool(r["passed"]) for r in rows),
        }
        for key in ("lin_vel_xy_rms_mps", "yaw_rate_rms_radps"):
            measured = [r for r in rows if r[key] is not None]
            worst = max(measured, key=lambda r, k=key: r[k], default=None)
            entry[f"worst_{key}"] = None if worst is None else worst[key]
            entry[f"worst_{key}_condition"] = None if worst is None else worst["condition"]
        cases[command] = entry
    return cases


def _stress_row(row: Row, folder: Path, bundle: Path, reuse: bool = False) -> dict[tuple[float, float], dict[str, Any]]:
    """The row's reality-gap sweep on the closed chain, written to ``<row>/reality_gap/``; its figures per command.
    With ``reuse`` a ``reality_gap.json`` already there is read instead of run again."""
    from linkage_lab.sim2sim.reality_gap import REALITY_GAP_FILE, run_reality_gap, write_reality_gap

    existing = folder / "reality_gap" / REALITY_GAP_FILE
    if reuse and existing.is_file():
        return stressed_cases(json.loads(existing.read_text()))

    def progress(condition: str, case: dict[str, Any]) -> None:
        command = case["command"]
        print(
            f"  {row.name} stress {condition} ({command['lin_vel_x_mps']:+.1f}, {command['ang_vel_z_radps']:+.1f}): "
            f"lin RMS {fmt(case['lin_vel_xy_rms_mps'])}, yaw RMS {fmt(case['yaw_rate_rms_radps'])}, "
            f"falls {case['falls']}",
            flush=True,
        )

    document = run_reality_gap(bundle, on_row=progress, io_options=row.sim2sim_options or None)
    write_reality_gap(folder / "reality_gap", document)
    return stressed_cases(document)


def run_row(
    row: Row,
    out_dir: Path,
    duration_s: float = DURATION_S,
    isaac: bool = True,
    stress: bool = False,
    reuse_stress: bool = False,
) -> dict[str, Any]:
    """Export, sweep in Isaac Lab and run sim2sim for one row (and, with ``stress``, the reality-gap sweep, or with
    ``reuse_stress`` the one the row's folder holds); returns its entry of ``transfer.json``."""
    from linkage_lab.sim2sim.runner import run_sim2sim

    if not _checkpoint_available(row):
        return {"name": row.name, "task": row.task, "note": row.note, "status": "not trained", "cases": []}
    folder = out_dir / row.name
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "commands.log"
    log.write_text("")
    bundle = folder / "bundle"
    export = ["export", "--task", row.task, "--checkpoint", row.checkpoint, "--out", str(bundle), "--force"]
    _run(export + list(row.overrides), log)
    sweep_dir = folder / "isaac"
    sweep_file = sweep_dir / "sweep.json"
    if isaac or not sweep_file.is_file():
        sweep = ["eval", "--task", row.task, "--checkpoint", row.checkpoint, "--sweep", "--out", str(sweep_dir)]
        _run([*sweep, "--force", "--no-progress", *row.overrides], log)
    sweep_doc = json.loads(sweep_file.read_text())
    cases = []
    for case in sweep_doc["cases"]:
        command = (case["command"]["lin_vel_x_mps"], case["command"]["ang_vel_z_radps"])
        report = run_sim2sim(bundle, command, duration_s, io_options=row.sim2sim_options or None)
        cases.append({"command": list(command), "isaac_lab": _isaac_case(case), "sim2sim": _sim2sim_case(report)})
        print(f"  {row.name} {command}: {case_line(cases[-1])}", flush=True)
    if stress:
        stressed = _stress_row(row, folder, bundle, reuse=reuse_stress)
        for case in cases:
            case["sim2sim_stress"] = stressed.get(tuple(case["command"]))
    sprint = None if row.sprint_ankle is None else _sprint_row(row, folder, bundle, log, isaac)
    if sprint is not None:
        print(f"  {row.name} sprint: {sprint_line(sprint)}", flush=True)
    return {
        "name": row.name,
        "task": row.task,
        "checkpoint": row.checkpoint,
        "overrides": list(row.overrides),
        "note": row.note,
        "status": "ok",
        "isaac_lab_episodes_per_command": sweep_doc.get("episodes_per_case"),
        "isaac_lab_num_envs": sweep_doc.get("num_envs"),
        "sim2sim_duration_s": duration_s,
        "stress_set": f"{row.name}/reality_gap/reality_gap.json" if stress else None,
        "cases": cases,
        "sprint": sprint,
    }


def merge_rows(rows: list[Row], results: list[dict[str, Any]], previous: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The table's rows in config order: this run's results, and a previous ``transfer.json``'s entry for
    each row this run did not redo (``--rows``)."""
    done = {entry["name"]: entry for entry in results}
    kept = {entry["name"]: entry for entry in (previous or {}).get("rows", [])}
    return [done.get(row.name) or kept[row.name] for row in rows if row.name in done or row.name in kept]


def main(argv: list[str] | None = None) -> int:
    """Run every row of the config and write ``transfer.json``, ``transfer.md`` and ``transfer.png``."""
    from linkage_lab.io import write_json_atomic, write_text_atomic

    parser = argparse.ArgumentParser(
        prog="python -m linkage_lab_experiments.transfer", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="rows of the table (YAML)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument(
        "--duration", type=finite_float, default=DURATION_S, help="simulated seconds of each sim2sim run"
    )
    parser.add_argument(
        "--rows", nargs="*", default=None, help="only these rows (by name); the others keep their last results"
    )
    parser.add_argument(
        "--reuse-isaac", action="store_true", help="reuse a row's Isaac Lab sweep.json when present (faster reruns)"
    )
    parser.add_argument(
        "--stress",
        action="store_true",
        help="also run each row's reality-gap sweep (every command under the stress set; about 20 min a row)",
    )
    parser.add_argument(
        "--reuse-stress",
        action="store_true",
        help="with --stress, reuse a row's reality_gap/reality_gap.json when present (a rerun after a later failure)",
    )
    args = parser.parse_args(argv)
    all_rows = load_rows(args.config)
    unknown = sorted(set(args.rows or ()) - {r.name for r in all_rows})
    if unknown:
        parser.error(f"unknown rows {', '.join(unknown)}; the config has {', '.join(r.name for r in all_rows)}")
    rows = [r for r in all_rows if args.rows is None or r.name in args.rows]
    if not rows:
        parser.error("--rows names no row")
    args.out.mkdir(parents=True, exist_ok=True)
    previous_file = args.out / "transfer.json"
    previous = json.loads(previous_file.read_text()) if args.rows is not None and previous_file.is_file() else None
    results: list[dict[str, Any]] = []
    for row in rows:
        print(f"[transfer] {row.name}: {row.task} {' '.join(row.overrides)}", flush=True)
        results.append(
            run_row(
                row,
                args.out,
                args.duration,
                isaac=not args.reuse_isaac,
                stress=args.stress,
                reuse_stress=args.reuse_stress,
            )
        )
        # Written after every row: a later row's failure loses none of the rows measured before it.
        doc = {"schema_version": 1, "config": str(args.config), "rows": merge_rows(all_rows, results, previous)}
        write_json_atomic(args.out / "transfer.json", doc)
        write_text_atomic(args.out / "transfer.md", markdown_table(doc))
    plot(doc, args.out / "transfer.png")
    print(markdown_table(doc))
    print(f"[transfer] wrote {args.out}/transfer.json, transfer.md, transfer.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
