"""A shipped policy's ``MODEL_CARD.md``, generated from the records beside it (no simulator, no torch).

The card is read from the files ``linkage-lab ship`` writes into ``policies/<task>/``: ``train.json`` (how it was
trained), ``eval.json`` (the task's own commands), ``sweep.json`` and ``closed_chain_sweep.json`` (the acceptance in
Isaac Lab and on the closed chain), ``reality_gap.json`` (the closed chain under the stress set) and the bundle's
``metadata.json`` (what the actor observes). Each is optional: a missing one leaves its section saying so. The known
misses come from the task's acceptance (:func:`~linkage_lab.evaluation.sweep.task_acceptance`), where each is written
once with its reason.

Regenerate a card without the CLI: ``python -m linkage_lab.export.model_card policies/<task>``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from linkage_lab.evaluation.sweep import task_acceptance
from linkage_lab.io import write_text_atomic
from linkage_lab.tasks.observability import ROBOT_SOURCES

MODEL_CARD_FILE = "MODEL_CARD.md"
#: The records a card is made from, by role, as ``linkage-lab ship`` names them in ``policies/<task>/``.
RECORD_FILES = {
    "train": "train.json",
    "eval": "eval.json",
    "sweep": "sweep.json",
    "closed_chain_sweep": "closed_chain_sweep.json",
    "reality_gap": "reality_gap.json",
    "metadata": "bundle/metadata.json",
}
#: A run folder's name (``logs/rsl_rl/<experiment>/<run>``): the time its training started.
_RUN_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})-(\d{2})(?:_.+)?$")


class ModelCardError(ValueError):
    """A record of the policy folder that cannot be read; the message names the file."""


def read_records(policy_dir: Path) -> dict[str, dict[str, Any]]:
    """The policy folder's records that exist, by role (:data:`RECORD_FILES`).

    Raises:
        ModelCardError: A record is not valid JSON or not a JSON object, or the folder holds none of them.
    """
    policy_dir = Path(policy_dir)
    records: dict[str, dict[str, Any]] = {}
    for role, name in RECORD_FILES.items():
        path = policy_dir / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ModelCardError(f"{path}: cannot be read as JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise ModelCardError(f"{path}: expected a JSON object, got {type(data).__name__}")
        records[role] = data
    if not records:
        raise ModelCardError(f"{policy_dir}: none of {', '.join(RECORD_FILES.values())} is there")
    return records


def known_misses(task: str) -> tuple[Any, ...]:
    """The task's known misses (:class:`~linkage_lab.evaluation.sweep.KnownMiss`), each with its reason."""

    return tuple(task_acceptance(task).known_misses)


def write_model_card(policy_dir: Path, misses: Sequence[Any] | None = None) -> Path:
    """Write ``policy_dir/MODEL_CARD.md`` (atomically: a temp file, then a rename) from the folder's records.

    Args:
        policy_dir: A shipped policy's folder (``policies/<task>/``).
        misses: The known misses to explain (objects with ``simulator``, ``case``, ``check`` and ``reason``);
            ``None`` reads them from the task's acceptance.

    Returns:
        The card's path.

    Raises:
        ModelCardError: A record cannot be read or lacks a field the card needs (the message names the file).
    """
    policy_dir = Path(policy_dir)
    records = read_records(policy_dir)
    task = _task(records, policy_dir)
    misses = known_misses(task) if misses is None else tuple(misses)
    return write_text_atomic(policy_dir / MODEL_CARD_FILE, model_card(records, task, misses, policy_dir))


def model_card(records: dict[str, dict[str, Any]], task: str, misses: Sequence[Any], policy_dir: Path) -> str:
    """The card's Markdown from the records (:func:`read_records`) and the task's known misses."""
    sections = [
        (_observation_section, "metadata"),
        (_training_section, "train"),
        (_task_commands_section, "eval"),
        (_acceptance_section, "sweep"),
        (_acceptance_section, "closed_chain_sweep"),
        (_reality_gap_section, "reality_gap"),
    ]
    present = ", ".join(f"`{RECORD_FILES[role]}`" for role in RECORD_FILES if role in records)
    lines = [
        f"# Model card: {task}",
        "",
        f"Generated from {present} by `python -m linkage_lab.export.model_card policies/{task}` (and by "
        "`linkage-lab ship`); regenerate it rather than edit it.",
    ]
    for section, role in sections:
        try:
            lines += ["", *section(records.get(role), role)]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelCardError(
                f"{policy_dir / RECORD_FILES[role]}: missing or malformed field ({type(exc).__name__}: {exc})"
            ) from exc
    lines += ["", *_known_gaps_section(records, misses)]
    return "\n".join(lines) + "\n"


def _task(records: dict[str, dict[str, Any]], policy_dir: Path) -> str:
    for role in ("train", "metadata", "sweep", "eval", "closed_chain_sweep", "reality_gap"):
        task = records.get(role, {}).get("task")
        if task:
            return str(task)
    return policy_dir.name


def _observation_section(metadata: dict[str, Any] | None, role: str) -> list[str]:
    lines = ["## What it observes", ""]
    if metadata is None:
        return lines + [f"Not recorded: `{RECORD_FILES[role]}` is not in the folder (`linkage-lab ship` exports it)."]

    period = float(metadata["control_period_s"])
    lines += [
        f"Robot `{metadata.get('robot')}`; every {period:g} s ({1.0 / period:g} Hz) the actor reads "
        f"{metadata['observation_size']} numbers (`bundle/policy.onnx` input `obs`, normaliser inside the graph):",
        "",
        "| term | dims | indices | function | source on the robot |",
        "|---|---|---|---|---|",
    ]
    for term in metadata["observation_layout"]:
        function = str(term.get("function", ""))
        short = function.rpartition(".")[2]
        start, size = int(term["start"]), int(term["size"])
        history = f" × {term['history_length']} steps" if term.get("history_length") else ""
        source = ROBOT_SOURCES.get(short, "not named in `tasks/observability.py`")
        lines.append(f"| `{term['name']}` | {size}{history} | {start}–{start + size - 1} | `{short}` | {source} |")
    joints = metadata.get("joint_names") or []
    lines += ["", f"It outputs {len(joints)} actions, one per joint: {metadata.get('action_target', '')}."]
    return lines


def _training_section(train: dict[str, Any] | None, role: str) -> list[str]:
    lines = ["## How it was trained", ""]
    if train is None:
        return lines + [f"Not recorded: `{RECORD_FILES[role]}` is not in the folder."]
    run = str(train.get("source_run") or "")
    started = _RUN_NAME.match(run)
    when = f"{started[1]} {started[2]}:{started[3]}:{started[4]}" if started else "not recorded"
    lines += [
        f"- command: `{train.get('training_command')}`",
        *(["- the training commands, in order:"] if train.get("training_commands") else []),
        *[f"  - {command}" for command in train.get("training_commands") or []],
        f"- commit: `{train.get('commit')}`",
        f"- run: `{run}` (started {when}), checkpoint `{train.get('source_checkpoint')}`: "
        f"{train.get('iterations')} iterations; the run's wall time {_seconds(train.get('wall_time_s'))}, "
        f"{_number(train.get('env_steps_per_s'), '.0f')} env-steps/s",
        f"- envs: {train.get('num_envs')}, workers: {train.get('workers')}, device: {train.get('device')}, "
        f"seed: {train.get('seed')}",
    ]
    fine_tuned = train.get("fine_tuned_from")
    if isinstance(fine_tuned, dict):
        lines.append("- fine-tuned from: " + "; ".join(f"{key}: {value}" for key, value in fine_tuned.items()))
    elif fine_tuned:
        lines.append(f"- fine-tuned from: {fine_tuned}")
    return lines


def _task_commands_section(report: dict[str, Any] | None, role: str) -> list[str]:
    lines = ["## On the task's own commands (Isaac Lab)", ""]
    if report is None:
        return lines + [f"Not measured: `{RECORD_FILES[role]}` is not in the folder."]
    tracking = report.get("tracking") or {}
    stops = report.get("joint_stops") or {}
    flagged = [joint["name"] for joint in stops.get("joints", []) if joint.get("flagged")]
    return lines + [
        f"`{RECORD_FILES[role]}`: {report['episodes']} episodes on {report.get('num_envs')} envs, the task's random "
        f"commands and pushes: {report['falls']} falls, lin-vel RMS {_number(tracking.get('lin_vel_xy_rms_mps'))} "
        f"m/s, yaw-rate RMS {_number(tracking.get('yaw_rate_rms_radps'))} rad/s; joints on a stop more than the "
        f"flag share: {', '.join(flagged) or 'none'}."
    ]


_ACCEPTANCE_TITLES = {
    "sweep": ("## Acceptance in Isaac Lab", "isaac_lab"),
    "closed_chain_sweep": ("## Acceptance on the closed chain (sim2sim)", "closed_chain"),
}


def _acceptance_section(sweep: dict[str, Any] | None, role: str) -> list[str]:
    title, _ = _ACCEPTANCE_TITLES[role]
    lines = [title, ""]
    if sweep is None:
        return lines + [f"Not measured: `{RECORD_FILES[role]}` is not in the folder."]
    targets = {key: value for key, value in (sweep.get("targets") or {}).items() if value is not None}
    verdict = sweep["summary"]["passed"]
    lines += [
        f"`{RECORD_FILES[role]}`: {sweep.get('episodes_per_case')} episodes per command on {sweep.get('num_envs')} "
        f"env(s){_duration(sweep.get('duration_s'))}; targets "
        f"{', '.join(f'{key} {value:g}' for key, value in targets.items()) or 'none'}. Verdict: "
        + ("every target met." if verdict else "no targets." if verdict is None else "**missed**."),
        "",
        "| command (m/s, rad/s) | mean speed (m/s) | mean yaw rate (rad/s) | check | value | limit | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for case in sweep["cases"]:
        command = case["command"]
        label = f"{command['lin_vel_x_mps']:+.2f}, {command['ang_vel_z_radps']:+.2f}"
        for key, check in case["checks"].items():
            bound = "≥" if check.get("kind") == "at least" else "≤"
            speed, yaw_rate = _number(case.get("mean_forward_speed_mps")), _number(case.get("mean_yaw_rate_radps"))
            lines.append(
                f"| {label} | {speed} | {yaw_rate} | {key} | {_number(check['value'])} | "
                f"{bound} {_number(check['limit'])} | {'met' if check['ok'] else '**missed**'} |"
            )
    return lines


def _reality_gap_section(document: dict[str, Any] | None, role: str) -> list[str]:
    lines = ["## Reality gap (closed chain under the stress set)", ""]
    if document is None:
        return lines + [f"Not measured: `{RECORD_FILES[role]}` is not in the folder."]
    summary = document["summary"]
    rows = document["rows"]
    lines += [
        f"`{RECORD_FILES[role]}`: the acceptance commands under each condition, {document.get('episodes_per_case')} "
        f"run(s) each, base velocity from {document.get('base_velocity')}: {summary['runs']} runs, "
        f"{summary['falls']} falls, {summary['failed_rows']} of {len(rows)} rows miss a target "
        "(table: `reality_gap.md`).",
        "",
        "| condition | what | runs | falls | rows missed |",
        "|---|---|---|---|---|",
    ]
    for condition in document["conditions"]:
        own = [row for row in rows if row["condition"] == condition["name"]]
        missed = sum(1 for row in own if not row["passed"])
        falls = sum(int(row["falls"] or 0) for row in own)
        runs = sum(int(row["runs"] or 0) for row in own)
        lines.append(
            f"| {condition['name']} | {condition.get('description', '')} | {runs} | {falls} | {missed} of {len(own)} |"
        )
    return lines


def _known_gaps_section(records: dict[str, dict[str, Any]], misses: Sequence[Any]) -> list[str]:
    lines = ["## Known gaps", ""]
    # Each reason once, numbered, in the acceptance's order; a missed check points at the reason that covers it.
    reasons = list(dict.fromkeys(miss.reason for miss in misses))
    failed: list[str] = []
    for role, (title, simulator) in _ACCEPTANCE_TITLES.items():
        sweep = records.get(role)
        if sweep is None:
            continue
        known = {(miss.case, miss.check): miss.reason for miss in misses if miss.simulator == simulator}
        where = title.removeprefix("## Acceptance ")
        for case in sweep["cases"]:
            command = case["command"]
            name = f"vx{command['lin_vel_x_mps']:+.2f}_wz{command['ang_vel_z_radps']:+.2f}"
            for key, check in case["checks"].items():
                if check["ok"]:
                    continue
                reason = known.get((name, key))
                note = "not a recorded known miss" if reason is None else f"known gap {reasons.index(reason) + 1}"
                value, limit = _number(check["value"]), _number(check["limit"])
                failed.append(f"- {where}, `{name}`: {key} {value} against {limit} ({note})")
    gap = records.get("reality_gap")
    if gap is not None and not gap["summary"].get("passed", True):
        falls: dict[str, int] = {}
        for row in gap["rows"]:
            if row.get("falls"):
                falls[row["condition"]] = falls.get(row["condition"], 0) + int(row["falls"])
        under = ", ".join(f"{condition} ({count})" for condition, count in falls.items()) or "none"
        missed = f"{gap['summary']['failed_rows']} of {len(gap['rows'])} rows"
        failed.append(f"- reality gap: {missed} miss a target; falls under {under}")
    lines += ["Missed checks, read from the sweeps:", "", *(failed or ["- none"])]
    if reasons:
        lines += ["", "`known_gaps`, each recorded once with its reason in the task's acceptance:", ""]
        lines += [f"{number}. {reason}" for number, reason in enumerate(reasons, start=1)]
    return lines


def _number(value: Any, spec: str = ".3g") -> str:
    """A figure as people read it (three significant digits by default; ``None`` as ``–``)."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {value!r}")
    return str(value) if isinstance(value, int) else format(value, spec)


def _duration(value: Any) -> str:
    return "" if value is None else f", {float(value):g} s per run"


def _seconds(value: Any) -> str:
    if value is None:
        return "not recorded"
    return f"{float(value):,.0f} s ({float(value) / 60.0:.0f} min)"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m linkage_lab.export.model_card POLICY_DIR [POLICY_DIR ...]``: (re)write each folder's card.

    Returns:
        0 when every card was written, 2 when a folder's records cannot be read (the error names the file).
    """
    folders = list(sys.argv[1:] if argv is None else argv)
    if not folders or any(arg in ("-h", "--help") for arg in folders):
        print("usage: python -m linkage_lab.export.model_card POLICY_DIR [POLICY_DIR ...]", file=sys.stderr)
        return 0 if folders else 2
    for folder in folders:
        try:
            print(write_model_card(Path(folder)))
        except ModelCardError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
