"""``linkage-lab train``: PPO training of a project task (rsl-rl), on the device there is; resumable."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from linkage_lab.training import TrainResult

from linkage_lab.exit_codes import INTERRUPTED, TERMINATED


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``train`` command."""
    parser = subparsers.add_parser(
        "train",
        help="train a task with rsl-rl PPO (GPU if present, else CPU); Ctrl-C saves, --resume continues",
        description="Trailing key=value tokens are hydra overrides, e.g. env.scene.num_envs=32 "
        "agent.max_iterations=5 physics=newton_mjwarp. Ctrl-C saves the last finished iteration and "
        "exits with status 130, SIGTERM (timeout, docker stop, job schedulers) the same with status 143; "
        "--resume continues the run, its TensorBoard curves cut back to the checkpoint it continues from.",
    )
    parser.add_argument("--task", required=True, help="task id, e.g. LinkageLab-Velocity-Flat-Limit")
    parser.add_argument("--device", default=None, help="cpu, cuda:0, ... (default: picked automatically)")
    parser.add_argument("--num-envs", type=int, default=None, help="number of parallel envs")
    parser.add_argument(
        "--max-iterations",
        type=int,
        default=None,
        help="PPO iterations (with --resume: this many more; default: finish the run's planned iterations)",
    )
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument(
        "--resume",
        metavar="RUN",
        default=None,
        help="continue a run: 'latest', a run folder name of the task's experiment, a run folder, or a "
        "checkpoint file (one outside the experiment's runs, or not a run's newest, starts a new run from it)",
    )
    parser.add_argument(
        "--checkpoint",
        metavar="model_N.pt",
        default=None,
        help="with --resume RUN: the checkpoint of the run to continue from (default: its newest)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="simulation processes the envs are split over (default on a CPU: one per core, at least 32 envs "
        "each, or LINKAGE_LAB_WORKERS; 1 on a GPU; a continued run keeps its count). --workers 1 leaves the "
        "other cores to another run",
    )
    parser.set_defaults(func=_train, accepts_overrides=True)


def _train(args: argparse.Namespace, overrides: list[str]) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.runtime import OverrideError
    from linkage_lab.tasks.registry import UnknownTaskError
    from linkage_lab.training import (
        CheckpointError,
        ResumeError,
        RunBusyError,
        TrainingConfigError,
        TrainingInterrupted,
        train,
    )
    from linkage_lab.training.loop import stop_signum, terminate_raises

    try:
        with terminate_raises():  # SIGTERM stops the run as Ctrl-C does: the last finished iteration is saved
            result = train(
                args.task,
                overrides,
                args.device,
                args.num_envs,
                args.max_iterations,
                args.seed,
                resume=args.resume,
                checkpoint=args.checkpoint,
                workers=args.workers,
            )
    except (UnknownTaskError, OverrideError, TrainingConfigError, ResumeError, CheckpointError, RunBusyError) as exc:
        raise CliError(str(exc)) from exc
    except TrainingInterrupted as stop:
        _report_interrupt(stop.result, args.task, signal.Signals(stop.signum).name)
        return TERMINATED if stop.signum == signal.SIGTERM else INTERRUPTED
    except KeyboardInterrupt as stop:  # before the run existed: nothing to save
        signum = stop_signum(stop)
        print(f"training stopped ({signal.Signals(signum).name}) before it started: nothing saved", file=sys.stderr)
        return TERMINATED if signum == signal.SIGTERM else INTERRUPTED
    print(
        f"training finished in {result.wall_time_s:.0f} s (iterations {result.first_iteration}-{result.last_iteration})"
    )
    print(f"logs (TensorBoard): {result.log_dir}")
    print(f"checkpoint:         {result.checkpoint}")
    return 0


def _report_interrupt(result: TrainResult, task: str, signal_name: str = "SIGINT") -> None:
    """Say where the interrupted run is and how to continue it (on stderr: it is not a normal end)."""
    lines = [f"training interrupted ({signal_name}) after {result.wall_time_s:.0f} s"]
    if result.checkpoint is None:
        lines.append(
            "no iteration had finished: nothing was saved"
            + ("" if result.log_dir is not None else " and the empty run folder was removed")
        )
    else:
        if result.last_iteration is None:
            lines.append(f"no new iteration had finished; the run's newest checkpoint: {result.checkpoint}")
        else:
            lines.append(f"saved iteration {result.last_iteration}: {result.checkpoint}")
        lines.append(f"run: {result.log_dir}")
        lines.append(f"continue with: linkage-lab train --task {task} --resume {result.log_dir.name}")
    print("\n".join(lines), file=sys.stderr, flush=True)
