"""``linkage-lab train``: PPO training of a project task (rsl-rl), on the device there is."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``train`` command."""
    parser = subparsers.add_parser(
        "train",
        help="train a task with rsl-rl PPO (GPU if present, else CPU)",
        description="Trailing key=value tokens are hydra overrides, e.g. env.scene.num_envs=32 "
        "agent.max_iterations=5 physics=newton_mjwarp.",
    )
    parser.add_argument("--task", required=True, help="task id, e.g. LinkageLab-Velocity-Flat-Limit")
    parser.add_argument("--device", default=None, help="cpu, cuda:0, ... (default: picked automatically)")
    parser.add_argument("--num-envs", type=int, default=None, help="number of parallel envs")
    parser.add_argument("--max-iterations", type=int, default=None, help="PPO iterations")
    parser.add_argument("--seed", type=int, default=None)
    parser.set_defaults(func=_train, accepts_overrides=True)


def _train(args: argparse.Namespace, overrides: list[str]) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.runtime import OverrideError
    from linkage_lab.tasks.registry import UnknownTaskError
    from linkage_lab.training import train

    try:
        result = train(args.task, overrides, args.device, args.num_envs, args.max_iterations, args.seed)
    except (UnknownTaskError, OverrideError) as exc:
        raise CliError(str(exc)) from exc
    print(f"training finished in {result.wall_time_s:.0f} s")
    print(f"logs (TensorBoard): {result.log_dir}")
    print(f"checkpoint:         {result.checkpoint}")
    return 0
