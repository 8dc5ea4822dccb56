"""``linkage-lab ship``: make a run's checkpoint the task's shipped policy, with its record and evaluation."""

from __future__ import annotations

import argparse
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``ship`` command."""
    from linkage_lab.cli.evaluate import add_command_cases_argument

    parser = subparsers.add_parser(
        "ship",
        help="copy a run's checkpoint to policies/<task>/ with train.json, eval.json and sweep.json",
        description="Copies the checkpoint to policies/<task>/model.pt and writes train.json (training command, "
        "commit, wall time, iterations, env-steps/s), then evaluates the shipped copy: eval.json (the task's "
        "own commands) and sweep.json (fixed commands, with the acceptance targets), and for a robot with a "
        "closed-chain model the same sweep there (closed_chain_sweep.json: the exported bundle as the robot runs "
        "it). The checkpoint is checked against the task (its run's task, its observation and action sizes) "
        "before anything is written; the new folder is assembled aside and swapped in whole, and the policy it "
        "replaces moves to policies/<task>/previous/. Exit status 3 when a sweep misses its targets (the policy "
        "is shipped all the same). Last, MODEL_CARD.md is generated from those files. Afterwards "
        "--checkpoint pretrained names it in eval, export, sprint and train --resume.",
    )
    parser.add_argument("--task", required=True, help="task id, e.g. LinkageLab-Velocity-Flat-Limit")
    parser.add_argument("--checkpoint", required=True, help="a model_<it>.pt, a run folder, or 'latest'")
    parser.add_argument("--episodes", type=int, default=8, help="episodes per evaluation (default 8)")
    parser.add_argument("--num-envs", type=int, default=8, help="parallel envs per evaluation (default 8)")
    add_command_cases_argument(parser, "the sweep")
    parser.add_argument("--no-eval", action="store_true", help="copy and record only")
    parser.add_argument(
        "--no-closed-chain",
        action="store_true",
        help="skip the acceptance sweep on the robot's closed-chain model (sim2sim --sweep) and the reality-gap sweep, "
        "which ship runs for robots that have one",
    )
    parser.add_argument(
        "--no-reality-gap",
        action="store_true",
        help="skip the reality-gap sweep (every acceptance command on the closed chain under the stress set: the "
        "estimator, 20/40 ms latency, motors +-20 %%, friction 0.5, kicked starts)",
    )
    parser.add_argument(
        "--gap-episodes",
        type=int,
        default=None,
        help="runs per command and condition of the reality-gap sweep (default 2: one from rest, one kicked)",
    )
    parser.add_argument("--device", default=None, help="cpu, cuda:0, ... (default: picked automatically)")
    parser.set_defaults(func=_ship, accepts_overrides=True)


def _ship(args: argparse.Namespace, overrides: list[str]) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.evaluation.policies import read_checkpoint, resolve_checkpoint
    from linkage_lab.evaluation.policy_check import check_checkpoint_sizes, checkpoint_sizes, task_sizes
    from linkage_lab.evaluation.sweep import parse_case
    from linkage_lab.exit_codes import verdict_exit
    from linkage_lab.pretrained import PREVIOUS_DIR, discard_staged, install_policy, stage_policy
    from linkage_lab.runtime import resolve_configs

    try:
        cases = [parse_case(c) for c in args.commands] if args.commands else None
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    if args.gap_episodes is not None and args.gap_episodes < 1:
        raise CliError(f"--gap-episodes must be at least 1, got {args.gap_episodes}")
    env_cfg, agent_cfg = resolve_configs(args.task, overrides, args.device)
    checkpoint = resolve_checkpoint(args.checkpoint, args.task, agent_cfg.experiment_name)
    # The checkpoint is checked against the task before anything under policies/ is written: its run's task,
    # then its actor's observation and action sizes against the task's config.
    state = read_checkpoint(checkpoint, args.task)
    sizes = task_sizes(env_cfg, agent_cfg)
    check_checkpoint_sizes(checkpoint, state, sizes, args.task)
    if args.no_eval and (sizes is None or checkpoint_sizes(state)[0] is None):
        raise CliError(
            f"the sizes of {args.task} or of {checkpoint}'s actor cannot be read without building the env; "
            "ship without --no-eval, so that the evaluation checks the policy before it is shipped"
        )
    staging = stage_policy(args.task, checkpoint, training_record(checkpoint, int(state.get("iter", -1))))
    try:
        passed = None if args.no_eval else _evaluate_staged(args, overrides, checkpoint, staging, cases)
        folder = install_policy(staging, args.task)
    except BaseException:
        discard_staged(staging)
        raise
    print(f"shipped {checkpoint} -> {folder}")
    if (folder / PREVIOUS_DIR).is_dir():
        print(f"the policy it replaced: {folder / PREVIOUS_DIR}")
    _write_model_card(folder)
    if passed is False:
        print("verdict: missed (see the sweeps above); exit status 3")
    return verdict_exit(passed)


def _write_model_card(folder: Path) -> Path | None:
    """Write the shipped folder's ``MODEL_CARD.md`` from the files just shipped; returns its path.

    The card comes last, from what is in the folder; one that cannot be written leaves the policy shipped and says
    why (``None``).
    """
    import sys

    from linkage_lab.export.model_card import ModelCardError, write_model_card

    try:
        card = write_model_card(folder)
    except ModelCardError as exc:
        print(f"model card not written: {exc}", file=sys.stderr)
        return None
    print(f"model card: {card}")
    return card


def _evaluate_staged(
    args: argparse.Namespace, overrides: list[str], checkpoint: Path, staging: Path, cases: list[Any] | None
) -> bool | None:
    """Evaluate the staged ``model.pt`` and add its ``eval.json``, sweeps and curves to ``staging``.

    A checkpoint that does not fit the task is refused here, when its networks are loaded, before
    the staged folder is swapped in. Returns whether every sweep met its targets (``None``: no targets).
    """
    from linkage_lab.evaluation.evaluate import EvalRequest, evaluate
    from linkage_lab.evaluation.sweep import format_table
    from linkage_lab.evaluation.sweep_output import run_sweep
    from linkage_lab.io import write_json_atomic
    from linkage_lab.pretrained import MODEL_FILE, PRETRAINED_DIR, copy_file

    request = EvalRequest(
        task=args.task,
        checkpoint=staging / MODEL_FILE,
        episodes=args.episodes,
        num_envs=args.num_envs,
        overrides=tuple(overrides),
        device=args.device,
        out_dir=PRETRAINED_DIR.parent / "outputs" / "ship" / args.task,
        # These folders are ship's own working copies; the results that matter are copied next to the model.
        force=True,
    )
    eval_dir, report = evaluate(request)
    # The report names the model where it will be shipped, not the staging folder it was read from.
    if isinstance(report.get("policy"), dict):
        report["policy"]["path"] = str((PRETRAINED_DIR / args.task / MODEL_FILE).resolve())
    write_json_atomic(staging / "eval.json", report)
    sweep_dir, sweep = run_sweep(replace(request, out_dir=eval_dir.parent / f"{args.task}-sweep"), cases)
    copy_file(sweep_dir / "sweep.json", staging)
    copy_file(sweep_dir / "sweep.png", staging)
    curves = Path(checkpoint).resolve().parent / "curves"
    for png in sorted(curves.glob("*.png")) if curves.is_dir() else ():
        copy_file(png, staging / "curves")
    print(format_table(sweep))
    verdicts = [sweep["summary"]["passed"]]
    if not args.no_closed_chain:
        bundle_dir = eval_dir.parent / f"{args.task}-bundle"
        verdicts.append(_closed_chain_sweep(request, bundle_dir, staging, cases))
        if (bundle_dir / "metadata.json").is_file():
            # The bundle ships with the policy: `linkage-lab deploy run --bundle policies/<task>/bundle`.
            for file in sorted(p for p in bundle_dir.rglob("*") if p.is_file()):
                copy_file(file, staging / "bundle" / file.parent.relative_to(bundle_dir))
        if not args.no_reality_gap and (bundle_dir / "metadata.json").is_file():
            verdicts.append(_reality_gap(bundle_dir, staging, args.gap_episodes))
    if any(v is False for v in verdicts):
        return False
    return True if any(v is True for v in verdicts) else None


#: The closed-chain sweep's files next to the shipped policy.
CLOSED_CHAIN_SWEEP = "closed_chain_sweep.json"


def _closed_chain_sweep(request: Any, bundle_dir: Path, folder: Path, cases: list[Any] | None) -> bool | None:
    """Export the shipped policy and run its task's acceptance on the robot's closed chain (``sim2sim --sweep``);
    ship the result as ``closed_chain_sweep.json`` / ``.png``. Robots without a closed-chain model are skipped.

    Returns:
        The sweep's verdict (``None``: no closed-chain model, or no targets).
    """
    from linkage_lab.evaluation.sweep import format_table
    from linkage_lab.evaluation.sweep_output import SWEEP_PLOT
    from linkage_lab.export.bundle import export_bundle
    from linkage_lab.io import write_bytes_atomic
    from linkage_lab.robots.registry import get_robot
    from linkage_lab.sim2sim.bundle import load_bundle
    from linkage_lab.sim2sim.sweep import (
        SWEEP_EPISODES,
        describe_case,
        run_closed_chain_sweep,
        write_closed_chain_sweep,
    )

    export_bundle(request.task, request.checkpoint, bundle_dir, list(request.overrides), request.device, force=True)
    bundle = load_bundle(bundle_dir)
    if get_robot(bundle.robot).closed_chain is None:
        print(f"{bundle.robot} has no closed-chain model: no closed-chain sweep")
        return None
    print(f"the same commands on {bundle.robot}'s closed chain (sim2sim, {SWEEP_EPISODES} runs each):", flush=True)
    sweep, reports = run_closed_chain_sweep(
        bundle, cases, episodes=SWEEP_EPISODES, on_case=lambda row: print(describe_case(row), flush=True)
    )
    # ship's working copy with each run's report; its table and plot go next to the model.
    table = write_closed_chain_sweep(bundle_dir.parent / f"{request.task}-closed-chain", sweep, reports)
    write_bytes_atomic(folder / CLOSED_CHAIN_SWEEP, table.read_bytes())
    write_bytes_atomic(folder / CLOSED_CHAIN_SWEEP.replace(".json", ".png"), (table.parent / SWEEP_PLOT).read_bytes())
    print(format_table(sweep))
    return sweep["summary"]["passed"]


def _reality_gap(bundle_dir: Path, folder: Path, episodes: int | None = None) -> bool | None:
    """Run the reality-gap sweep on the exported bundle; ship ``reality_gap.json`` / ``.md`` / ``.png`` beside the
    policy. Returns its verdict (``None``: the robot has no closed chain, or the task no targets)."""
    from linkage_lab.robots.registry import get_robot
    from linkage_lab.sim2sim.bundle import load_bundle
    from linkage_lab.sim2sim.reality_gap import (
        REALITY_GAP_EPISODES,
        format_reality_gap,
        run_reality_gap,
        write_reality_gap,
    )
    from linkage_lab.sim2sim.stress import STRESS_SET
    from linkage_lab.sim2sim.sweep import describe_case

    bundle = load_bundle(bundle_dir)
    if get_robot(bundle.robot).closed_chain is None:
        return None
    episodes = REALITY_GAP_EPISODES if episodes is None else episodes
    print(
        f"reality gap on {bundle.robot}'s closed chain: {len(STRESS_SET)} conditions, {episodes} runs per command",
        flush=True,
    )
    document = run_reality_gap(
        bundle, episodes=episodes, on_row=lambda name, row: print(f"{name:14s}" + describe_case(row), flush=True)
    )
    write_reality_gap(folder, document)
    print(format_reality_gap(document))
    return document["summary"]["passed"]


def training_record(checkpoint: Path, iteration: int) -> dict[str, Any]:
    """How the checkpoint was trained: the run's record, its wall time and throughput, and the commit."""
    import json

    run_dir = Path(checkpoint).resolve().parent
    record_file = run_dir / "training.json"
    record = json.loads(record_file.read_text()) if record_file.is_file() else {}
    overrides = record.get("overrides", [])
    command = ["linkage-lab", "train", "--task", record.get("task", "?")]
    if record.get("num_envs") is not None:
        command += ["--num-envs", str(record["num_envs"])]
    planned = record.get("planned_iterations")
    resumed_from = record.get("resumed_from")
    fine_tuned_from = None
    if resumed_from is not None:
        from linkage_lab.paths import repo_relative

        # A fine-tune: the run started from another run's (or a shipped) checkpoint at that checkpoint's iteration
        # count, and `--max-iterations` adds to it.
        first = (record.get("sessions") or [{}])[0].get("first_iteration")
        fine_tuned_from = {"checkpoint": repo_relative(resumed_from), "iterations": first}
        command += ["--resume", fine_tuned_from["checkpoint"]]
        planned = None if planned is None or first is None else planned - first
    if planned is not None:
        command += ["--max-iterations", str(planned)]
    if record.get("workers") is not None:
        command += ["--workers", str(record["workers"])]
    return {
        "task": record.get("task"),
        "source_run": run_dir.name,
        "source_checkpoint": Path(checkpoint).name,
        "iterations": iteration + 1,
        "training_command": " ".join([*command, *overrides]),
        "fine_tuned_from": fine_tuned_from,
        "num_envs": record.get("num_envs"),
        "seed": record.get("seed"),
        "device": record.get("device"),
        "commit": run_commit(run_dir) or _git_commit(),
        "workers": record.get("workers", 1),
        **_throughput(run_dir, iteration, record.get("sessions")),
    }


def _throughput(run_dir: Path, iteration: int, sessions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Time to ``iteration`` and the mean env-steps/s (learning included), from the run's events and record.

    ``training_time_s`` is rsl-rl's collection + update time summed over the iterations (no env builds,
    no pause between sessions); ``wall_time_s`` sums the record's sessions that reached ``iteration``
    (env builds included, the time between sessions not), or, without a record or for a checkpoint saved
    inside a session, the span of the events up to it.
    """
    from linkage_lab.evaluation.curves import NoEventsError, read_scalars

    try:
        series = read_scalars(run_dir)
    except NoEventsError:
        return {"wall_time_s": None, "training_time_s": None, "env_steps_per_s": None}
    reward = series.get("Train/mean_reward")
    fps = series.get("Perf/total_fps")
    wall = None
    if reward is not None and len(reward.iteration):
        upto = reward.iteration <= iteration
        wall = float(reward.wall_time_s[upto].max()) if upto.any() else None
    session_wall = _session_seconds(sessions or [], iteration)
    parts = [series.get("Perf/collection_time"), series.get("Perf/learning_time")]
    training = None
    if all(part is not None for part in parts):
        training = sum(float(part.value[part.iteration <= iteration].sum()) for part in parts)
    return {
        "wall_time_s": session_wall if session_wall is not None else wall,
        "training_time_s": training,
        "env_steps_per_s": None if fps is None else float(fps.value[fps.iteration <= iteration].mean()),
    }


def _session_seconds(sessions: list[dict[str, Any]], iteration: int) -> float | None:
    """Summed durations of the recorded sessions that started at or before ``iteration`` (s); None without any."""
    from datetime import datetime

    total, counted = 0.0, False
    for session in sessions:
        try:
            start = datetime.fromisoformat(session["started_at"])
            end = datetime.fromisoformat(session["ended_at"])
        except (KeyError, TypeError, ValueError):
            continue
        first, last = int(session.get("first_iteration", 0)), session.get("last_iteration")
        if first <= iteration:
            if last is not None and iteration < int(last):
                return None  # a checkpoint inside a session: only the events know when it came
            total += (end - start).total_seconds()
            counted = True
    return total if counted else None


def run_commit(run_dir: Path) -> str | None:
    """The commit the run was trained at, from the ``git/*.diff`` record rsl-rl writes at its start.

    The record holds ``--- git commit ---``, the hash, then ``--- git status ---`` and ``git status``'s
    text; changes to tracked files (staged or not; untracked files aside, as in the repository's own
    check) mark the commit ``-dirty``. ``None`` when the run has no readable record.
    """
    for diff in sorted((run_dir / "git").glob("*.diff")):
        try:
            text = diff.read_text()
        except OSError:
            continue
        head, _, rest = text.partition("--- git status ---")
        lines = [line.strip() for line in head.replace("--- git commit ---", "").splitlines() if line.strip()]
        if len(lines) == 1 and len(lines[0]) == 40:
            dirty = any(marker in rest for marker in ("Changes to be committed", "Changes not staged for commit"))
            return f"{lines[0]}{'-dirty' if dirty else ''}"
    return None


def _git_commit() -> str | None:
    from linkage_lab.paths import REPO_ROOT

    try:
        head = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return f"{head}{'-dirty' if dirty else ''}"
