"""``linkage-lab plot``: a training run's curves (return, episode length, tracking) as PNGs."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``plot`` command."""
    parser = subparsers.add_parser(
        "plot",
        help="training curves of a run: return, episode length and tracking vs iteration and wall time (PNG)",
        description="Reads the run's TensorBoard events and writes return.png, episode_length.png and "
        "tracking.png into RUN/curves (or --out).",
    )
    parser.add_argument("run", metavar="RUN", help="a run folder (logs/rsl_rl/<experiment>/<run>) or 'latest'")
    parser.add_argument("--task", default=None, help="task id whose newest run 'latest' means")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default RUN/curves, whose PNGs are replaced); PNGs of the same names there need --force",
    )
    parser.add_argument("--force", action="store_true", help="replace return.png, ... already in --out")
    parser.set_defaults(func=_plot)


def _plot(args: argparse.Namespace) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.evaluation.curves import NoEventsError, write_training_curves

    run_dir = _run_dir(args.run, args.task)
    try:
        # RUN/curves is the run's own (training writes it); a folder given with --out may hold the user's files.
        written = write_training_curves(run_dir, args.out, replace=args.out is None or args.force)
    except NoEventsError as exc:
        raise CliError(str(exc)) from exc
    except OSError as exc:
        raise CliError(f"cannot write the curves to {args.out or run_dir / 'curves'}: {exc.strerror or exc}") from exc
    print(f"training curves of {run_dir}:")
    for path in written:
        print(f"  {path}")
    return 0


def _run_dir(spec: str, task: str | None) -> Path:
    """The run folder ``spec`` names: a folder, or ``latest`` (the newest run of ``task``'s experiment)."""
    from linkage_lab.cli.main import CliError

    if spec != "latest":
        if task is not None:
            raise CliError("--task is for RUN 'latest' only")
        path = Path(spec).expanduser()
        if not path.is_dir():
            raise CliError(f"run folder {path} does not exist")
        return path
    if task is None:
        raise CliError("RUN 'latest' needs --task T (whose newest run to plot)")
    from linkage_lab.runs import experiment_dir, list_runs
    from linkage_lab.runtime import OverrideError, resolve_configs
    from linkage_lab.tasks.registry import UnknownTaskError

    try:
        _, agent_cfg = resolve_configs(task)
    except (UnknownTaskError, OverrideError) as exc:
        raise CliError(str(exc)) from exc
    runs = [run for run in list_runs(agent_cfg.experiment_name) if any(run.glob("events.out.tfevents.*"))]
    if not runs:
        where = experiment_dir(agent_cfg.experiment_name)
        raise CliError(f"no run with TensorBoard events under {where}; train first: linkage-lab train --task {task}")
    return runs[-1]
